/**
 * Wire-level behaviour of the EventStoreDB test server, driven by the raw @eventstore/db-client
 * (not our adapter): appends on both paths, idempotency, reads, stream metadata, deletes and
 * restarts, each as a 24.10 server answers. Subscriptions are in subscriptions.spec.ts.
 */
import { randomUUID } from 'node:crypto';
import {
  BACKWARDS,
  END,
  EventStoreDBClient,
  START,
  DeadlineExceededError,
  MaxAppendSizeExceededError,
  StreamDeletedError,
  StreamNotFoundError,
  UnknownError,
  WrongExpectedVersionError,
  jsonEvent,
} from '@eventstore/db-client';
import type { EsdbTestServer, ServerStats } from './harness';
// The generated code and grpc-js the client itself uses, for wire-level calls.
import {
  type FeaturesPb,
  grpc,
  pb,
  ServerFeaturesClient,
  shared,
  StreamsClient,
  type StreamsPb,
  timestampPb,
} from './proto';
import {
  event,
  prefix,
  readAll as readAllWith,
  readStream as readStreamWith,
  record,
  serverAndClient,
  sleep,
  stream,
  withOwnServer,
} from './raw-client';
import { retry } from '../../libs/event-store/src/testing/retry';

const env = serverAndClient();

const readStream = (name: string, options?: Parameters<EventStoreDBClient['readStream']>[1]) =>
  readStreamWith(env.client, name, options);
const readAll = (options?: Parameters<EventStoreDBClient['readAll']>[0]) => readAllWith(env.client, options);
const types = async (name: string, options?: Parameters<EventStoreDBClient['readStream']>[1]) =>
  (await readStream(name, options)).map((e) => e.type);
/** long.MaxValue as the client's JSON.parse sees it. */
const DELETED_TB = Number(9223372036854775807n);

/** Stats before and after `fn`, for "which path did it take". */
async function delta(target: EsdbTestServer, fn: () => Promise<unknown>) {
  const before = await target.stats();
  await fn();
  const after = await target.stats();
  const calls = (s: ServerStats, m: string) => s.calls[m] ?? 0;
  return {
    batchAppends: after.batchAppends - before.batchAppends,
    batchAppendChunks: after.batchAppendChunks - before.batchAppendChunks,
    appendCalls: calls(after, 'Streams/Append') - calls(before, 'Streams/Append'),
  };
}

describe('server features and the append path', () => {
  it('advertises BatchAppend, with the 24.10 patch level it behaves as', async () => {
    const raw = new ServerFeaturesClient(`127.0.0.1:${env.server.port}`, grpc.credentials.createInsecure());
    try {
      const supported = await new Promise<FeaturesPb.SupportedMethods>((resolve, reject) =>
        raw.getSupportedMethods(new shared.Empty(), (err, resp) => (err ? reject(err) : resolve(resp))),
      );
      expect(supported.getEventStoreServerVersion()).toBe('24.10.5');
      const paths = supported.getMethodsList().map((m) => `${m.getServiceName()}/${m.getMethodName()}`);
      expect(paths).toEqual(
        expect.arrayContaining([
          'event_store.client.streams.streams/batchappend',
          'event_store.client.streams.streams/read',
        ]),
      );
    } finally {
      raw.close();
    }
  });

  it('the client appends through BatchAppend; without ServerFeatures (an older server) through Append', async () => {
    const viaBatch = await delta(env.server, () => env.client.appendToStream(stream(), [event('A')]));
    expect(viaBatch).toMatchObject({ batchAppends: 1, appendCalls: 0 });

    await withOwnServer({ serverFeatures: false }, async (old, oldClient) => {
      const viaAppend = await delta(old, () => oldClient.appendToStream(stream(), [event('A')]));
      expect(viaAppend).toMatchObject({ batchAppends: 0, appendCalls: 1 });
    });
  });
});

