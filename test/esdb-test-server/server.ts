/**
 * A small EventStoreDB gRPC server for tests: the subset of `event_store.client.streams.Streams`
 * that @eventstore/db-client 6.2.1 uses (see /work/shared/ESDB-WIRE.md). Plaintext h2c.
 *
 * Runs in its own process (google-protobuf registers generated classes on a process-global
 * namespace, so it must not share a process with another generated set): start it through
 * `harness.ts`, or by hand:
 *
 *   node -r @swc-node/register test/esdb-test-server/server.ts --data-dir /tmp/esdb --port 2113
 *
 * Prints `ESDB_TEST_SERVER_LISTENING <port>` once bound (`--port 0` picks a free port).
 * ServerFeatures is deliberately not served: grpc-js answers UNIMPLEMENTED, and the client then
 * uses plain `Streams.Append` (BatchAppend is not implemented).
 */
import { randomUUID } from 'node:crypto';
import { dirname } from 'node:path';
import type * as GrpcModule from '@grpc/grpc-js';
import type * as StreamsGrpc from '@eventstore/db-client/generated/streams_grpc_pb';
import type * as StreamsPb from '@eventstore/db-client/generated/streams_pb';
import type * as SharedPb from '@eventstore/db-client/generated/shared_pb';
import { LogStore, type Expected, type ProposedEvent, type StoredEvent, type WriteOutcome } from './log-store';

// Load grpc-js from where the generated service definitions load it: the serializers and
// `instanceof` checks must all see the same module instances.
const generatedDir = dirname(require.resolve('@eventstore/db-client/generated/streams_grpc_pb'));
const grpc = require(require.resolve('@grpc/grpc-js', { paths: [generatedDir] })) as typeof GrpcModule;
const { StreamsService } = require(`${generatedDir}/streams_grpc_pb`) as typeof StreamsGrpc;
const pb = require(`${generatedDir}/streams_pb`) as typeof StreamsPb;
const shared = require(`${generatedDir}/shared_pb`) as typeof SharedPb;

type ReadCall = GrpcModule.ServerWritableStream<StreamsPb.ReadReq, StreamsPb.ReadResp>;
type ReadOptions = StreamsPb.ReadReq.Options;

/** The window for checkpoints when the filter gives no `max` (the server's read batch; unverified). */
const DEFAULT_CHECKPOINT_WINDOW = 32;
const Status = {
  OK: 0,
  INVALID_ARGUMENT: 3,
  FAILED_PRECONDITION: 9,
} as const;

