import { filterMatchableInMemory, matchesFilter, RecentAppends } from './recent-appends';
import type { SerializedEvent } from './sqlite-writer';

const ev = (n: number, size = 2): SerializedEvent => ({
  id: `id-${n}`,
  type: 't.E',
  data: JSON.stringify({ n }).padEnd(size, ' '),
  metadata: '{}',
});

/** Adds `count` single-event appends at positions from..from+count-1, revisions equal to positions. */
function fill(recent: RecentAppends, from: number, count: number, size?: number): void {
  for (let p = from; p < from + count; p++) recent.add('s', [ev(p, size)], BigInt(p), BigInt(p), 1_000);
}

const positions = (events: ReturnType<RecentAppends['after']>) => events?.map((e) => Number(e.position)) ?? null;

describe('RecentAppends', () => {
  it('answers everything after a position it holds, oldest first, up to the limit', () => {
    const recent = new RecentAppends(16, 1 << 20);
    recent.add('a', [ev(1), ev(2), ev(3)], 11n, 0n, 5_000);
    recent.add('b', [ev(4)], 14n, 7n, 6_000);
    expect(positions(recent.after(10n, 100))).toEqual([11, 12, 13, 14]);
    expect(positions(recent.after(12n, 100))).toEqual([13, 14]);
    expect(positions(recent.after(10n, 2))).toEqual([11, 12]);
    const [first, , third, fourth] = recent.after(10n, 100)!;
    expect(first).toEqual({ position: 11n, streamId: 'a', revision: 0n, event: ev(1), created: 5_000 });
    expect(third.revision).toBe(2n);
    expect(fourth).toEqual({ position: 14n, streamId: 'b', revision: 7n, event: ev(4), created: 6_000 });
  });

  it('cannot answer before its oldest position, nor at or past its newest', () => {
    const recent = new RecentAppends(16, 1 << 20);
    expect(recent.after(0n, 10)).toBeNull();
    fill(recent, 5, 3);
    expect(recent.after(3n, 10)).toBeNull();
    expect(recent.after(7n, 10)).toBeNull();
    expect(recent.after(9n, 10)).toBeNull();
    expect(recent.isHead(7n)).toBe(true);
    expect(recent.isHead(6n)).toBe(false);
  });

  it('keeps the newest events when full, each in its own slot', () => {
    const recent = new RecentAppends(8, 1 << 20);
    fill(recent, 1, 21);
    expect(recent.after(12n, 100)).toBeNull();
    expect(positions(recent.after(13n, 100))).toEqual([14, 15, 16, 17, 18, 19, 20, 21]);
    expect(recent.after(13n, 100)!.map((e) => e.event.id)).toEqual(
      [14, 15, 16, 17, 18, 19, 20, 21].map((n) => `id-${n}`),
    );
  });

  it('keeps no more data than its byte bound, but always the newest event', () => {
    const recent = new RecentAppends(100, 1_000);
    fill(recent, 1, 10, 298); // 300 characters each
    expect(positions(recent.after(7n, 100))).toEqual([8, 9, 10]);
    expect(recent.after(6n, 100)).toBeNull();
    recent.add('s', [ev(11, 5_000)], 11n, 11n, 1);
    expect(positions(recent.after(10n, 100))).toEqual([11]);
    expect(recent.after(9n, 100)).toBeNull();
  });

  it('starts a new run at a gap: what lies before it is not known', () => {
    const recent = new RecentAppends(16, 1 << 20);
    fill(recent, 1, 4);
    // Positions 5 and 6 were committed by someone else.
    fill(recent, 7, 2);
    expect(recent.after(4n, 100)).toBeNull();
    expect(recent.after(2n, 100)).toBeNull();
    expect(positions(recent.after(6n, 100))).toEqual([7, 8]);
    expect(recent.isHead(4n)).toBe(false);
  });

  it('lets go of what every reader has taken, and still knows where its run ends', () => {
    const recent = new RecentAppends(16, 1 << 20);
    recent.release(10n);
    expect(recent.after(0n, 100)).toBeNull();
    fill(recent, 1, 4);
    recent.release(2n);
    expect(positions(recent.after(2n, 100))).toEqual([3, 4]);
    expect(recent.after(1n, 100)).toBeNull();
    recent.release(100n);
    expect(recent.after(3n, 100)).toBeNull();
    expect(recent.isHead(4n)).toBe(true);
    // The next commit continues the run; one after a gap starts a new run.
    fill(recent, 5, 1);
    expect(positions(recent.after(4n, 100))).toEqual([5]);
    recent.release(5n);
    fill(recent, 7, 1);
    expect(recent.after(5n, 100)).toBeNull();
    expect(positions(recent.after(6n, 100))).toEqual([7]);
  });

  it('holds nothing after a clear', () => {
    const recent = new RecentAppends(16, 1 << 20);
    fill(recent, 1, 4);
    recent.clear();
    expect(recent.after(2n, 100)).toBeNull();
    expect(recent.isHead(4n)).toBe(false);
  });

  it('holds no event whose name SQLite would store differently (a lone surrogate)', () => {
    const recent = new RecentAppends(16, 1 << 20);
    fill(recent, 1, 2);
    recent.add('s\uD800', [ev(3)], 3n, 0n, 1);
    expect(recent.after(2n, 100)).toBeNull();
    recent.add('s', [{ ...ev(4), type: 't.\uDC00' }], 4n, 0n, 1);
    expect(recent.after(3n, 100)).toBeNull();
    recent.add('s\u{1F600}', [ev(5)], 5n, 0n, 1);
    expect(positions(recent.after(4n, 100))).toEqual([5]);
  });
});

describe('the subscription filter in memory', () => {
  it('matches type or stream-name prefixes as the SQL filter does', () => {
    expect(matchesFilter(undefined, 'x', 'y')).toBe(true);
    expect(matchesFilter({ eventTypePrefixes: [] }, 'x', 'y')).toBe(true);
    expect(matchesFilter({ eventTypePrefixes: ['Order', 'Ent'] }, 'EntityCreated', 'orders-1')).toBe(true);
    expect(matchesFilter({ eventTypePrefixes: ['Order'] }, 'order.Created', 'Order-1')).toBe(false);
    expect(matchesFilter({ streamNamePrefixes: ['Order'] }, 'x', 'Order-1')).toBe(true);
    expect(matchesFilter({ streamNamePrefixes: ['Order-12'] }, 'x', 'Order-1')).toBe(false);
  });

  it('is left to SQL for prefixes whose characters SQLite counts differently', () => {
    expect(filterMatchableInMemory(undefined)).toBe(true);
    expect(filterMatchableInMemory({ eventTypePrefixes: ['Ordér', 'x'] })).toBe(true);
    expect(filterMatchableInMemory({ streamNamePrefixes: ['x', 'emoji-\u{1F600}'] })).toBe(false);
  });
});