describe('append', () => {
  it('writes events with consecutive revisions and reports the last revision and its position', async () => {
    const s = stream();
    const r = await env.client.appendToStream(s, [event('A', { n: 1 }, { account: 'a1' }), event('B', { n: 2 })], {
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
    if (exists) await env.client.appendToStream(s, [event('A'), event('A')]);
    const err = await env.client.appendToStream(s, [event('B')], { expectedRevision }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WrongExpectedVersionError);
    expect(err).toMatchObject({ streamName: s, expectedVersion: expectedRevision, actualVersion });
  });

  it('many appends in flight on the one BatchAppend call each get their own answer', async () => {
    const streams = Array.from({ length: 20 }, () => stream());
    await env.client.appendToStream(streams[7], [event('Already')]);
    const results = await Promise.allSettled(
      streams.map((s, i) =>
        env.client.appendToStream(s, [event(`E${i}`), event(`F${i}`)], { expectedRevision: 'no_stream' }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(streams.map((_, i) => (i === 7 ? 'rejected' : 'fulfilled')));
    expect((results[7] as PromiseRejectedResult).reason).toBeInstanceOf(WrongExpectedVersionError);
    for (const [i, s] of streams.entries()) {
      expect(await types(s)).toEqual(i === 7 ? ['Already'] : [`E${i}`, `F${i}`]);
    }
  });

  it('a batch sent in chunks is buffered until its last chunk and written whole', async () => {
    const s = stream();
    const payload = 'z'.repeat(500);
    const counts = await delta(env.server, () =>
      env.client.appendToStream(
        s,
        Array.from({ length: 40 }, (_, i) => event('Chunked', { i, payload })),
        { batchAppendSize: 4_096 },
      ),
    );
    expect(counts.batchAppends).toBe(1);
    expect(counts.batchAppendChunks).toBeGreaterThan(1);
    const read = await readStream(s);
    expect(read.map((e) => e.revision)).toEqual(Array.from({ length: 40 }, (_, i) => BigInt(i)));
  });

  it('a batch whose deadline has passed is refused with Timeout and writes nothing', async () => {
    const s = stream();
    await expect(env.client.appendToStream(s, [event('Late')], { deadline: 0 })).rejects.toBeInstanceOf(
      DeadlineExceededError,
    );
    await expect(readStream(s)).rejects.toBeInstanceOf(StreamNotFoundError);
  });

  it('more than MaxAppendSize (1 MiB of event data, metadata and type) is refused, on both append paths', async () => {
    const big = { blob: 'x'.repeat(1024 * 1024) };
    const s = stream();
    await expect(env.client.appendToStream(s, [event('Big', big)])).rejects.toBeInstanceOf(MaxAppendSizeExceededError);
    await expect(readStream(s)).rejects.toBeInstanceOf(StreamNotFoundError);

    await withOwnServer({ serverFeatures: false, maxAppendSize: 1_000 }, async (_, oldClient) => {
      const err = await oldClient
        .appendToStream(stream(), [event('A', { blob: 'y'.repeat(600) }), event('B', { blob: 'y'.repeat(600) })])
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MaxAppendSizeExceededError);
      expect(err).toMatchObject({ maxAppendSize: 1_000 });
    });
  });

  it('an event over MaxAppendEventSize (24.10.4+, unlimited by default) is refused; this client calls it unknown', async () => {
    for (const serverFeatures of [true, false]) {
      await withOwnServer({ serverFeatures, maxAppendEventSize: 1_000 }, async (_, c) => {
        const s = stream();
        await c.appendToStream(s, [event('Small', { blob: 'x'.repeat(900) })]);
        const err = await c.appendToStream(s, [event('Big', { blob: 'x'.repeat(1_000) })]).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(UnknownError);
        expect((await readStreamWith(c, s)).map((e) => e.type)).toEqual(['Small']);
      });
    }
  });

  it('throwOnAppendFailure=false: Append reports the current revision; BatchAppend, through a client bug, 1', async () => {
    const s = stream();
    await env.client.appendToStream(s, [event('A'), event('A'), event('A')]);
    const lenient = EventStoreDBClient.connectionString(`${env.server.connectionString}&throwOnAppendFailure=false`);
    try {
      // 6.2.1 builds nextExpectedRevision from hasCurrentStreamRevision() (a boolean) on this path.
      expect(await lenient.appendToStream(s, [event('B')], { expectedRevision: 'no_stream' })).toMatchObject({
        success: false,
        nextExpectedRevision: 1n,
      });
    } finally {
      await lenient.dispose();
    }
    await withOwnServer(
      { serverFeatures: false },
      async (_, oldLenient) => {
        const o = stream();
        await oldLenient.appendToStream(o, [event('A'), event('A'), event('A')]);
        expect(await oldLenient.appendToStream(o, [event('B')], { expectedRevision: 'no_stream' })).toMatchObject({
          success: false,
          nextExpectedRevision: 2n,
        });
      },
      '&throwOnAppendFailure=false',
    );
  });

  it('an event the server cannot take is a BadRequest, and the batch then times out under the same id', async () => {
    // On the wire: after BadRequest the batch stays pending on the server, so its write timeout
    // answers again for the same correlation id. @eventstore/db-client 6.2.1 cannot match that
    // second answer and throws inside its stream handler; never send such an event.
    const raw = new StreamsClient(`127.0.0.1:${env.server.port}`, grpc.credentials.createInsecure());
    const call = raw.batchAppend();
    try {
      const answers: StreamsPb.BatchAppendResp[] = [];
      call.on('data', (resp) => answers.push(resp));
      call.on('error', () => {});
      const correlation = randomUUID();
      const options = new pb.BatchAppendReq.Options()
        .setStreamIdentifier(new shared.StreamIdentifier().setStreamName(Buffer.from(stream())))
        .setAny(new shared.Empty())
        .setDeadline(timestampPb.Timestamp.fromDate(new Date(Date.now() + 200)));
      const message = new pb.BatchAppendReq.ProposedMessage()
        .setId(new shared.UUID().setString(randomUUID()))
        .setData(Buffer.from('{}'));
      message.getMetadataMap().set('type', '').set('content-type', 'application/json');
      call.write(
        new pb.BatchAppendReq()
          .setCorrelationId(new shared.UUID().setString(correlation))
          .setOptions(options)
          .setProposedMessagesList([message])
          .setIsFinal(true),
      );
      const deadline = Date.now() + 5_000;
      while (answers.length < 2 && Date.now() < deadline) await sleep(20);
      expect(answers.map((a) => [a.getError()?.getMessage(), a.getError()?.getDetails()?.getTypeName()])).toEqual([
        ['BadRequest', 'event_store.client.BadRequest'],
        ['Timeout', 'event_store.client.Timeout'],
      ]);
      expect(answers[0].getCorrelationId()?.getString()).toBe(correlation);
      // The timeout answer carries the id in structured form.
      const structured = answers[1].getCorrelationId()!.getStructured()!;
      const bytes = Buffer.alloc(16);
      bytes.writeBigInt64BE(BigInt(structured.getMostSignificantBits()), 0);
      bytes.writeBigInt64BE(BigInt(structured.getLeastSignificantBits()), 8);
      expect(bytes.toString('hex')).toBe(correlation.replace(/-/g, ''));
    } finally {
      call.end();
      raw.close();
    }
  });
});

describe('idempotent re-append by event id', () => {
  it('acknowledges a re-append of the same ids with the same expected revision, writing nothing', async () => {
    const s = stream();
    const events = [event('A'), event('B')];
    const first = await env.client.appendToStream(s, events, { expectedRevision: 'no_stream' });
    const again = await env.client.appendToStream(s, events, { expectedRevision: 'no_stream' });
    expect(again).toMatchObject({ success: true, nextExpectedRevision: 1n, position: first.position });
    expect(await readStream(s)).toHaveLength(2);
  });

  it('with expected any: acknowledged wherever the ids are in the stream, reporting the last one', async () => {
    const s = stream();
    const a = event('A');
    const b = event('B');
    await env.client.appendToStream(s, [event('Zero'), a]);
    await env.client.appendToStream(s, [event('Between')]);
    await env.client.appendToStream(s, [b, event('Later')]);
    const again = await env.client.appendToStream(s, [a, b], { expectedRevision: 'any' });
    expect(again.nextExpectedRevision).toBe(3n);
    expect(await types(s)).toEqual(['Zero', 'A', 'Between', 'B', 'Later']);
  });

  it('refuses a partial overlap as a wrong expected version', async () => {
    const s = stream();
    const a = event('A');
    await env.client.appendToStream(s, [a, event('B')]);
    const err = await env.client.appendToStream(s, [a, event('C')]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WrongExpectedVersionError);
    expect(await readStream(s)).toHaveLength(2);
  });

  it('refuses a re-append whose expected revision does not match where the ids are', async () => {
    const s = stream();
    const events = [event('A')];
    await env.client.appendToStream(s, [event('Zero')]);
    await env.client.appendToStream(s, events, { expectedRevision: 0n });
    const err = await env.client.appendToStream(s, events, { expectedRevision: 'no_stream' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ actualVersion: 1n, expectedVersion: 'no_stream' });
  });

  it('an expected revision equal to the current one is a new write, even for ids already in the stream', async () => {
    const s = stream();
    const a = event('A');
    await env.client.appendToStream(s, [a], { expectedRevision: 'no_stream' });
    const again = await env.client.appendToStream(s, [a], { expectedRevision: 0n });
    expect(again.nextExpectedRevision).toBe(1n);
    expect((await readStream(s)).map((e) => e.id)).toEqual([a.id, a.id]);
  });

  it('treats the same id in another stream as a new event', async () => {
    const e = event('A');
    await env.client.appendToStream(stream(), [e]);
    const other = stream();
    await env.client.appendToStream(other, [e]);
    expect((await readStream(other)).map((x) => x.id)).toEqual([e.id]);
  });
});

describe('reading a stream', () => {
  let s: string;
  beforeAll(async () => {
    s = stream();
    await env.client.appendToStream(
      s,
      Array.from({ length: 5 }, (_, i) => event(`E${i}`)),
    );
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
    await expect(readStream(stream(), { direction: BACKWARDS, fromRevision: END })).rejects.toBeInstanceOf(
      StreamNotFoundError,
    );
  });
});

describe('reading $all', () => {
  it('forwards from a position is inclusive; backwards from a position is exclusive', async () => {
    const s = stream();
    const p = prefix();
    const first = await env.client.appendToStream(s, [event(`${p}A`)]);
    await env.client.appendToStream(s, [event(`${p}B`)]);
    const third = await env.client.appendToStream(s, [event(`${p}C`)]);
    const forwards = (await readAll({ fromPosition: first.position!, maxCount: 3 })).map((e) => e.type);
    expect(forwards).toEqual([`${p}A`, `${p}B`, `${p}C`]);
    const backwards = (await readAll({ direction: BACKWARDS, fromPosition: third.position!, maxCount: 2 })).map(
      (e) => e.type,
    );
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
      await env.client.appendToStream(
        s,
        Array.from({ length: 200 }, (_, j) => event('Big', { i: i * 200 + j, payload })),
      );
    }
    const read = await readStream(s);
    expect(read.map((e) => (e.data as { i: number }).i)).toEqual(Array.from({ length: 2_000 }, (_, i) => i));
  });
});

describe('stream metadata', () => {
  /** A stream with events E0..E(n-1), and where `$all` had them. */
  async function streamWith(n: number) {
    const s = stream();
    const r = await env.client.appendToStream(
      s,
      Array.from({ length: n }, (_, i) => event(`E${i}`)),
    );
    return { s, last: r.position! };
  }

  it('$maxCount keeps the newest events in stream reads; getStreamMetadata returns what was set', async () => {
    const { s } = await streamWith(5);
    await env.client.setStreamMetadata(s, { maxCount: 2 });
    expect(await types(s)).toEqual(['E3', 'E4']);
    expect(await types(s, { direction: BACKWARDS, fromRevision: END })).toEqual(['E4', 'E3']);
    expect(await types(s, { fromRevision: 1n, maxCount: 1 })).toEqual(['E3']);
    expect((await env.client.getStreamMetadata(s)).metadata).toEqual({ maxCount: 2 });
  });

  it('$tb hides the revisions before it; a read entirely below it is empty, not "not found"', async () => {
    const { s } = await streamWith(5);
    await env.client.setStreamMetadata(s, { truncateBefore: 3 });
    expect(await types(s)).toEqual(['E3', 'E4']);
    expect(await types(s, { direction: BACKWARDS, fromRevision: START })).toEqual([]);
  });

  it('$maxAge hides events older than it at the time of the read', async () => {
    const { s } = await streamWith(2);
    await env.client.setStreamMetadata(s, { maxAge: 60 });
    expect(await types(s)).toEqual(['E0', 'E1']);
    await env.server.advanceClock(61_000);
    expect(await types(s)).toEqual([]);
    await env.client.appendToStream(s, [event('Fresh')]);
    expect(await types(s)).toEqual(['Fresh']);
  });

  it('$all still returns events that metadata hides from the stream (until a scavenge, which this server never runs)', async () => {
    const p = prefix();
    const s = stream();
    const start = await env.client.appendToStream(stream(), [event('Start')]);
    await env.client.appendToStream(s, [event(`${p}A`), event(`${p}B`)]);
    await env.client.setStreamMetadata(s, { truncateBefore: 2 });
    expect(await types(s)).toEqual([]);
    const all = await readAll({ fromPosition: start.position!, maxCount: 4 });
    expect(all.map((e) => e.type)).toEqual(['Start', `${p}A`, `${p}B`, '$metadata']);
  });

  it('metadata the server cannot read is ignored whole', async () => {
    const { s } = await streamWith(3);
    // 1.5 is a float where the server wants an integer: none of this metadata applies.
    await env.client.appendToStream(`$$${s}`, [jsonEvent({ type: '$metadata', data: { $maxCount: 1.5, $tb: 2 } })]);
    expect(await types(s)).toEqual(['E0', 'E1', 'E2']);
  });

  it('a metastream shows only its newest event; $all has every version', async () => {
    const { s, last } = await streamWith(1);
    await env.client.setStreamMetadata(s, { maxCount: 10 });
    await env.client.setStreamMetadata(s, { maxCount: 20 });
    const meta = await readStream(`$$${s}`);
    expect(meta.map((e) => [e.revision, e.data])).toEqual([[1n, { $maxCount: 20 }]]);
    const all = await readAll({ fromPosition: last, maxCount: 3 });
    expect(all.map((e) => e.streamId)).toEqual([s, `$$${s}`, `$$${s}`]);
  });
});

describe('delete and tombstone', () => {
  it('soft delete: reads say not found, metadata is $tb = long.MaxValue, $all keeps the events', async () => {
    const s = stream();
    await env.client.appendToStream(s, [event('A'), event('B')]);
    await env.client.setStreamMetadata(s, { maxAge: 3600, custom: 'gone after the delete' });
    await env.client.deleteStream(s, { expectedRevision: 1n });
    await expect(readStream(s)).rejects.toBeInstanceOf(StreamNotFoundError);
    // The delete replaces the whole metadata.
    expect((await env.client.getStreamMetadata(s)).metadata).toEqual({ truncateBefore: DELETED_TB });
    const all = await readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 4 });
    expect(all.map((e) => [e.streamId, e.type]).reverse()).toEqual([
      [s, 'A'],
      [s, 'B'],
      [`$$${s}`, '$metadata'],
      [`$$${s}`, '$metadata'],
    ]);
  });

  it('a later append continues at last+1 and shows only the new events (the server rewrites $tb)', async () => {
    const s = stream();
    await env.client.appendToStream(s, [event('A'), event('B')]);
    await env.client.deleteStream(s);
    const r = await env.client.appendToStream(s, [event('C')]);
    expect(r.nextExpectedRevision).toBe(2n);
    expect((await readStream(s)).map((e) => [e.type, e.revision])).toEqual([['C', 2n]]);
    expect((await env.client.getStreamMetadata(s)).metadata).toEqual({ truncateBefore: 2 });
  });

  it('after a soft delete, no_stream is accepted and stream_exists is StreamDeletedError', async () => {
    const s = stream();
    await env.client.appendToStream(s, [event('A')]);
    await env.client.deleteStream(s);
    await expect(
      env.client.appendToStream(s, [event('B')], { expectedRevision: 'stream_exists' }),
    ).rejects.toBeInstanceOf(StreamDeletedError);
    const r = await env.client.appendToStream(s, [event('B')], { expectedRevision: 'no_stream' });
    expect(r.nextExpectedRevision).toBe(1n);
  });

  it('setting metadata on a soft-deleted stream undeletes it past its old events', async () => {
    const s = stream();
    await env.client.appendToStream(s, [event('A'), event('B')]);
    await env.client.deleteStream(s);
    await env.client.setStreamMetadata(s, { maxCount: 10 });
    expect((await env.client.getStreamMetadata(s)).metadata).toEqual({ maxCount: 10, truncateBefore: 2 });
    expect(await readStream(s)).toEqual([]);
  });

  it('deleting a stream that never existed, or with a wrong expected revision, is a WrongExpectedVersionError from trailers', async () => {
    const missing = stream();
    const err = await env.client.deleteStream(missing).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WrongExpectedVersionError);
    expect(err).toMatchObject({ streamName: missing });

    const s = stream();
    await env.client.appendToStream(s, [event('A')]);
    const wrong = await env.client.deleteStream(s, { expectedRevision: 5n }).catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(WrongExpectedVersionError);
    expect(wrong).toMatchObject({ streamName: s, expectedVersion: 5n, actualVersion: 0n });
  });

  it('tombstone: reads, appends, metadata, deletes and subscriptions fail with StreamDeletedError', async () => {
    const s = stream();
    await env.client.appendToStream(s, [event('A')]);
    await env.client.tombstoneStream(s, { expectedRevision: 0n });
    await expect(readStream(s)).rejects.toBeInstanceOf(StreamDeletedError);
    const err = await env.client.appendToStream(s, [event('B')]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StreamDeletedError);
    expect(err).toMatchObject({ streamName: s });
    await expect(env.client.setStreamMetadata(s, { maxCount: 1 })).rejects.toBeInstanceOf(StreamDeletedError);
    await expect(env.client.getStreamMetadata(s)).rejects.toBeInstanceOf(StreamDeletedError);
    await expect(env.client.deleteStream(s)).rejects.toBeInstanceOf(StreamDeletedError);
    await expect(env.client.tombstoneStream(s)).rejects.toBeInstanceOf(StreamDeletedError);
    const sub = env.client.subscribeToStream(s);
    const failure = await new Promise((resolve) => sub.once('error', resolve));
    expect(failure).toBeInstanceOf(StreamDeletedError);
    // Its `$streamDeleted` record is a system event in `$all`.
    const [last] = await readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 });
    expect([last.streamId, last.type, last.revision]).toEqual([s, '$streamDeleted', 9223372036854775807n]);
  });

  it('a live stream subscription receives the tombstone, then fails', async () => {
    const s = stream();
    await env.client.appendToStream(s, [event('A')]);
    const sub = env.client.subscribeToStream(s, { fromRevision: END });
    const rec = record(sub);
    await rec.until(() => rec.log.includes('caught-up'));
    await env.client.tombstoneStream(s);
    await rec.until(() => rec.failure !== undefined).catch(() => {});
    expect(rec.failure).toBeInstanceOf(StreamDeletedError);
    expect(rec.log).toEqual(['caught-up', '$streamDeleted']);
  });
});

