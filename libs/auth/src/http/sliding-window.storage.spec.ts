import { ThrottlerStorageService } from '@nestjs/throttler';
import { SlidingWindowStorage, type ThrottlerRecord } from './sliding-window.storage';

describe('SlidingWindowStorage', () => {
  beforeEach(() => {
    jest.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  /** Both storages fed the same requests at the same clock; the answers side by side. */
  async function compare(
    steps: readonly { readonly advanceMs: number; readonly key: string }[],
    limit: number,
    ttl: number,
    blockDuration: number,
  ): Promise<void> {
    let blocked = 0;
    const library = new ThrottlerStorageService();
    const ours = new SlidingWindowStorage();
    try {
      for (const [i, { advanceMs, key }] of steps.entries()) {
        jest.advanceTimersByTime(advanceMs);
        const expected = await library.increment(key, ttl, limit, blockDuration, 'default');
        const actual: ThrottlerRecord = await ours.increment(key, ttl, limit, blockDuration, 'default');
        // timeToBlockExpire means something only while blocked (the guard reads it for Retry-After).
        const shown = (r: ThrottlerRecord) => ({
          step: i,
          ...r,
          timeToBlockExpire: r.isBlocked ? r.timeToBlockExpire : 0,
        });
        expect(shown(actual)).toEqual(shown(expected));
        if (expected.isBlocked) blocked++;
      }
      expect(blocked).toBeGreaterThan(0);
    } finally {
      library.onApplicationShutdown();
    }
  }

  /** A deterministic mix of bursts and pauses over two keys. */
  function traffic(length: number, seed: number): { advanceMs: number; key: string }[] {
    let x = seed;
    const next = () => (x = (x * 1_103_515_245 + 12_345) % 2 ** 31);
    return Array.from({ length }, () => {
      const r = next() % 100;
      return { advanceMs: r < 70 ? r % 7 : r < 95 ? 150 + (r % 5) * 40 : 1_100, key: next() % 4 === 0 ? 'b' : 'a' };
    });
  }

  it('answers as the library’s storage does, blocking for the window once over the limit', async () => {
    await compare(traffic(2_000, 7), 5, 1_000, 1_000);
    await compare(traffic(2_000, 11), 20, 3_000, 3_000);
  });

  it('answers as the library’s storage does without a block duration', async () => {
    await compare(traffic(2_000, 13), 5, 1_000, 0);
  });

  it('keeps its queues short and forgets idle keys', () => {
    const storage = new SlidingWindowStorage(10_000);
    for (let i = 0; i < 10_000; i++) {
      expect(storage.hit('a', 1_000, 1_000_000, 1_000, 'default').totalHits).toBe(Math.min(i + 1, 100));
      jest.advanceTimersByTime(10);
    }
    const budgets = (storage as unknown as { budgets: Map<string, { hits: number[] }> }).budgets;
    expect(budgets.get('default\0a')!.hits.length).toBeLessThanOrEqual(300);
    jest.advanceTimersByTime(20_000);
    storage.hit('b', 1_000, 10, 1_000, 'default');
    expect([...budgets.keys()]).toEqual(['default\0b']);
  });
});