export function createStreamsService(store: LogStore): GrpcModule.UntypedServiceImplementation {
  const impl: StreamsGrpc.IStreamsServer = {
    append: (call, callback) => {
      const requests: StreamsPb.AppendReq[] = [];
      call.on('data', (req: StreamsPb.AppendReq) => requests.push(req));
      call.on('error', () => {}); // the client went away: nothing to answer
      call.on('end', () => {
        const options = requests[0]?.getOptions();
        const identifier = options?.getStreamIdentifier();
        if (!options || !identifier) {
          callback({ code: Status.INVALID_ARGUMENT, details: 'The first AppendReq must carry options' });
          return;
        }
        const streamId = streamName(identifier);
        const expected = appendExpected(options);
        const proposed: ProposedEvent[] = [];
        for (const req of requests.slice(1)) {
          const message = req.getProposedMessage();
          if (!message) continue;
          const meta = message.getMetadataMap();
          proposed.push({
            id: uuidToString(message.getId()),
            type: meta.get('type') ?? '',
            contentType: meta.get('content-type') ?? 'application/octet-stream',
            data: Buffer.from(message.getData_asU8()),
            customMetadata: Buffer.from(message.getCustomMetadata_asU8()),
          });
        }
        const outcome = store.append(streamId, expected, proposed);
        if (outcome.kind === 'stream_deleted') {
          callback(streamDeletedError(streamId));
          return;
        }
        const resp = new pb.AppendResp();
        if (outcome.kind === 'wrong_expected_version') {
          // Only the "new" fields (6–11): the 20.6.0 ones are what the client no longer reads.
          const wev = new pb.AppendResp.WrongExpectedVersion();
          if (outcome.current < 0n) wev.setCurrentNoStream(new shared.Empty());
          else wev.setCurrentRevision(String(outcome.current));
          switch (outcome.expected.kind) {
            case 'any':
              wev.setExpectedAny(new shared.Empty());
              break;
            case 'no_stream':
              wev.setExpectedNoStream(new shared.Empty());
              break;
            case 'stream_exists':
              wev.setExpectedStreamExists(new shared.Empty());
              break;
            case 'revision':
              wev.setExpectedRevision(String(outcome.expected.revision));
              break;
          }
          resp.setWrongExpectedVersion(wev);
        } else {
          const success = new pb.AppendResp.Success();
          if (outcome.revision < 0n) success.setNoStream(new shared.Empty());
          else success.setCurrentRevision(String(outcome.revision));
          if (outcome.position === null) success.setNoPosition(new shared.Empty());
          else success.setPosition(new pb.AppendResp.Position().setCommitPosition(String(outcome.position)).setPreparePosition(String(outcome.position)));
          resp.setSuccess(success);
        }
        callback(null, resp);
      });
    },

    delete: (call, callback) => {
      const options = call.request.getOptions();
      const identifier = options?.getStreamIdentifier();
      if (!options || !identifier) return callback({ code: Status.INVALID_ARGUMENT, details: 'Missing options' });
      const streamId = streamName(identifier);
      const outcome = store.softDelete(streamId, deleteExpected(options));
      const failure = unaryFailure(streamId, outcome);
      if (failure) return callback(failure);
      const resp = new pb.DeleteResp();
      const position = outcome.kind === 'ok' ? outcome.position : null;
      if (position === null) resp.setNoPosition(new shared.Empty());
      else resp.setPosition(new pb.DeleteResp.Position().setCommitPosition(String(position)).setPreparePosition(String(position)));
      callback(null, resp);
    },

    tombstone: (call, callback) => {
      const options = call.request.getOptions();
      const identifier = options?.getStreamIdentifier();
      if (!options || !identifier) return callback({ code: Status.INVALID_ARGUMENT, details: 'Missing options' });
      const streamId = streamName(identifier);
      const outcome = store.tombstone(streamId, deleteExpected(options));
      const failure = unaryFailure(streamId, outcome);
      if (failure) return callback(failure);
      const resp = new pb.TombstoneResp();
      const position = outcome.kind === 'ok' ? outcome.position : null;
      if (position === null) resp.setNoPosition(new shared.Empty());
      else resp.setPosition(new pb.TombstoneResp.Position().setCommitPosition(String(position)).setPreparePosition(String(position)));
      callback(null, resp);
    },

    read: (call) => {
      const options = call.request.getOptions();
      if (!options) {
        call.emit('error', { code: Status.INVALID_ARGUMENT, details: 'Missing options' });
        return;
      }
      const structuredIds = options.getUuidOption()?.hasStructured() ?? false;
      const toResp = (e: StoredEvent) => eventResp(e, structuredIds);
      if (options.hasSubscription()) {
        if (options.hasAll()) subscribeToAll(store, call, options, toResp);
        else subscribeToStream(store, call, options, toResp);
        return;
      }
      const count = BigInt(options.getCount() || '0');
      const backwards = options.getReadDirection() === pb.ReadReq.Options.ReadDirection.BACKWARDS;
      if (options.hasAll()) {
        void writeAll(call, readAll(store, options.getAll()!, backwards, count).map(toResp));
        return;
      }
      const streamOptions = options.getStream();
      const identifier = streamOptions?.getStreamIdentifier();
      if (!streamOptions || !identifier) {
        call.emit('error', { code: Status.INVALID_ARGUMENT, details: 'Missing stream options' });
        return;
      }
      const streamId = streamName(identifier);
      const state = store.stream(streamId);
      if (state?.tombstoned) {
        call.emit('error', streamDeletedError(streamId));
        return;
      }
      const range = state ? store.visibleRange(state) : null;
      if (!state || !range) {
        // A finite read of a missing (or soft-deleted) stream: the message, then OK.
        const resp = new pb.ReadResp().setStreamNotFound(new pb.ReadResp.StreamNotFound().setStreamIdentifier(identifier));
        void writeAll(call, [resp]);
        return;
      }
      const events: StoredEvent[] = [];
      const take = (rev: bigint) => events.push(state.events[Number(rev)]);
      if (backwards) {
        let rev = streamOptions.hasRevision()
          ? min(BigInt(streamOptions.getRevision()), range.last)
          : streamOptions.hasStart()
            ? range.first // "start" backwards: only the first event
            : range.last;
        for (; rev >= range.first && BigInt(events.length) < count; rev--) take(rev);
      } else if (!streamOptions.hasEnd()) {
        let rev = streamOptions.hasRevision() ? max(BigInt(streamOptions.getRevision()), range.first) : range.first;
        for (; rev <= range.last && BigInt(events.length) < count; rev++) take(rev);
      }
      void writeAll(call, events.map(toResp));
    },

    batchAppend: (call) => {
      call.emit('error', { code: 12 /* UNIMPLEMENTED */, details: 'BatchAppend is not implemented by the test server' });
    },
  };
  return impl;
}

