/**
 * Wire-level behaviour of the EventStoreDB test server, driven by the raw @eventstore/db-client
 * (not our adapter): what the client sees is what a real server would show it (ESDB-WIRE.md).
 */
import { randomUUID } from 'node:crypto';
import {
  BACKWARDS,
  END,
  EventStoreDBClient,
  START,
  StreamDeletedError,
  StreamNotFoundError,
  WrongExpectedVersionError,
  eventTypeFilter,
  excludeSystemEvents,
  jsonEvent,
  streamNameFilter,
  type AllStreamResolvedEvent,
  type Filter,
  type Position,
  type ResolvedEvent,
} from '@eventstore/db-client';
import { startEsdbTestServer, type EsdbTestServer } from './harness';
import { retry } from '../../libs/event-store/src/testing/retry';

let server: EsdbTestServer;
let client: EventStoreDBClient;

beforeAll(async () => {
  server = await startEsdbTestServer();
  client = EventStoreDBClient.connectionString(server.connectionString);
});

afterAll(async () => {
  await client?.dispose();
  await server?.stop();
});

const stream = () => `wire-${randomUUID()}`;
const prefix = () => `w${randomUUID().replace(/-/g, '').slice(0, 10)}.`;
const event = (type: string, data: Record<string, unknown> = {}, metadata?: Record<string, unknown>) =>
  jsonEvent({ type, data, ...(metadata && { metadata }) });

async function readStream(name: string, options: Parameters<EventStoreDBClient['readStream']>[1] = {}) {
  const out: NonNullable<ResolvedEvent['event']>[] = [];
  for await (const r of client.readStream(name, options)) if (r.event) out.push(r.event);
  return out;
}

async function readAll(options: Parameters<EventStoreDBClient['readAll']>[0] = {}) {
  const out: NonNullable<AllStreamResolvedEvent['event']>[] = [];
  for await (const r of client.readAll(options)) if (r.event) out.push(r.event);
  return out;
}