describe('dropped connections and restarts', () => {
  it('dropConnections ends open calls but keeps the server: data and the idempotency cache survive', async () => {
    const s = stream();
    const events = [event('A'), event('B')];
    await env.client.appendToStream(s, events);
    const sub = env.client.subscribeToAll({ fromPosition: END });
    const rec = record(sub);
    await rec.until(() => rec.log.includes('caught-up'));
    const dropped = new Promise((resolve) => sub.once('error', resolve));
    await env.server.dropConnections();
    expect(await dropped).toBeInstanceOf(Error);
    // Same process: `any` still recognises the ids (the cache would be empty after a restart).
    const again = await retry(() => env.client.appendToStream(s, events, { expectedRevision: 'any' }));
    expect(again.nextExpectedRevision).toBe(1n);
    expect(await types(s)).toEqual(['A', 'B']);
  });

  it.each(['SIGTERM', 'SIGKILL'] as const)('keeps the data across a restart (%s) on the same port', async (signal) => {
    const s = stream();
    const before = await env.client.appendToStream(s, [event('A'), event('B')]);
    const port = env.server.port;
    await env.server.restart(signal);
    expect(env.server.port).toBe(port);
    // The first call after the drop may fail while the client notices; it then reconnects.
    const read = await retry(() => readStream(s));
    expect(read.map((e) => e.type)).toEqual(['A', 'B']);
    const after = await env.client.appendToStream(s, [event('C')], { expectedRevision: 1n });
    expect(after.position!.commit).toBeGreaterThan(before.position!.commit);
  });

  it('idempotency with any is lost in a restart (in-memory cache); with an exact revision it is not', async () => {
    const s = stream();
    const events = [event('A'), event('B')];
    await env.client.appendToStream(s, events, { expectedRevision: 'no_stream' });
    await env.server.restart();
    const exact = await retry(() => env.client.appendToStream(s, events, { expectedRevision: 'no_stream' }));
    expect(exact.nextExpectedRevision).toBe(1n);
    const any = await env.client.appendToStream(s, events, { expectedRevision: 'any' });
    expect(any.nextExpectedRevision).toBe(3n);
    expect(await types(s)).toEqual(['A', 'B', 'A', 'B']);
  });

  it('drops open subscriptions on restart', async () => {
    const sub = env.client.subscribeToAll({ fromPosition: END });
    const rec = record(sub);
    await rec.until(() => rec.log.includes('caught-up'));
    const dropped = new Promise((resolve) => sub.once('error', resolve));
    await env.server.restart();
    expect(await dropped).toBeInstanceOf(Error);
  });
});