function readAll(store: LogStore, all: StreamsPb.ReadReq.Options.AllOptions, backwards: boolean, count: bigint): StoredEvent[] {
  const out: StoredEvent[] = [];
  const log = store.log;
  if (backwards) {
    // From a position: the events strictly before it (the transaction log is read backwards from there).
    let i = all.hasPosition() ? store.indexAtOrAfter(BigInt(all.getPosition()!.getCommitPosition())) - 1 : all.hasStart() ? -1 : log.length - 1;
    for (; i >= 0 && BigInt(out.length) < count; i--) out.push(log[i]);
  } else {
    let i = all.hasPosition() ? store.indexAtOrAfter(BigInt(all.getPosition()!.getCommitPosition())) : all.hasEnd() ? log.length : 0;
    for (; i < log.length && BigInt(out.length) < count; i++) out.push(log[i]);
  }
  return out;
}

/**
 * `$all` subscription: confirmation, catch-up from the in-memory log, caught_up, then live.
 * One cursor into the log serves catch-up and live alike, and the pump is registered in the same
 * tick the cursor is placed, so there is no gap and no duplicate at the seam. The pump stops at
 * `call.write()` backpressure and continues on `drain`.
 */
function subscribeToAll(store: LogStore, call: ReadCall, options: ReadOptions, toResp: (e: StoredEvent) => StreamsPb.ReadResp): void {
  const all = options.getAll()!;
  let cursor = all.hasPosition()
    ? store.indexAfter(BigInt(all.getPosition()!.getCommitPosition()))
    : all.hasEnd()
      ? store.log.length
      : 0;
  const filter = options.hasFilter() ? compileFilter(options.getFilter()!) : null;
  let considered = 0;
  const pump = createPump(store, call, () => {
    if (cursor >= store.log.length) return null;
    const e = store.log[cursor++];
    const out: StreamsPb.ReadResp[] = [];
    if (!filter || filter.matches(e)) out.push(toResp(e));
    if (filter && ++considered % filter.checkpointEvery === 0) {
      out.push(new pb.ReadResp().setCheckpoint(new pb.ReadResp.Checkpoint().setCommitPosition(String(e.position)).setPreparePosition(String(e.position))));
    }
    return out;
  });
  pump.start();
}

/** Stream subscription: events with revision > the given one; `start` = from the first; `end` = only new. */
function subscribeToStream(store: LogStore, call: ReadCall, options: ReadOptions, toResp: (e: StoredEvent) => StreamsPb.ReadResp): void {
  const streamOptions = options.getStream();
  const identifier = streamOptions?.getStreamIdentifier();
  if (!streamOptions || !identifier) {
    call.emit('error', { code: Status.INVALID_ARGUMENT, details: 'Missing stream options' });
    return;
  }
  const streamId = streamName(identifier);
  if (store.stream(streamId)?.tombstoned) {
    call.emit('error', streamDeletedError(streamId));
    return;
  }
  let next = streamOptions.hasRevision()
    ? BigInt(streamOptions.getRevision()) + 1n
    : streamOptions.hasEnd()
      ? store.lastRevision(streamId) + 1n
      : 0n;
  const pump = createPump(store, call, () => {
    const state = store.stream(streamId);
    if (!state) return null;
    if (state.tombstoned) throw streamDeletedError(streamId);
    if (next >= BigInt(state.events.length)) return null;
    const e = state.events[Number(next++)];
    return e.revision >= state.truncateBefore ? [toResp(e)] : [];
  });
  pump.start();
}

/**
 * Drives one subscription: `next()` yields the responses for the next log entry, `null` at the
 * head, or throws a gRPC error to end the call with.
 */
function createPump(store: LogStore, call: ReadCall, next: () => StreamsPb.ReadResp[] | null) {
  let running = false;
  let caughtUp = false;
  let done = false;
  const finish = () => {
    done = true;
    store.listeners.delete(run);
  };
  call.on('cancelled', finish);
  call.on('close', finish);
  call.on('error', finish);

  async function run(): Promise<void> {
    if (running || done) return;
    running = true;
    try {
      while (!done) {
        let batch: StreamsPb.ReadResp[] | null;
        try {
          batch = next();
        } catch (err) {
          finish();
          call.emit('error', err);
          return;
        }
        if (batch === null) {
          if (caughtUp) break;
          caughtUp = true;
          batch = [new pb.ReadResp().setCaughtUp(new pb.ReadResp.CaughtUp())];
        }
        let writable = true;
        for (const resp of batch) writable = call.write(resp) && writable;
        if (!writable) await drained(call);
      }
    } finally {
      running = false;
    }
  }

  return {
    start() {
      call.write(new pb.ReadResp().setConfirmation(new pb.ReadResp.SubscriptionConfirmation().setSubscriptionId(randomUUID())));
      // Registered in the same tick as the cursor was placed: no append can slip between.
      store.listeners.add(run);
      void run();
    },
  };
}

