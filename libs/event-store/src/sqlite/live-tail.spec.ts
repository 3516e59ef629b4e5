import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { EventStoreUnavailableError, WrongExpectedVersionError } from '../errors';
import type { EventData, EventSubscription, Position, RecordedEvent, SubscriptionFilter } from '../event-store.port';
import { matchesFilter } from './recent-appends';
import { SqliteEventStore } from './sqlite-event-store';

// Live subscribers take this process's appends from memory (recent-appends.ts) and fall back to
// SQL whenever memory cannot prove it holds everything. These cases try to make the two paths
// disagree: what a subscriber sees must always be the log as SQL reads it, in order, once.

let dir: string;
let file: string;
const stores: SqliteEventStore[] = [];
const subscriptions: EventSubscription[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sqlite-tail-'));
  file = join(dir, 'events.db');
});

afterEach(async () => {
  await Promise.all(subscriptions.splice(0).map((s) => s.stop().catch(() => undefined)));
  await Promise.all(stores.splice(0).map((s) => s.close()));
  rmSync(dir, { recursive: true, force: true });
});

function open(pollIntervalMs = 50): SqliteEventStore {
  const store = new SqliteEventStore({ file, pollIntervalMs });
  stores.push(store);
  return store;
}

const ev = (type: string, data: EventData['data'] = { n: 1 }, metadata?: EventData['metadata']): EventData => ({
  id: randomUUID(),
  type,
  data,
  ...(metadata && { metadata }),
});

/** How many rows the SQL path has read (every page of every subscription of every store). */
function countSqlRows(): { rows: number } {
  const counter = { rows: 0 };
  type Scan = { scanPage: (this: unknown, ...args: unknown[]) => { rows: unknown[] } };
  const proto = SqliteEventStore.prototype as unknown as Scan;
  const original = proto.scanPage;
  jest.spyOn(proto, 'scanPage').mockImplementation(function (this: Scan, ...args: unknown[]) {
    const page = original.apply(this, args);
    counter.rows += page.rows.length;
    return page;
  });
  return counter;
}

afterEach(() => jest.restoreAllMocks());

interface Reader {
  readonly events: RecordedEvent[];
  /** Last position delivered, by an event or a checkpoint. */
  last: Position | null;
  caughtUp: Promise<void>;
  /** Resolves once the reader has considered everything up to `position`. */
  reach(position: Position): Promise<void>;
  readonly done: Promise<void>;
}

/** Consumes a subscription, pausing after events where `pause` says, until stopped. */
function read(sub: EventSubscription, pause: (n: number) => Promise<void> | undefined = () => undefined): Reader {
  subscriptions.push(sub);
  let markCaughtUp!: () => void;
  const waiting: Array<{ position: bigint; resolve(): void }> = [];
  const state = {
    events: [] as RecordedEvent[],
    last: null as Position | null,
    caughtUp: new Promise<void>((r) => (markCaughtUp = r)),
    reach: (position: Position): Promise<void> =>
      state.last && state.last.commit >= position.commit
        ? Promise.resolve()
        : new Promise<void>((resolve) => waiting.push({ position: position.commit, resolve })),
  };
  const done = (async () => {
    for await (const m of sub) {
      if (m.kind === 'caught-up') markCaughtUp();
      if (m.kind === 'caught-up') continue;
      if (m.kind === 'event') state.events.push(m.event);
      state.last = m.kind === 'event' ? m.event.position : m.position;
      for (let i = waiting.length - 1; i >= 0; i--) {
        if (waiting[i].position <= state.last.commit) waiting.splice(i, 1)[0].resolve();
      }
      if (m.kind === 'event') await pause(state.events.length);
    }
  })();
  const reader: Reader = Object.assign(state, { done });
  return reader;
}

/** The log after `from` as SQL reads it, filtered as a subscription would be. */
async function logAfter(store: SqliteEventStore, from: Position | 'start', filter?: SubscriptionFilter) {
  const all = await store.readAll({ maxCount: Number.MAX_SAFE_INTEGER });
  const after = from === 'start' ? 0n : from.commit;
  return all.filter((e) => e.position.commit > after && matchesFilter(filter, e.type, e.streamId));
}

/** A slow consumer: an I/O-sized pause now and then, a macrotask turn otherwise. */
const slowly = (n: number) => sleep(n % 50 === 0 ? 2 : 0);

/**
 * `total` events appended by `writers` concurrent callers, 1–3 per append, a fifth of the
 * appends on one shared stream with an expected revision that is often stale (their savepoints
 * roll back inside a group commit). Resolves with what was committed.
 */
