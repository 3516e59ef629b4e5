import {
  autoDisableCheckMs,
  failingTooLong,
  isSuccessfulAttempt,
  parseInstant,
  percentile,
  sinceProblem,
  successRate,
} from './endpoint-health';

describe('endpoint health rules', () => {
  it('judges an endpoint failing too long when its failed attempts span WEBHOOK_DISABLE_AFTER, whatever the time is now', () => {
    const day = 86_400_000;
    const streak = (since: string, lastFailureAt: string) => ({ since, lastFailureAt });
    expect(failingTooLong(streak('2026-11-17T10:00:00.000Z', '2026-11-22T10:00:00.000Z'), 5 * day)).toBe(true);
    expect(failingTooLong(streak('2026-11-17T10:00:00.000Z', '2026-11-22T09:59:59.999Z'), 5 * day)).toBe(false);
    // One failure long ago and nothing since: silence is not failing.
    expect(failingTooLong(streak('2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z'), 5 * day)).toBe(false);
    expect(failingTooLong(streak('2026-11-22T10:00:00.000Z', '2026-11-22T10:00:02.000Z'), 2_000)).toBe(true);
  });

  it('checks every tenth of WEBHOOK_DISABLE_AFTER, at least every minute and at most every 100 ms', () => {
    expect([autoDisableCheckMs(5 * 86_400_000), autoDisableCheckMs(2_000), autoDisableCheckMs(50)]).toEqual([
      60_000, 200, 100,
    ]);
  });

  it('counts only a 2xx answer as a successful attempt', () => {
    expect([200, 204, 299].map(isSuccessfulAttempt)).toEqual([true, true, true]);
    expect([null, 199, 300, 302, 404, 410, 429, 500].map(isSuccessfulAttempt)).toEqual(Array(8).fill(false));
  });

  it('takes nearest-rank percentiles of sorted durations, null for none', () => {
    const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
    expect([percentile(hundred, 50), percentile(hundred, 99), percentile(hundred, 100)]).toEqual([50, 99, 100]);
    expect([percentile([7], 50), percentile([7], 99)]).toEqual([7, 7]);
    expect([percentile([10, 20, 30], 50), percentile([10, 20, 30], 99)]).toEqual([20, 30]);
    expect(percentile([], 50)).toBeNull();
  });

  it('rates delivered out of finished deliveries; null when none finished', () => {
    expect(successRate({ delivered: 3, failed: 1 })).toBe(0.75);
    expect(successRate({ delivered: 0, failed: 2 })).toBe(0);
    expect(successRate({ delivered: 0, failed: 0 })).toBeNull();
  });

  it('reads since as an ISO 8601 instant with its offset, and refuses anything else', () => {
    expect(parseInstant('2026-11-22T10:00:00.000Z')?.toISOString()).toBe('2026-11-22T10:00:00.000Z');
    expect(parseInstant('2026-11-22T11:30+01:00')?.toISOString()).toBe('2026-11-22T10:30:00.000Z');
    expect(parseInstant('2026-11-22T10:00:00.123456Z')?.toISOString()).toBe('2026-11-22T10:00:00.123Z');
    for (const bad of [
      '2026-11-22',
      '2026-11-22T10:00:00',
      '2026-02-30T10:00:00Z',
      '2026-11-22T24:00:00Z',
      'yesterday',
      '',
      1764000000,
      null,
    ]) {
      expect([bad, parseInstant(bad)]).toEqual([bad, null]);
    }
    expect(sinceProblem('2026-11-22')).toMatch(/^since must be an ISO 8601 date and time/);
    expect(sinceProblem('2026-11-22T10:00:00Z')).toBeNull();
  });
});