/** Finite reads: write everything honouring backpressure, then end with OK. */
async function writeAll(call: ReadCall, responses: StreamsPb.ReadResp[]): Promise<void> {
  let gone = false;
  call.on('cancelled', () => (gone = true));
  call.on('error', () => (gone = true));
  for (const resp of responses) {
    if (gone) return;
    if (!call.write(resp)) await drained(call);
  }
  if (!gone) call.end();
}

function drained(call: ReadCall): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      call.off('drain', done);
      call.off('cancelled', done);
      call.off('close', done);
      resolve();
    };
    call.on('drain', done);
    call.on('cancelled', done);
    call.on('close', done);
  });
}

interface CompiledFilter {
  matches(e: StoredEvent): boolean;
  checkpointEvery: number;
}

function compileFilter(filter: StreamsPb.ReadReq.Options.FilterOptions): CompiledFilter {
  const onStream = filter.hasStreamIdentifier();
  const expression = onStream ? filter.getStreamIdentifier() : filter.getEventType();
  const prefixes = expression?.getPrefixList() ?? [];
  const regexText = expression?.getRegex() ?? '';
  // Prefixes win when both are given; a regex is a search (like .NET Regex.IsMatch), not anchored.
  const regex = prefixes.length === 0 && regexText !== '' ? new RegExp(regexText) : null;
  const window = filter.hasMax() && filter.getMax() > 0 ? filter.getMax() : DEFAULT_CHECKPOINT_WINDOW;
  const multiplier = Math.max(1, filter.getCheckpointintervalmultiplier());
  return {
    checkpointEvery: window * multiplier,
    matches(e) {
      const subject = onStream ? e.streamId : e.type;
      if (prefixes.length > 0) return prefixes.some((p) => subject.startsWith(p));
      return regex ? regex.test(subject) : true;
    },
  };
}

function eventResp(e: StoredEvent, structuredIds: boolean): StreamsPb.ReadResp {
  const record = new pb.ReadResp.ReadEvent.RecordedEvent()
    .setId(uuidMessage(e.id, structuredIds))
    .setStreamIdentifier(new shared.StreamIdentifier().setStreamName(Buffer.from(e.streamId, 'utf8')))
    .setStreamRevision(String(e.revision))
    .setPreparePosition(String(e.position))
    .setCommitPosition(String(e.position))
    .setData(e.data)
    .setCustomMetadata(e.customMetadata);
  const meta = record.getMetadataMap();
  meta.set('type', e.type);
  meta.set('content-type', e.contentType);
  meta.set('created', e.created);
  const readEvent = new pb.ReadResp.ReadEvent().setEvent(record).setCommitPosition(String(e.position));
  return new pb.ReadResp().setEvent(readEvent);
}

function streamName(identifier: SharedPb.StreamIdentifier): string {
  return Buffer.from(identifier.getStreamName_asU8()).toString('utf8');
}

