/**
 * One conformance suite for every EventStore adapter. Each adapter's spec calls
 * `describeEventStoreConformance` with a fixture; every case here must pass on every adapter.
 * Tests use unique stream names and event-type prefixes, so one store can serve the whole file.
 */
import { randomUUID } from 'node:crypto';
import {
  ANY,
  NO_STREAM,
  STREAM_EXISTS,
  type EventData,
  type EventStore,
  type EventSubscription,
  type Position,
  type RecordedEvent,
  type SubscriptionMessage,
} from '../event-store.port';
import { InvalidEventError, StreamDeletedError, WrongExpectedVersionError } from '../errors';
import { comparePositions } from '../position';
import { retry } from './retry';

export interface ConformanceFixture {
  /** A connected store; the suite closes it in `afterAll`. */
  store: EventStore;
  /** Stops the server behind the store and starts it again on the same data (server-backed adapters). */
  restartServer?: () => Promise<void>;
  /** Opens a second, independent client on the same data (another connection, as another process would). */
  openAnother: () => Promise<EventStore>;
}

export interface ConformanceOptions {
  setup: () => Promise<ConformanceFixture>;
  teardown?: () => Promise<void>;
  /** The fixture provides `restartServer`: the dropped-connection cases run. */
  serverBacked: boolean;
  /** What the adapter must say of itself: several instances may share it (EventStoreDB), or one process owns it (sqlite). */
  sharedByInstances: boolean;
}