async function burst(
  store: SqliteEventStore,
  total: number,
  writers = 64,
): Promise<{ committed: number; conflicts: number }> {
  let committed = 0;
  let conflicts = 0;
  const hot = `hot-${randomUUID()}`;
  let hotRevision: bigint | 'no_stream' = 'no_stream';
  const writer = async (w: number) => {
    const own = `w${w}-${randomUUID()}`;
    for (let i = 0; committed < total; i++) {
      const size = 1 + ((w + i) % 3);
      const events = Array.from({ length: size }, (_, k) =>
        ev(k % 2 === 0 ? 't.A' : 't.B', { w, i, k, text: 'ü'.repeat(k) }, { correlationId: `${w}/${i}` }),
      );
      if (i % 5 === 0) {
        try {
          const r = await store.appendToStream(hot, events, { expectedRevision: hotRevision });
          hotRevision = r.nextExpectedRevision;
          committed += size;
        } catch (err) {
          if (!(err instanceof WrongExpectedVersionError)) throw err;
          conflicts++;
        }
      } else {
        await store.appendToStream(own, events);
        committed += size;
      }
    }
  };
  await Promise.all(Array.from({ length: writers }, (_, w) => writer(w)));
  return { committed, conflicts };
}

async function head(store: SqliteEventStore): Promise<Position> {
  return (await store.headPosition())!;
}

