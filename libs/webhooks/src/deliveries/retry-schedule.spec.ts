import { parseRetryAfter, RETRY_AFTER_CAP_MS, retryDelay } from './retry-schedule';

describe('retry schedule', () => {
  const delays = [10_000, 60_000, 300_000];

  it('follows the configured delays with ±20 % jitter', () => {
    expect(retryDelay(1, delays, null, () => 0)).toBe(8_000);
    expect(retryDelay(1, delays, null, () => 0.5)).toBe(10_000);
    expect(retryDelay(2, delays, null, () => 0.999999)).toBe(72_000);
    expect(retryDelay(3, delays, null, () => 0.5)).toBe(300_000);
  });

  it('is exhausted after the last delay', () => {
    expect(retryDelay(4, delays)).toBeNull();
    expect(retryDelay(0, delays)).toBeNull();
  });

  it('waits at least Retry-After, up to the cap', () => {
    expect(retryDelay(1, delays, 30_000, () => 0.5)).toBe(30_000);
    expect(retryDelay(1, delays, 1_000, () => 0.5)).toBe(10_000);
    expect(retryDelay(1, delays, 10 * RETRY_AFTER_CAP_MS, () => 0.5)).toBe(RETRY_AFTER_CAP_MS);
  });

  it('parses Retry-After seconds and HTTP dates', () => {
    const now = new Date('2026-11-22T10:00:00.000Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Sun, 22 Nov 2026 10:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Sun, 22 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(undefined, now)).toBeNull();
  });
});