export function describeEventStoreConformance(adapterName: string, options: ConformanceOptions): void {
  const { setup, teardown = async () => {}, serverBacked, sharedByInstances } = options;
  describe(`EventStore conformance: ${adapterName}`, () => {
    let fixture: ConformanceFixture;
    let store: EventStore;

    beforeAll(async () => {
      fixture = await setup();
      store = fixture.store;
    });
    afterAll(async () => {
      await store?.close();
      await teardown();
    });

    describe('append with expected revision', () => {
      it('no_stream succeeds on a new stream and starts at revision 0', async () => {
        const s = stream();
        const r = await store.appendToStream(s, [ev('t.A')], { expectedRevision: NO_STREAM });
        expect(r.nextExpectedRevision).toBe(0n);
      });

      it('no_stream fails on an existing stream, naming expected and actual, writing nothing', async () => {
        const s = stream();
        await store.appendToStream(s, [ev('t.A'), ev('t.A')]);
        const err = await store
          .appendToStream(s, [ev('t.B')], { expectedRevision: NO_STREAM })
          .catch((e: unknown) => e);
        expect(err).toBeInstanceOf(WrongExpectedVersionError);
        expect(err).toMatchObject({ streamId: s, expected: NO_STREAM, actual: 1n });
        expect((await store.readStream(s)).map((e) => e.type)).toEqual(['t.A', 't.A']);
      });

      it('any succeeds on a new and on an existing stream', async () => {
        const s = stream();
        expect((await store.appendToStream(s, [ev('t.A')], { expectedRevision: ANY })).nextExpectedRevision).toBe(0n);
        expect((await store.appendToStream(s, [ev('t.B')], { expectedRevision: ANY })).nextExpectedRevision).toBe(1n);
        expect((await store.appendToStream(s, [ev('t.C')])).nextExpectedRevision).toBe(2n);
      });

      it('stream_exists fails on a missing stream with actual no_stream, writing nothing', async () => {
        const s = stream();
        const err = await store
          .appendToStream(s, [ev('t.A')], { expectedRevision: STREAM_EXISTS })
          .catch((e: unknown) => e);
        expect(err).toBeInstanceOf(WrongExpectedVersionError);
        expect(err).toMatchObject({ streamId: s, expected: STREAM_EXISTS, actual: NO_STREAM });
        expect(await store.readStream(s)).toEqual([]);
      });

      it('stream_exists succeeds on an existing stream', async () => {
        const s = stream();
        await store.appendToStream(s, [ev('t.A')]);
        const r = await store.appendToStream(s, [ev('t.B')], { expectedRevision: STREAM_EXISTS });
        expect(r.nextExpectedRevision).toBe(1n);
      });

      it('an exact revision succeeds when it is the current one', async () => {
        const s = stream();
        await store.appendToStream(s, [ev('t.A'), ev('t.A')]);
        const r = await store.appendToStream(s, [ev('t.B')], { expectedRevision: 1n });
        expect(r.nextExpectedRevision).toBe(2n);
      });

      it('an exact revision fails when it is not, naming both, writing nothing', async () => {
        const s = stream();
        await store.appendToStream(s, [ev('t.A'), ev('t.A'), ev('t.A')]);
        const err = await store.appendToStream(s, [ev('t.B')], { expectedRevision: 0n }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(WrongExpectedVersionError);
        expect(err).toMatchObject({ streamId: s, expected: 0n, actual: 2n });
        expect(await store.readStream(s)).toHaveLength(3);
      });

      it('an exact revision fails on a missing stream with actual no_stream', async () => {
        const s = stream();
        const err = await store.appendToStream(s, [ev('t.A')], { expectedRevision: 0n }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(WrongExpectedVersionError);
        expect(err).toMatchObject({ expected: 0n, actual: NO_STREAM });
      });

      it('of two concurrent appends expecting the same revision, exactly one wins', async () => {
        const s = stream();
        await store.appendToStream(s, [ev('t.A')]);
        const results = await Promise.allSettled([
          store.appendToStream(s, [ev('t.B')], { expectedRevision: 0n }),
          store.appendToStream(s, [ev('t.C')], { expectedRevision: 0n }),
        ]);
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
        expect(rejected.reason).toBeInstanceOf(WrongExpectedVersionError);
        expect(await store.readStream(s)).toHaveLength(2);
      });
    });

    describe('the stream revision appends are checked against', () => {
      it('is null for a missing stream, then the newest revision, and an append expecting it succeeds', async () => {
        const s = stream();
        expect(await store.streamRevision(s)).toBeNull();
        await store.appendToStream(s, [ev('t.A'), ev('t.A'), ev('t.A')]);
        expect(await store.streamRevision(s)).toBe(2n);
        const r = await store.appendToStream(s, [ev('t.B')], { expectedRevision: (await store.streamRevision(s))! });
        expect(r.nextExpectedRevision).toBe(3n);
        expect(await store.streamRevision(s)).toBe(3n);
      });

      it("moves with another client's append", async () => {
        const s = stream();
        await store.appendToStream(s, [ev('t.A')]);
        const other = await fixture.openAnother();
        try {
          await other.appendToStream(s, [ev('t.B')], { expectedRevision: 0n });
        } finally {
          await other.close();
        }
        expect(await store.streamRevision(s)).toBe(1n);
      });

      it(`says whether instances share the store (${String(sharedByInstances)} for ${adapterName})`, () => {
        expect(store.sharedByInstances).toBe(sharedByInstances);
      });
    });

    describe('idempotent re-append', () => {
      it('re-appending the same event ids with the same expected revision is acknowledged and writes nothing', async () => {
        const s = stream();
        const events = [ev('t.A'), ev('t.B')];
        const first = await store.appendToStream(s, events, { expectedRevision: NO_STREAM });
        const again = await store.appendToStream(s, events, { expectedRevision: NO_STREAM });
        expect(again.nextExpectedRevision).toBe(first.nextExpectedRevision);
        expect(await store.readStream(s)).toHaveLength(2);
      });

      it('re-appending the same event ids with expected any is acknowledged and writes nothing', async () => {
        const s = stream();
        const events = [ev('t.A'), ev('t.B')];
        await store.appendToStream(s, [ev('t.0')]);
        await store.appendToStream(s, events, { expectedRevision: ANY });
        const again = await store.appendToStream(s, events, { expectedRevision: ANY });
        expect(again.nextExpectedRevision).toBe(2n);
        expect((await store.readStream(s)).map((e) => e.id)).toEqual([expect.any(String), events[0].id, events[1].id]);
      });

      it('an id seen in one stream does not stop the same id in another stream', async () => {
        const e = ev('t.A');
        const a = stream();
        const b = stream();
        await store.appendToStream(a, [e]);
        await store.appendToStream(b, [e]);
        expect(await store.readStream(b)).toHaveLength(1);
      });
    });

    describe('atomic multi-event append', () => {
      it('writes all events of one append with consecutive revisions and increasing positions', async () => {
        const s = stream();
        const events = [ev('t.A', { n: 1 }), ev('t.B', { n: 2 }), ev('t.C', { n: 3 })];
        const r = await store.appendToStream(s, events, { expectedRevision: NO_STREAM });
        expect(r.nextExpectedRevision).toBe(2n);
        const read = await store.readStream(s);
        expect(read.map((e) => e.revision)).toEqual([0n, 1n, 2n]);
        expect(read.map((e) => e.data)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
        expect(comparePositions(read[0].position, read[1].position)).toBeLessThan(0);
        expect(comparePositions(read[1].position, read[2].position)).toBeLessThan(0);
        expect(comparePositions(read[2].position, r.position)).toBe(0);
      });

      it('an append with one invalid event writes none of them', async () => {
        const s = stream();
        const bad = { id: 'not-a-uuid', type: 't.B', data: {} } as EventData;
        const err = await store.appendToStream(s, [ev('t.A'), bad, ev('t.C')]).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(InvalidEventError);
        expect(await store.readStream(s)).toEqual([]);
      });

      it('an empty type is refused and nothing is written', async () => {
        const s = stream();
        const err = await store.appendToStream(s, [ev('')]).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(InvalidEventError);
        expect(await store.readStream(s)).toEqual([]);
      });

      it('concurrent appends to many streams all land, each exactly once', async () => {
        const streams = Array.from({ length: 20 }, () => stream());
        await Promise.all(
          streams.map((s) => store.appendToStream(s, [ev('t.A'), ev('t.B')], { expectedRevision: NO_STREAM })),
        );
        for (const s of streams) expect(await store.readStream(s)).toHaveLength(2);
      });
    });

    describe('reading a stream', () => {
      it('round-trips id, type, data, metadata, stream, revision and created time', async () => {
        const s = stream();
        const before = Date.now();
        const e = ev('t.Round', { a: 1, nested: { b: [true, null, 'x'] } }, { account_id: 'acc-1' });
        await store.appendToStream(s, [e]);
        const [read] = await store.readStream(s);
        expect(read).toMatchObject({ id: e.id, type: 't.Round', streamId: s, revision: 0n });
        expect(read.data).toEqual(e.data);
        expect(read.metadata).toEqual(e.metadata);
        expect(read.created).toBeInstanceOf(Date);
        expect(read.created.getTime()).toBeGreaterThanOrEqual(before - 5_000);
        expect(read.created.getTime()).toBeLessThanOrEqual(Date.now() + 5_000);
      });

      it('reads forwards from a revision, inclusive, up to maxCount', async () => {
        const s = await streamWith(5);
        const read = await store.readStream(s, { fromRevision: 1n, maxCount: 3 });
        expect(read.map((e) => e.revision)).toEqual([1n, 2n, 3n]);
      });

      it('reads backwards from the end', async () => {
        const s = await streamWith(4);
        const read = await store.readStream(s, { direction: 'backwards', maxCount: 2 });
        expect(read.map((e) => e.revision)).toEqual([3n, 2n]);
      });

      it('reads backwards from a revision, inclusive', async () => {
        const s = await streamWith(5);
        const read = await store.readStream(s, { direction: 'backwards', fromRevision: 2n });
        expect(read.map((e) => e.revision)).toEqual([2n, 1n, 0n]);
      });

      it('reads a missing stream as empty', async () => {
        expect(await store.readStream(stream())).toEqual([]);
        expect(await store.readStream(stream(), { direction: 'backwards' })).toEqual([]);
      });
    });

    describe('reading $all', () => {
      it('reads forwards from a position, inclusive, in append order', async () => {
        const prefix = typePrefix();
        const s1 = stream();
        const s2 = stream();
        const first = await store.appendToStream(s1, [ev(`${prefix}A`)]);
        await store.appendToStream(s2, [ev(`${prefix}B`)]);
        await store.appendToStream(s1, [ev(`${prefix}C`)]);
        const read = (await store.readAll({ from: first.position, maxCount: 1000 })).filter((e) =>
          e.type.startsWith(prefix),
        );
        expect(read.map((e) => e.type)).toEqual([`${prefix}A`, `${prefix}B`, `${prefix}C`]);
        expect(read[0].position).toEqual(first.position);
      });

      it('reads backwards from the end, newest first', async () => {
        const prefix = typePrefix();
        await store.appendToStream(stream(), [ev(`${prefix}A`), ev(`${prefix}B`)]);
        const read = await store.readAll({ direction: 'backwards', maxCount: 2 });
        expect(read.map((e) => e.type)).toEqual([`${prefix}B`, `${prefix}A`]);
      });

      it('reads backwards from a position, exclusive', async () => {
        const prefix = typePrefix();
        const s = stream();
        await store.appendToStream(s, [ev(`${prefix}A`)]);
        await store.appendToStream(s, [ev(`${prefix}B`)]);
        const third = await store.appendToStream(s, [ev(`${prefix}C`)]);
        const read = await store.readAll({ direction: 'backwards', from: third.position, maxCount: 2 });
        expect(read.map((e) => e.type)).toEqual([`${prefix}B`, `${prefix}A`]);
      });

      it('headPosition is the position of the newest event', async () => {
        const r = await store.appendToStream(stream(), [ev('t.Head')]);
        const head = await store.headPosition();
        expect(head).not.toBeNull();
        expect(comparePositions(head!, r.position)).toBe(0);
      });

      it('headPosition with skipTypes lies between the newest other event and the newest event', async () => {
        const prefix = typePrefix();
        const kept = await store.appendToStream(stream(), [ev(`${prefix}Kept`)]);
        const skipped = await store.appendToStream(stream(), [ev(`${prefix}Bulk`), ev(`${prefix}Bulk`)]);
        const head = await store.headPosition({ skipTypes: [`${prefix}Bulk`] });
        expect(head).not.toBeNull();
        expect(comparePositions(head!, kept.position)).toBeGreaterThanOrEqual(0);
        expect(comparePositions(head!, skipped.position)).toBeLessThanOrEqual(0);
      });

      it('answers ping', async () => {
        await expect(store.ping()).resolves.toBeUndefined();
      });
    });

    describe('subscribing to $all', () => {
      it('catches up from a position (exclusive), then goes live, with no gap and no duplicate at the seam', async () => {
        const prefix = typePrefix();
        const s = stream();
        const before = await store.appendToStream(s, [ev(`${prefix}Before`)]);
        await store.appendToStream(s, [ev(`${prefix}1`), ev(`${prefix}2`)]);
        await store.appendToStream(stream(), [ev('other.Noise')]);
        await store.appendToStream(s, [ev(`${prefix}3`)]);

        const sub = store.subscribeToAll({ from: before.position, filter: { eventTypePrefixes: [prefix] } });
        const reader = collect(sub);
        await reader.until((m) => m.some((x) => x.kind === 'caught-up'));
        // Live: appended while the subscription is open, some of them concurrently.
        await Promise.all([
          store.appendToStream(s, [ev(`${prefix}4`)]),
          store.appendToStream(stream(), [ev(`${prefix}5`)]),
        ]);
        await store.appendToStream(s, [ev(`${prefix}6`)]);
        const got = await reader.untilEvents(6);
        await sub.stop();

        expect(got.slice(0, 3).map((e) => e.type)).toEqual([`${prefix}1`, `${prefix}2`, `${prefix}3`]);
        expect(new Set(got.slice(3, 5).map((e) => e.type))).toEqual(new Set([`${prefix}4`, `${prefix}5`]));
        expect(got[5].type).toBe(`${prefix}6`);
        expectStrictlyIncreasing(got);
        // Checkpoints may come anywhere; caught-up comes after the three catch-up events, before the live ones.
        const kinds = reader.messages.map((m) => m.kind).filter((k) => k !== 'checkpoint');
        expect(kinds.indexOf('caught-up')).toBe(3);
      });

      it('filters by stream-name prefix', async () => {
        const streamPrefix = `filt${randomUUID().slice(0, 8)}-`;
        const start = await store.appendToStream(stream(), [ev('t.Start')]);
        await store.appendToStream(`${streamPrefix}a`, [ev('t.X')]);
        await store.appendToStream(stream(), [ev('t.Y')]);
        await store.appendToStream(`${streamPrefix}b`, [ev('t.Z')]);
        const sub = store.subscribeToAll({ from: start.position, filter: { streamNamePrefixes: [streamPrefix] } });
        const reader = collect(sub);
        const got = await reader.untilEvents(2);
        await sub.stop();
        expect(got.map((e) => e.streamId)).toEqual([`${streamPrefix}a`, `${streamPrefix}b`]);
      });

      it('matches any of several prefixes', async () => {
        const p1 = typePrefix();
        const p2 = typePrefix();
        const start = await store.appendToStream(stream(), [ev('t.Start')]);
        await store.appendToStream(stream(), [ev(`${p1}A`), ev('t.Other'), ev(`${p2}B`)]);
        const sub = store.subscribeToAll({ from: start.position, filter: { eventTypePrefixes: [p1, p2] } });
        const got = await collect(sub).untilEvents(2);
        await sub.stop();
        expect(got.map((e) => e.type)).toEqual([`${p1}A`, `${p2}B`]);
      });

      it('from end delivers only events appended after it started', async () => {
        const prefix = typePrefix();
        await store.appendToStream(stream(), [ev(`${prefix}Old`)]);
        const sub = store.subscribeToAll({ from: 'end', filter: { eventTypePrefixes: [prefix] } });
        const reader = collect(sub);
        await reader.until((m) => m.some((x) => x.kind === 'caught-up'));
        await store.appendToStream(stream(), [ev(`${prefix}New`)]);
        const got = await reader.untilEvents(1);
        await sub.stop();
        expect(got.map((e) => e.type)).toEqual([`${prefix}New`]);
      });

      it('from start delivers the whole log in order', async () => {
        const prefix = typePrefix();
        await store.appendToStream(stream(), [ev(`${prefix}A`), ev(`${prefix}B`)]);
        const sub = store.subscribeToAll({ from: 'start', filter: { eventTypePrefixes: [prefix] } });
        const got = await collect(sub).untilEvents(2);
        await sub.stop();
        expect(got.map((e) => e.type)).toEqual([`${prefix}A`, `${prefix}B`]);
      });

      it('sees events appended through another client', async () => {
        const other = await fixture.openAnother();
        try {
          const prefix = typePrefix();
          const sub = store.subscribeToAll({ from: 'end', filter: { eventTypePrefixes: [prefix] } });
          const reader = collect(sub);
          await reader.until((m) => m.some((x) => x.kind === 'caught-up'));
          await other.appendToStream(stream(), [ev(`${prefix}FromOther`)]);
          const got = await reader.untilEvents(1, 10_000);
          await sub.stop();
          expect(got[0].type).toBe(`${prefix}FromOther`);
        } finally {
          await other.close();
        }
      });
    });

    describe('stream metadata and soft delete', () => {
      it('round-trips metadata; {} when none was set', async () => {
        const s = await streamWith(1);
        expect(await store.getStreamMetadata(s)).toEqual({});
        await store.setStreamMetadata(s, { maxAge: 86_400, maxCount: 10, truncateBefore: 0n });
        expect(await store.getStreamMetadata(s)).toEqual({ maxAge: 86_400, maxCount: 10, truncateBefore: 0n });
        await store.setStreamMetadata(s, { maxAge: 60 });
        expect(await store.getStreamMetadata(s)).toEqual({ maxAge: 60 });
      });

      it('maxCount keeps the newest events in stream reads; $all keeps them all', async () => {
        const s = await streamWith(5);
        await store.setStreamMetadata(s, { maxCount: 2 });
        expect((await store.readStream(s)).map((e) => e.revision)).toEqual([3n, 4n]);
        expect((await store.readStream(s, { direction: 'backwards' })).map((e) => e.revision)).toEqual([4n, 3n]);
        const all = await store.readAll({ maxCount: 1_000_000 });
        expect(all.filter((e) => e.streamId === s)).toHaveLength(5);
      });

      it('truncateBefore hides earlier revisions', async () => {
        const s = await streamWith(4);
        await store.setStreamMetadata(s, { truncateBefore: 3n });
        expect((await store.readStream(s)).map((e) => e.revision)).toEqual([3n]);
      });

      it('maxAge hides events recorded longer ago than it', async () => {
        const s = await streamWith(2);
        await store.setStreamMetadata(s, { maxAge: 1 });
        expect(await store.readStream(s)).toHaveLength(2);
        await new Promise((r) => setTimeout(r, 2_100));
        expect(await store.readStream(s)).toEqual([]);
      }, 10_000);

      it('a deleted stream reads as empty, keeps its events in $all, and an append continues after them', async () => {
        const s = await streamWith(3);
        await store.deleteStream(s);
        expect(await store.readStream(s)).toEqual([]);
        const all = await store.readAll({ maxCount: 1_000_000 });
        expect(all.filter((e) => e.streamId === s)).toHaveLength(3);
        const r = await store.appendToStream(s, [ev('t.Again')]);
        expect(r.nextExpectedRevision).toBe(3n);
        expect((await store.readStream(s)).map((e) => [e.revision, e.type])).toEqual([[3n, 't.Again']]);
      });

      it('deleting a missing stream is not an error', async () => {
        await expect(store.deleteStream(stream())).resolves.toBeUndefined();
      });
    });

    // Key streams (a document's data key, sealed) are hard-deleted when their document is, and
    // truncated when re-sealed under a new SECRETS_KEY. On the sqlite store their rows are removed
    // from `events.db` at once; EventStoreDB removes them at its next scavenge. Why a removed row
    // cannot make a consumer skip anything else: a consumer resumes from a position, and reads
    // everything *after* it; removing a row takes only that row out of the read, moves no other
    // row, and positions are never handed out twice — even when the removed row was the newest of
    // the log, the next event goes past it (sqlite: `log_floor`, removed-rows.ts), so a consumer
    // that had already passed the removed row still reads the next event. The cases below check
    // both: other streams' events all arrive, in order, and after the removed one's position.
    describe('hard delete (tombstone) and truncation', () => {
      it('a tombstoned stream reads as empty for ever, and nothing can be appended to it again', async () => {
        const s = await streamWith(2);
        await store.tombstoneStream(s);
        expect(await store.readStream(s)).toEqual([]);
        expect(await store.streamRevision(s)).toBeNull();
        expect(await store.getStreamMetadata(s)).toEqual({});
        for (const expectedRevision of [ANY, NO_STREAM, 1n] as const) {
          const err = await store.appendToStream(s, [ev('t.Back')], { expectedRevision }).catch((e: unknown) => e);
          expect(err).toBeInstanceOf(StreamDeletedError);
        }
        // Done already: a second tombstone, or a soft delete, changes nothing and is not an error.
        await expect(store.tombstoneStream(s)).resolves.toBeUndefined();
        await expect(store.deleteStream(s)).resolves.toBeUndefined();
        await expect(store.tombstoneStream(stream())).resolves.toBeUndefined();
        expect(await store.readStream(s)).toEqual([]);
      });

      it('truncation hides earlier revisions for good, keeps the other metadata, and appends go on from the last revision', async () => {
        const s = await streamWith(3);
        await store.setStreamMetadata(s, { maxAge: 86_400 });
        await store.truncateStream(s, 2n);
        expect((await store.readStream(s)).map((e) => e.revision)).toEqual([2n]);
        expect(await store.getStreamMetadata(s)).toEqual({ maxAge: 86_400, truncateBefore: 2n });
        // Past the end: nothing shows, and the next revision is still 3.
        await store.truncateStream(s, 5n);
        expect(await store.readStream(s)).toEqual([]);
        expect((await store.appendToStream(s, [ev('t.Next')], { expectedRevision: 2n })).nextExpectedRevision).toBe(3n);
      });

      it('a consumer past a removed event at the head of the log still gets every later event of other streams', async () => {
        const prefix = typePrefix();
        const keyStream = stream();
        const start = await store.appendToStream(stream(), [ev(`${prefix}Start`)]);
        const sub = store.subscribeToAll({ from: start.position, filter: { eventTypePrefixes: [prefix] } });
        const reader = collect(sub);
        await store.appendToStream(stream(), [ev(`${prefix}A`)]);
        // The newest event of the whole log, then removed.
        const removed = await store.appendToStream(keyStream, [ev(`${prefix}Key`)]);
        await reader.untilEvents(2);
        await store.tombstoneStream(keyStream);
        await store.appendToStream(stream(), [ev(`${prefix}B`)]);
        await store.appendToStream(stream(), [ev(`${prefix}C`)]);
        const got = await reader.untilEvents(4);
        await sub.stop();
        expect(got.map((e) => e.type)).toEqual([`${prefix}A`, `${prefix}Key`, `${prefix}B`, `${prefix}C`]);
        expectStrictlyIncreasing(got);
        expect(comparePositions(got[2].position, removed.position)).toBeGreaterThan(0);

        // A consumer that resumes from before the removal: the other streams' events, none skipped.
        const again = store.subscribeToAll({ from: start.position, filter: { eventTypePrefixes: [prefix] } });
        const resumed = collect(again);
        await resumed.until((m) => m.some((x) => x.kind === 'caught-up'));
        await again.stop();
        const others = resumed.events().filter((e) => e.streamId !== keyStream);
        expect(others.map((e) => e.type)).toEqual([`${prefix}A`, `${prefix}B`, `${prefix}C`]);
        expectStrictlyIncreasing(resumed.events());
      });
    });

    // A consumer may do anything between two events — await I/O, take its time — while others
    // append: it must still see every event once, in order. The pauses cover one event, a prime
    // that straddles scan pages, the processors' batch size and a page size plus one.
    describe('a consumer that pauses while 16 writers append', () => {
      const patterns: Array<[string, (n: number) => boolean]> = [
        ['after every event', () => true],
        ['every 7 events', (n) => n % 7 === 0],
        ['every 500 events', (n) => n % 500 === 0],
        ['every 511 events', (n) => n % 511 === 0],
        ['at random intervals', () => Math.random() < 0.05],
      ];
      for (const filtered of [false, true]) {
        for (const [name, pauseAfter] of patterns) {
          it(`${filtered ? 'filtered' : 'unfiltered'}, pausing ${name}: every event once, in order`, async () => {
            await pausingConsumerCase({ filtered, pauseAfter });
          }, 60_000);
        }
      }
      it('a consumer that stops mid-way and resubscribes from its checkpoint sees the rest once', async () => {
        await pausingConsumerCase({ filtered: true, pauseAfter: (n) => n % 7 === 0, resubscribeMidway: true });
      }, 60_000);
      if (serverBacked) {
        it('a connection dropped in the middle of a pause loses nothing and repeats nothing', async () => {
          await pausingConsumerCase({
            filtered: true,
            pauseAfter: (n) => n % 7 === 0,
            midPause: async () => fixture.restartServer!(),
          });
        }, 90_000);
      }
    });

    // Only a server-backed adapter has a connection to drop; sqlite has nothing to declare here.
    if (serverBacked)
      describe('a dropped connection', () => {
        it('resubscribes from the last delivered position: nothing lost, nothing repeated', async () => {
          const prefix = typePrefix();
          const s = stream();
          const start = await store.appendToStream(s, [ev('t.Start')]);
          await store.appendToStream(s, [ev(`${prefix}1`), ev(`${prefix}2`)]);
          const sub = store.subscribeToAll({ from: start.position, filter: { eventTypePrefixes: [prefix] } });
          const reader = collect(sub);
          await reader.untilEvents(2);
          await fixture.restartServer!();
          await retry(() => store.appendToStream(s, [ev(`${prefix}3`)]));
          await store.appendToStream(s, [ev(`${prefix}4`)]);
          const got = await reader.untilEvents(4, 20_000);
          await sub.stop();
          expect(got.map((e) => e.type)).toEqual([`${prefix}1`, `${prefix}2`, `${prefix}3`, `${prefix}4`]);
        }, 40_000);
      });

    /**
     * 16 writers append single events (half of them also noise a filter must skip) while one
     * consumer reads, pausing with awaited macrotasks where `pauseAfter` says. `midPause` runs once,
     * inside a pause half-way through (a dropped connection).
     */
    async function pausingConsumerCase(opts: {
      filtered: boolean;
      pauseAfter: (n: number) => boolean;
      midPause?: () => Promise<void>;
      /** Half-way, stop and subscribe again from the last position seen (a restarted processor). */
      resubscribeMidway?: boolean;
    }): Promise<void> {
      const WRITERS = 16;
      const PER_WRITER = 64;
      const prefix = typePrefix();
      const start = await store.appendToStream(stream(), [ev('t.Start')]);
      const open = (from: Position) =>
        store.subscribeToAll({ from, ...(opts.filtered && { filter: { eventTypePrefixes: [prefix] } }) });
      let sub = open(start.position);
      let resubscribed = !opts.resubscribeMidway;
      const expected = WRITERS * PER_WRITER;
      const seen = new Map<string, number>();
      const ours: RecordedEvent[] = [];
      let midPauseDone = !opts.midPause;
      let considered = 0;
      let resolveAll!: () => void;
      const allSeen = new Promise<void>((r) => (resolveAll = r));
      const consume = async (): Promise<void> => {
        let last: Position = start.position;
        for await (const m of sub) {
          if (m.kind === 'checkpoint') last = m.position;
          if (m.kind !== 'event') continue;
          last = m.event.position;
          considered++;
          if (m.event.type.startsWith(prefix)) {
            seen.set(m.event.id, (seen.get(m.event.id) ?? 0) + 1);
            ours.push(m.event);
            if (ours.length === expected) resolveAll();
          }
          if (opts.pauseAfter(considered)) {
            if (!midPauseDone && ours.length >= expected / 2) {
              midPauseDone = true;
              await opts.midPause!();
            }
            // An I/O-sized pause: the writers commit meanwhile.
            await new Promise((r) => setTimeout(r, Math.random() < 0.5 ? 0 : 2));
          }
          if (!resubscribed && ours.length >= expected / 2) {
            resubscribed = true;
            await sub.stop();
            sub = open(last);
            return consume();
          }
        }
      };
      const consumer = consume();
      const writers = Array.from({ length: WRITERS }, async (_, w) => {
        const s = stream();
        for (let i = 0; i < PER_WRITER; i++) {
          // The same event at an exact revision: a retry after an append whose answer was lost to
          // the dropped connection is recognised, not written twice.
          const event = ev(`${prefix}W`, { w, i });
          const expectedRevision = i === 0 ? NO_STREAM : BigInt(i - 1);
          await retry(() => store.appendToStream(s, [event], { expectedRevision }), 100, 100);
          // Noise between our events: a filter must skip it, an unfiltered consumer must pass it.
          if (w % 2 === 0) await retry(() => store.appendToStream(stream(), [ev('noise.N', { w, i })]), 100, 100);
        }
      });
      await Promise.all(writers);
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((r) => (timer = setTimeout(r, 15_000)));
      await Promise.race([allSeen, timeout]);
      clearTimeout(timer);
      // A duplicate would show itself shortly after.
      await new Promise((r) => setTimeout(r, 100));
      await sub.stop();
      await consumer.catch(() => undefined);

      expect(ours.length).toBe(expected);
      expect([...seen.values()].filter((n) => n !== 1)).toEqual([]);
      expectStrictlyIncreasing(ours);
      // Each writer's events arrive in the order it appended them.
      const byWriter = new Map<number, number[]>();
      for (const e of ours) {
        const { w, i } = e.data as { w: number; i: number };
        byWriter.set(w, [...(byWriter.get(w) ?? []), i]);
      }
      for (const [, order] of byWriter) expect(order).toEqual(Array.from({ length: PER_WRITER }, (_, i) => i));
      expect(midPauseDone).toBe(true);
      expect(resubscribed).toBe(true);
    }

    async function streamWith(n: number): Promise<string> {
      const s = stream();
      await store.appendToStream(
        s,
        Array.from({ length: n }, (_, i) => ev('t.N', { i })),
      );
      return s;
    }
  });
}

function stream(): string {
  return `conformance-${randomUUID()}`;
}

function typePrefix(): string {
  return `c${randomUUID().replace(/-/g, '').slice(0, 12)}.`;
}

export function ev(type: string, data: Record<string, unknown> = {}, metadata?: Record<string, unknown>): EventData {
  return { id: randomUUID(), type, data: data as EventData['data'], metadata: metadata as EventData['metadata'] };
}

function expectStrictlyIncreasing(events: RecordedEvent[]): void {
  for (let i = 1; i < events.length; i++) {
    expect(comparePositions(events[i - 1].position, events[i].position)).toBeLessThan(0);
  }
}

/** Pulls messages from a subscription in the background so tests can wait on what arrived. */
export function collect(sub: EventSubscription) {
  const messages: SubscriptionMessage[] = [];
  // Boxed: the subscription may fail with any value, a falsy one too.
  let failure: { error: unknown } | undefined;
  let wake: (() => void) | undefined;
  void (async () => {
    try {
      for await (const m of sub) {
        messages.push(m);
        wake?.();
      }
    } catch (error) {
      failure = { error };
      wake?.();
    }
  })();
  const events = () => messages.flatMap((m) => (m.kind === 'event' ? [m.event] : []));
  async function until(predicate: (m: SubscriptionMessage[]) => boolean, timeoutMs = 5_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(messages)) {
      if (failure) throw failure.error;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(`Timed out waiting on subscription; got ${JSON.stringify(messages.map(describeMessage))}`);
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, Math.min(left, 100));
      });
    }
  }
  return {
    messages,
    events,
    until,
    async untilEvents(n: number, timeoutMs = 5_000): Promise<RecordedEvent[]> {
      await until(() => events().length >= n, timeoutMs);
      // Give a duplicate the chance to show itself before the caller asserts on the list.
      await new Promise((r) => setTimeout(r, 50));
      return events();
    },
  };
}

function describeMessage(m: SubscriptionMessage): string {
  if (m.kind === 'event') return `${m.event.type}@${m.event.position.commit}`;
  if (m.kind === 'checkpoint') return `checkpoint@${m.position.commit}`;
  return m.kind;
}

export type { Position };