describe('sqlite live subscriptions take this process’s appends from memory', () => {
  it('delivers what SQL would, field for field, without reading it back', async () => {
    // No poll: only this process's appends wake the subscription.
    const store = open(3_600_000);
    await store.appendToStream('before', [ev('t.Before')]);
    const sub = store.subscribeToAll({ from: 'start' });
    const reader = read(sub);
    await reader.caughtUp;
    const sql = countSqlRows();

    const data = { text: 'é😀\u2028"\\', nested: { list: [1, 2.5, -0, null, true, 'x'], empty: {} }, big: 2 ** 53 };
    const placed = ev('OrderPlaced', data, { correlationId: 'c-1', userId: 'u' });
    const appended = [
      await store.appendToStream('order-1', [placed]),
      await store.appendToStream('order-1', [ev('OrderPaid', { amount: 10 }), ev('OrderShipped', {})], {
        expectedRevision: 0n,
      }),
    ];
    // Writes that add no event: a replayed append, stream metadata, a delete.
    await store.appendToStream('order-1', [placed], { expectedRevision: 'no_stream' });
    await store.setStreamMetadata('order-1', { maxCount: 1 });
    await store.deleteStream('order-1');
    appended.push(await store.appendToStream('emoji-😀', [ev('t.Emoji', { a: [] })]));
    await reader.reach(appended[2].position);
    await sub.stop();
    await reader.done;

    expect(sql.rows).toBe(0);
    const live = reader.events.slice(1);
    const fromSql = await logAfter(store, reader.events[0].position);
    expect(live).toHaveLength(4);
    live.forEach((event, i) => {
      expect(event).toEqual(fromSql[i]);
      expect(event.created).toBeInstanceOf(Date);
      expect(typeof event.revision).toBe('bigint');
      expect(typeof event.position.commit).toBe('bigint');
    });
    expect(live.map((e) => [e.streamId, e.revision])).toEqual([
      ['order-1', 0n],
      ['order-1', 1n],
      ['order-1', 2n],
      ['emoji-😀', 0n],
    ]);
  });

  it('gives every subscriber its own copy: neither the appender nor another subscriber can change it', async () => {
    const store = open();
    const a = read(store.subscribeToAll({ from: 'end' }));
    const b = read(store.subscribeToAll({ from: 'end' }));
    await Promise.all([a.caughtUp, b.caughtUp]);
    const data = { list: [1, 2], inner: { x: 'y' } };
    const pending = store.appendToStream('s', [ev('t.Mutable', data)]);
    data.list.push(3);
    data.inner.x = 'changed';
    const r = await pending;
    await a.reach(r.position);
    await b.reach(r.position);
    (a.events[0].data as { list: number[] }).list.push(99);
    expect(b.events[0].data).toEqual({ list: [1, 2], inner: { x: 'y' } });
    expect(a.events[0].data).not.toBe(b.events[0].data);
  });

  it('a slow consumer sees every committed event once, in order, while 64 writers append 10k, some in conflict', async () => {
    const store = open();
    const start = await store.appendToStream('start', [ev('t.Start')]);
    const sql = countSqlRows();
    const reader = read(store.subscribeToAll({ from: start.position }), slowly);
    await reader.caughtUp;
    const { committed, conflicts } = await burst(store, 10_000);
    await reader.reach(await head(store));
    const expected = await logAfter(store, start.position);

    expect(conflicts).toBeGreaterThan(0);
    expect(expected).toHaveLength(committed);
    expect(reader.events.map((e) => e.id)).toEqual(expected.map((e) => e.id));
    expect(reader.events).toEqual(expected);
    // It fell behind what memory keeps (SQL) and came back to it (memory): both paths were taken.
    expect(sql.rows).toBeGreaterThan(0);
    expect(sql.rows).toBeLessThan(committed);
  }, 60_000);

  it('a filtered consumer sees exactly the matching events and checkpoints past the rest', async () => {
    const store = open();
    const filter = { eventTypePrefixes: ['t.A'] };
    const start = await store.appendToStream('start', [ev('t.Start')]);
    const reader = read(store.subscribeToAll({ from: start.position, filter }), slowly);
    await reader.caughtUp;
    await burst(store, 5_000);
    // The last event is filtered out: the reader still gets to the head, by a checkpoint.
    const last = await store.appendToStream('tail', [ev('t.Skipped')]);
    await reader.reach(last.position);
    const expected = await logAfter(store, start.position, filter);
    expect(reader.events).toEqual(expected);
    expect(reader.last).toEqual(last.position);
  }, 60_000);

  it('two subscriptions at different positions, and one that starts mid-burst, each see their part once', async () => {
    const store = open();
    const start = await store.appendToStream('start', [ev('t.Start')]);
    await burst(store, 2_000, 16);
    const middle = await head(store);
    const early = read(store.subscribeToAll({ from: start.position }), (n) => (n % 3 === 0 ? sleep(1) : undefined));
    const late = read(store.subscribeToAll({ from: middle }));
    const running = burst(store, 6_000);
    // Starts while the burst runs: catches up through SQL, then goes live.
    await sleep(20);
    const midway = await head(store);
    const joiner = read(store.subscribeToAll({ from: midway }), slowly);
    await running;
    const end = await head(store);
    await Promise.all([early.reach(end), late.reach(end), joiner.reach(end)]);

    expect(early.events).toEqual(await logAfter(store, start.position));
    expect(late.events).toEqual(await logAfter(store, middle));
    expect(joiner.events).toEqual(await logAfter(store, midway));
  }, 60_000);

  it('appends from a second store on the same file (another process) interleaved with its own are all seen, in order', async () => {
    const store = open();
    const other = open();
    const start = await store.appendToStream('start', [ev('t.Start')]);
    const reader = read(store.subscribeToAll({ from: start.position }), slowly);
    const filtered = read(store.subscribeToAll({ from: start.position, filter: { streamNamePrefixes: ['theirs'] } }));
    await Promise.all([reader.caughtUp, filtered.caughtUp]);
    const mine = async () => {
      for (let i = 0; i < 300; i++) await store.appendToStream(`mine-${i % 7}`, [ev('t.Mine'), ev('t.Mine')]);
    };
    const theirs = async () => {
      for (let i = 0; i < 300; i++) {
        await other.appendToStream(`theirs-${i % 5}`, [ev('t.Theirs')]);
        if (i % 10 === 0) await sleep(1);
      }
    };
    await Promise.all([mine(), mine(), theirs()]);
    // Their last append may come after all of ours: only the poll finds it.
    const last = await other.appendToStream('theirs-last', [ev('t.Theirs')]);
    await Promise.all([reader.reach(last.position), filtered.reach(last.position)]);

    const expected = await logAfter(store, start.position);
    expect(expected.filter((e) => e.type === 't.Theirs')).toHaveLength(301);
    expect(reader.events).toEqual(expected);
    expect(filtered.events).toEqual(await logAfter(store, start.position, { streamNamePrefixes: ['theirs'] }));
  }, 60_000);

  it('closing the store while a consumer is paused ends its subscription, having delivered a prefix of the log once', async () => {
    const store = open();
    const start = await store.appendToStream('start', [ev('t.Start')]);
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let paused!: () => void;
    const isPaused = new Promise<void>((r) => (paused = r));
    const reader = read(store.subscribeToAll({ from: start.position }), (n) => {
      if (n !== 5) return undefined;
      paused();
      return released;
    });
    await reader.caughtUp;
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.appendToStream(`s-${i}`, [ev('t.A'), ev('t.B'), ev('t.C')])),
    );
    await isPaused;
    const closed = store.close();
    release();
    await closed;
    await expect(reader.done).rejects.toBeInstanceOf(EventStoreUnavailableError);

    const reopened = new SqliteEventStore({ file, writer: 'inline' });
    stores.push(reopened);
    const log = await logAfter(reopened, start.position);
    expect(log).toHaveLength(60);
    expect(reader.events.length).toBeGreaterThanOrEqual(5);
    expect(reader.events).toEqual(log.slice(0, reader.events.length));
  });
});