/** Collects a subscription's events, checkpoints and caught-up signal in arrival order. */
function record(sub: NodeJS.EventEmitter & AsyncIterable<ResolvedEvent>) {
  const log: string[] = [];
  const events: NonNullable<ResolvedEvent['event']>[] = [];
  let failure: unknown;
  sub.on('caughtUp', () => log.push('caught-up'));
  sub.on('error', (err) => (failure = err));
  sub.on('data', (r: ResolvedEvent) => {
    if (!r.event) return;
    events.push(r.event);
    log.push(r.event.type);
  });
  return {
    log,
    events,
    async until(predicate: () => boolean, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate()) {
        if (failure) throw failure;
        if (Date.now() > deadline) throw new Error(`Timed out; got ${JSON.stringify(log)}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
  };
}

describe('append', () => {
  it('writes events with consecutive revisions and reports the last revision and its position', async () => {
    const s = stream();
    const r = await client.appendToStream(s, [event('A', { n: 1 }, { account: 'a1' }), event('B', { n: 2 })], {
      expectedRevision: 'no_stream',
    });
    expect(r).toMatchObject({ success: true, nextExpectedRevision: 1n });
    const read = await readStream(s);
    expect(read.map((e) => [e.type, e.revision, e.data])).toEqual([
      ['A', 0n, { n: 1 }],
      ['B', 1n, { n: 2 }],
    ]);
    expect(read[0].metadata).toEqual({ account: 'a1' });
    expect(read[0].isJson).toBe(true);
    expect(Math.abs(read[0].created.getTime() - Date.now())).toBeLessThan(60_000);
    expect(read[1].position).toEqual(r.position);
    expect(read[0].position!.commit).toBeGreaterThan(0n);
    expect(read[0].position!.commit).toBeLessThan(read[1].position!.commit);
  });

  it.each([
    ['no_stream on an existing stream', 'no_stream' as const, true, 1n],
    ['stream_exists on a missing stream', 'stream_exists' as const, false, 'no_stream' as const],
    ['an old exact revision', 0n, true, 1n],
    ['an exact revision on a missing stream', 3n, false, 'no_stream' as const],
  ])('wrong expected version: %s', async (_, expectedRevision, exists, actualVersion) => {
    const s = stream();
    if (exists) await client.appendToStream(s, [event('A'), event('A')]);
    const err = await client.appendToStream(s, [event('B')], { expectedRevision }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WrongExpectedVersionError);
    expect(err).toMatchObject({ streamName: s, expectedVersion: expectedRevision, actualVersion });
  });

  it('reports a wrong expected version as a result with throwOnAppendFailure=false', async () => {
    const lenient = EventStoreDBClient.connectionString(`${server.connectionString}&throwOnAppendFailure=false`);
    try {
      const s = stream();
      await lenient.appendToStream(s, [event('A'), event('A'), event('A')]);
      const r = await lenient.appendToStream(s, [event('B')], { expectedRevision: 'no_stream' });
      expect(r).toMatchObject({ success: false, nextExpectedRevision: 2n });
    } finally {
      await lenient.dispose();
    }
  });

  describe('event-id deduplication', () => {
    it('acknowledges a re-append of the same ids with the same expected revision, writing nothing', async () => {
      const s = stream();
      const events = [event('A'), event('B')];
      const first = await client.appendToStream(s, events, { expectedRevision: 'no_stream' });
      const again = await client.appendToStream(s, events, { expectedRevision: 'no_stream' });
      expect(again).toMatchObject({ success: true, nextExpectedRevision: 1n, position: first.position });
      expect(await readStream(s)).toHaveLength(2);
    });

    it('acknowledges a re-append with expected any after later writes', async () => {
      const s = stream();
      await client.appendToStream(s, [event('Zero')]);
      const events = [event('A'), event('B')];
      await client.appendToStream(s, events);
      await client.appendToStream(s, [event('Later')]);
      const again = await client.appendToStream(s, events, { expectedRevision: 'any' });
      expect(again.nextExpectedRevision).toBe(2n);
      expect((await readStream(s)).map((e) => e.type)).toEqual(['Zero', 'A', 'B', 'Later']);
    });

    it('refuses a partial overlap as a wrong expected version', async () => {
      const s = stream();
      const a = event('A');
      await client.appendToStream(s, [a, event('B')]);
      const err = await client.appendToStream(s, [a, event('C')]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WrongExpectedVersionError);
      expect(await readStream(s)).toHaveLength(2);
    });

    it('refuses a re-append whose expected revision does not match where the ids are', async () => {
      const s = stream();
      const events = [event('A')];
      await client.appendToStream(s, [event('Zero')]);
      await client.appendToStream(s, events, { expectedRevision: 0n });
      const err = await client.appendToStream(s, events, { expectedRevision: 'no_stream' }).catch((e: unknown) => e);
      expect(err).toMatchObject({ actualVersion: 1n, expectedVersion: 'no_stream' });
    });

    it('treats the same id in another stream as a new event', async () => {
      const e = event('A');
      await client.appendToStream(stream(), [e]);
      const other = stream();
      await client.appendToStream(other, [e]);
      expect((await readStream(other)).map((x) => x.id)).toEqual([e.id]);
    });
  });
});

describe('reading a stream', () => {
  let s: string;
  beforeAll(async () => {
    s = stream();
    await client.appendToStream(s, Array.from({ length: 5 }, (_, i) => event(`E${i}`)));
  });
  const revisions = async (options: Parameters<EventStoreDBClient['readStream']>[1]) =>
    (await readStream(s, options)).map((e) => e.revision);

  it('forwards from a revision, inclusive, with maxCount', async () => {
    expect(await revisions({ fromRevision: 1n, maxCount: 3 })).toEqual([1n, 2n, 3n]);
    expect(await revisions({ fromRevision: START })).toEqual([0n, 1n, 2n, 3n, 4n]);
    expect(await revisions({ fromRevision: END })).toEqual([]);
  });

  it('backwards from the end, from a revision (inclusive) and from the start (only the first)', async () => {
    expect(await revisions({ direction: BACKWARDS, fromRevision: END, maxCount: 2 })).toEqual([4n, 3n]);
    expect(await revisions({ direction: BACKWARDS, fromRevision: 2n })).toEqual([2n, 1n, 0n]);
    expect(await revisions({ direction: BACKWARDS, fromRevision: START })).toEqual([0n]);
  });

  it('a missing stream is StreamNotFoundError', async () => {
    await expect(readStream(stream())).rejects.toBeInstanceOf(StreamNotFoundError);
    await expect(readStream(stream(), { direction: BACKWARDS, fromRevision: END })).rejects.toBeInstanceOf(StreamNotFoundError);
  });
});

describe('reading $all', () => {
  it('forwards from a position is inclusive; backwards from a position is exclusive', async () => {
    const s = stream();
    const p = prefix();
    const first = await client.appendToStream(s, [event(`${p}A`)]);
    await client.appendToStream(s, [event(`${p}B`)]);
    const third = await client.appendToStream(s, [event(`${p}C`)]);
    const forwards = (await readAll({ fromPosition: first.position!, maxCount: 3 })).map((e) => e.type);
    expect(forwards).toEqual([`${p}A`, `${p}B`, `${p}C`]);
    const backwards = (await readAll({ direction: BACKWARDS, fromPosition: third.position!, maxCount: 2 })).map((e) => e.type);
    expect(backwards).toEqual([`${p}B`, `${p}A`]);
    const fromEnd = await readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 });
    expect(fromEnd.map((e) => e.position)).toEqual([third.position]);
  });

  it('keeps positions strictly increasing from start to end', async () => {
    const all = await readAll({ fromPosition: START });
    expect(all.length).toBeGreaterThan(0);
    for (let i = 1; i < all.length; i++) expect(all[i].position.commit).toBeGreaterThan(all[i - 1].position.commit);
    expect(all[0].position.commit).toBeGreaterThan(0n);
  });

  it('streams a large read to the end (write backpressure on the server)', async () => {
    const s = stream();
    const payload = 'x'.repeat(2_000);
    for (let i = 0; i < 10; i++) {
      await client.appendToStream(s, Array.from({ length: 200 }, (_, j) => event('Big', { i: i * 200 + j, payload })));
    }
    const read = await readStream(s);
    expect(read.map((e) => (e.data as { i: number }).i)).toEqual(Array.from({ length: 2_000 }, (_, i) => i));
  });
});

describe('subscriptions', () => {
  async function subscribeFiltered(from: Position, filter: Filter, expected: number) {
    const sub = client.subscribeToAll({ fromPosition: from, filter });
    const rec = record(sub);
    try {
      await rec.until(() => rec.events.length >= expected && rec.log.includes('caught-up'));
      return rec;
    } finally {
      await sub.unsubscribe();
    }
  }

  it('$all: confirmation, catch-up after a position (exclusive), caught_up, then live', async () => {
    const p = prefix();
    const s = stream();
    const start = await client.appendToStream(s, [event(`${p}Before`)]);
    await client.appendToStream(s, [event(`${p}1`), event(`${p}2`)]);
    const sub = client.subscribeToAll({ fromPosition: start.position!, filter: eventTypeFilter({ prefixes: [p] }) });
    let confirmed = false;
    sub.on('confirmation', () => (confirmed = true));
    const rec = record(sub);
    await rec.until(() => rec.log.includes('caught-up'));
    await client.appendToStream(stream(), [event(`${p}3`)]);
    await rec.until(() => rec.events.length >= 3);
    await sub.unsubscribe();
    expect(confirmed).toBe(true);
    expect(rec.log).toEqual([`${p}1`, `${p}2`, 'caught-up', `${p}3`]);
  });

  it('$all from end delivers only new events; excludeSystemEvents hides $-types', async () => {
    const p = prefix();
    const s = stream();
    await client.appendToStream(s, [event(`${p}Old`)]);
    const sub = client.subscribeToAll({ fromPosition: END, filter: excludeSystemEvents() });
    const rec = record(sub);
    await rec.until(() => rec.log.includes('caught-up'));
    await client.setStreamMetadata(s, { maxCount: 10 }); // a `$metadata` event in `$$<stream>`
    await client.appendToStream(s, [event(`${p}New`)]);
    await rec.until(() => rec.events.length >= 1);
    await sub.unsubscribe();
    expect(rec.log).toEqual(['caught-up', `${p}New`]);
  });

  it.each([
    ['event-type prefixes', (p: string, _s: string) => eventTypeFilter({ prefixes: [`${p}A`, `${p}C`] })],
    ['event-type regex', (p: string, _s: string) => eventTypeFilter({ regex: `^${p.replace('.', '\\.')}(A|C)$` })],
    ['stream-name prefixes', (_p: string, s: string) => streamNameFilter({ prefixes: [`${s}-a`, `${s}-c`] })],
    ['stream-name regex', (_p: string, s: string) => streamNameFilter({ regex: `^${s}-[ac]$` })],
  ])('filters $all by %s', async (_, makeFilter) => {
    const p = prefix();
    const s = stream();
    const start = await client.appendToStream(stream(), [event('Start')]);
    await client.appendToStream(`${s}-a`, [event(`${p}A`)]);
    await client.appendToStream(`${s}-b`, [event(`${p}B`)]);
    await client.appendToStream(`${s}-c`, [event(`${p}C`)]);
    const rec = await subscribeFiltered(start.position!, makeFilter(p, s), 2);
    expect(rec.events.map((e) => e.type)).toEqual([`${p}A`, `${p}C`]);
  });

  it('sends a checkpoint every maxSearchWindow × checkpointInterval events considered', async () => {
    const p = prefix();
    const s = stream();
    const start = await client.appendToStream(s, [event('Start')]);
    // 12 events considered after `start`: 2 match; window 5 × interval 1 → checkpoints after the 5th and 10th.
    await client.appendToStream(s, [event(`${p}Hit`), ...Array.from({ length: 10 }, () => event('Miss')), event(`${p}Hit`)]);
    const checkpoints: Position[] = [];
    const filter = eventTypeFilter({
      prefixes: [p],
      maxSearchWindow: 5,
      checkpointInterval: 1,
      checkpointReached: (_sub, position) => {
        checkpoints.push(position);
      },
    });
    await subscribeFiltered(start.position!, filter, 2);
    const all = await readAll({ fromPosition: start.position!, maxCount: 13 });
    expect(checkpoints).toEqual([all[5].position, all[10].position]);
  });

  it('a stream subscription: after a revision (exclusive), caught_up, then live; a missing stream just waits', async () => {
    const s = stream();
    await client.appendToStream(s, [event('E0'), event('E1'), event('E2')]);
    const sub = client.subscribeToStream(s, { fromRevision: 0n });
    const rec = record(sub);
    await rec.until(() => rec.log.includes('caught-up'));
    await client.appendToStream(s, [event('E3')]);
    await rec.until(() => rec.events.length >= 3);
    await sub.unsubscribe();
    expect(rec.log).toEqual(['E1', 'E2', 'caught-up', 'E3']);
    expect(rec.events.map((e) => e.revision)).toEqual([1n, 2n, 3n]);

    const missing = stream();
    const waiting = client.subscribeToStream(missing, { fromRevision: START });
    const rec2 = record(waiting);
    await rec2.until(() => rec2.log.includes('caught-up'));
    await client.appendToStream(missing, [event('First')]);
    await rec2.until(() => rec2.events.length >= 1);
    await waiting.unsubscribe();
    expect(rec2.log).toEqual(['caught-up', 'First']);
  });

  it('catches up over a large log while honouring backpressure', async () => {
    const p = prefix();
    const s = stream();
    const start = await client.appendToStream(s, [event('Start')]);
    const payload = 'y'.repeat(4_000);
    for (let i = 0; i < 5; i++) {
      await client.appendToStream(s, Array.from({ length: 200 }, (_, j) => event(`${p}Big`, { i: i * 200 + j, payload })));
    }
    const sub = client.subscribeToAll({ fromPosition: start.position!, filter: eventTypeFilter({ prefixes: [p] }) });
    const seen: number[] = [];
    for await (const r of sub) {
      seen.push((r.event!.data as { i: number }).i);
      // A slow consumer: the server must stop at call.write() backpressure, not buffer everything.
      if (seen.length % 100 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      if (seen.length === 1_000) break;
    }
    await sub.unsubscribe();
    expect(seen).toEqual(Array.from({ length: 1_000 }, (_, i) => i));
  });
});

describe('delete and tombstone', () => {
  it('soft delete: reads say not found, $$ metadata carries $tb, a later append continues the revisions', async () => {
    const s = stream();
    await client.appendToStream(s, [event('A'), event('B')]);
    await client.deleteStream(s, { expectedRevision: 1n });
    await expect(readStream(s)).rejects.toBeInstanceOf(StreamNotFoundError);
    const meta = await client.getStreamMetadata(s);
    expect(meta.metadata?.truncateBefore).toBe(2);
    const [metaEvent] = await readStream(`$$${s}`, { direction: BACKWARDS, fromRevision: END, maxCount: 1 });
    expect(metaEvent.type).toBe('$metadata');

    const r = await client.appendToStream(s, [event('C')]);
    expect(r.nextExpectedRevision).toBe(2n);
    expect((await readStream(s)).map((e) => [e.type, e.revision])).toEqual([['C', 2n]]);
  });

  it('delete with a wrong expected revision is a WrongExpectedVersionError from trailers', async () => {
    const s = stream();
    await client.appendToStream(s, [event('A')]);
    const err = await client.deleteStream(s, { expectedRevision: 5n }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WrongExpectedVersionError);
    expect(err).toMatchObject({ streamName: s, expectedVersion: 5n, actualVersion: 0n });
  });

  it('tombstone: reads, appends and subscriptions fail with StreamDeletedError', async () => {
    const s = stream();
    await client.appendToStream(s, [event('A')]);
    await client.tombstoneStream(s, { expectedRevision: 0n });
    await expect(readStream(s)).rejects.toBeInstanceOf(StreamDeletedError);
    await expect(client.appendToStream(s, [event('B')])).rejects.toBeInstanceOf(StreamDeletedError);
    const err = await client.appendToStream(s, [event('B')]).catch((e: unknown) => e);
    expect(err).toMatchObject({ streamName: s });
    const sub = client.subscribeToStream(s);
    const failure = await new Promise((resolve) => sub.once('error', resolve));
    expect(failure).toBeInstanceOf(StreamDeletedError);
    // Its `$streamDeleted` record is a system event in `$all`.
    const [last] = await readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 });
    expect([last.streamId, last.type]).toEqual([s, '$streamDeleted']);
  });
});

describe('restarts', () => {
  it.each(['SIGTERM', 'SIGKILL'] as const)('keeps the data across a restart (%s) on the same port', async (signal) => {
    const s = stream();
    const before = await client.appendToStream(s, [event('A'), event('B')]);
    const port = server.port;
    await server.restart(signal);
    expect(server.port).toBe(port);
    // The first call after the drop may fail while the client notices; it then reconnects.
    const read = await retry(() => readStream(s));
    expect(read.map((e) => e.type)).toEqual(['A', 'B']);
    const after = await client.appendToStream(s, [event('C')], { expectedRevision: 1n });
    expect(after.position!.commit).toBeGreaterThan(before.position!.commit);
  });

  it('drops open subscriptions on restart', async () => {
    const sub = client.subscribeToAll({ fromPosition: END });
    const rec = record(sub);
    await rec.until(() => rec.log.includes('caught-up'));
    const dropped = new Promise((resolve) => sub.once('error', resolve));
    await server.restart();
    expect(await dropped).toBeInstanceOf(Error);
  });
});