function uuidToString(uuid: SharedPb.UUID | undefined): string {
  if (!uuid) return randomUUID();
  if (uuid.hasStructured()) {
    const s = uuid.getStructured()!;
    const bytes = Buffer.alloc(16);
    bytes.writeBigInt64BE(BigInt(s.getMostSignificantBits()), 0);
    bytes.writeBigInt64BE(BigInt(s.getLeastSignificantBits()), 8);
    const hex = bytes.toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
  return uuid.getString().toLowerCase();
}

function uuidMessage(id: string, structured: boolean): SharedPb.UUID {
  const uuid = new shared.UUID();
  if (!structured) return uuid.setString(id);
  const bytes = Buffer.from(id.replace(/-/g, ''), 'hex');
  return uuid.setStructured(
    new shared.UUID.Structured()
      .setMostSignificantBits(String(bytes.readBigInt64BE(0)))
      .setLeastSignificantBits(String(bytes.readBigInt64BE(8))),
  );
}

function appendExpected(o: StreamsPb.AppendReq.Options): Expected {
  if (o.hasRevision()) return { kind: 'revision', revision: BigInt(o.getRevision()) };
  if (o.hasNoStream()) return { kind: 'no_stream' };
  if (o.hasStreamExists()) return { kind: 'stream_exists' };
  return { kind: 'any' };
}

function deleteExpected(o: StreamsPb.DeleteReq.Options | StreamsPb.TombstoneReq.Options): Expected {
  if (o.hasRevision()) return { kind: 'revision', revision: BigInt(o.getRevision()) };
  if (o.hasNoStream()) return { kind: 'no_stream' };
  if (o.hasStreamExists()) return { kind: 'stream_exists' };
  return { kind: 'any' };
}

/** Delete/Tombstone report failures as gRPC errors with `exception` trailers (not response fields). */
function unaryFailure(streamId: string, outcome: WriteOutcome): Partial<GrpcModule.StatusObject> | null {
  if (outcome.kind === 'stream_deleted') return streamDeletedError(streamId);
  if (outcome.kind !== 'wrong_expected_version') return null;
  const metadata = new grpc.Metadata();
  metadata.set('exception', 'wrong-expected-version');
  metadata.set('stream-name', streamId);
  metadata.set('expected-version', expectedVersionNumber(outcome.expected));
  metadata.set('actual-version', String(outcome.current));
  return {
    code: Status.FAILED_PRECONDITION,
    details: `Append failed due to WrongExpectedVersion. Stream: ${streamId}, Expected version: ${expectedVersionNumber(outcome.expected)}, Actual version: ${outcome.current}`,
    metadata,
  };
}

function expectedVersionNumber(e: Expected): string {
  switch (e.kind) {
    case 'any':
      return '-2';
    case 'no_stream':
      return '-1';
    case 'stream_exists':
      return '-4';
    case 'revision':
      return String(e.revision);
  }
}

function streamDeletedError(streamId: string): Partial<GrpcModule.StatusObject> {
  const metadata = new grpc.Metadata();
  metadata.set('exception', 'stream-deleted');
  metadata.set('stream-name', streamId);
  return { code: Status.FAILED_PRECONDITION, details: `Event stream '${streamId}' is deleted.`, metadata };
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);
const max = (a: bigint, b: bigint) => (a > b ? a : b);

// ---------------------------------------------------------------------------------------------
// Process entry point

export const LISTENING_MARKER = 'ESDB_TEST_SERVER_LISTENING';

interface Args {
  dataDir: string;
  port: number;
  /** Exit when stdin closes: the harness's way of saying "your parent is gone". */
  exitWithStdin: boolean;
}

function parseArgs(argv: string[]): Args {
  const get = (flag: string) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const dataDir = get('--data-dir') ?? process.env.ESDB_TEST_SERVER_DATA_DIR;
  if (!dataDir) throw new Error('--data-dir (or ESDB_TEST_SERVER_DATA_DIR) is required');
  const port = Number(get('--port') ?? process.env.ESDB_TEST_SERVER_PORT ?? 0);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error('--port must be 0..65535');
  return { dataDir, port, exitWithStdin: argv.includes('--exit-with-stdin') };
}

function main(): void {
  const args = parseArgs(process.argv.slice(2));
  const store = new LogStore(args.dataDir);
  const server = new grpc.Server({ 'grpc.max_receive_message_length': 17 * 1024 * 1024 });
  server.addService(StreamsService as unknown as GrpcModule.ServiceDefinition, createStreamsService(store));

  let stopping = false;
  const shutdown = (code: number) => {
    if (stopping) return;
    stopping = true;
    // tryShutdown never finishes while a subscription is open; clients see CANCELLED/UNAVAILABLE.
    server.forceShutdown();
    store.close();
    process.exit(code);
  };
  process.on('SIGTERM', () => shutdown(0));
  process.on('SIGINT', () => shutdown(0));
  if (args.exitWithStdin) {
    process.stdin.on('end', () => shutdown(0));
    process.stdin.on('close', () => shutdown(0));
    process.stdin.on('error', () => shutdown(0));
    process.stdin.resume();
  }
  // Belt and braces: an orphan is re-parented, so a changed ppid means the parent died.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) shutdown(0);
  }, 500);

  let attempts = 0;
  const bind = () => {
    server.bindAsync(`127.0.0.1:${args.port}`, grpc.ServerCredentials.createInsecure(), (err, port) => {
      if (err) {
        // A restart on the same port may race the old process's socket teardown.
        if (++attempts < 50 && args.port !== 0) {
          setTimeout(bind, 100);
          return;
        }
        process.stderr.write(`esdb-test-server: cannot bind 127.0.0.1:${args.port}: ${err.message}\n`);
        shutdown(1);
        return;
      }
      process.stdout.write(`${LISTENING_MARKER} ${port}\n`);
    });
  };
  bind();
}

if (require.main === module) main();
