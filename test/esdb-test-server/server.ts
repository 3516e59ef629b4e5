/**
 * An EventStoreDB gRPC server for tests, as faithful to a 24.10 single node as @eventstore/db-client
 * 6.2.1 can tell: `Streams` (Read, Append, BatchAppend, Delete, Tombstone) and `ServerFeatures`.
 * Plaintext h2c, or TLS with authentication (security.ts). What it leaves out is listed in README.md next to this file.
 *
 * Runs in its own process (google-protobuf registers generated classes on a process-global
 * namespace, so it must not share a process with another generated set): start it through
 * `harness.ts`, or by hand:
 *
 *   node -r @swc-node/register test/esdb-test-server/server.ts --data-dir /tmp/esdb --port 2113
 *
 * Prints `ESDB_TEST_SERVER_LISTENING <port>` once bound (`--port 0` picks a free port).
 * Options: `--no-server-features` (an old server: the client then appends with `Append`),
 * `--version 24.10.5|24.10.4` (default 24.10.5), `--max-append-size <bytes>` (default 1 MiB), `--max-append-event-size <bytes>` (default
 * unlimited), `--clock-offset-ms <ms>`, `--tls-cert <pem> --tls-key <pem>` (TLS),
 * `--users admin:changeit,…` (authentication; needs TLS, as the client sends no credentials
 * without it), `--read-delay-ms <ms>` (every read waits that long first).
 * With an IPC channel (the harness), it answers control messages: `drop-connections`, `stats`,
 * `advance-clock`.
 */
import { LogStore, type Expected, type ProposedEvent, type StoredEvent, type WriteOutcome } from './log-store';
import {
  Code,
  ServerFeaturesService,
  jspb,
  StreamsService,
  anyPb,
  emptyPb,
  features,
  grpc,
  pb,
  shared,
  status,
  type GrpcModule,
  type SharedPb,
  type StreamsGrpc,
  type StreamsPb,
} from './proto';
import { guarded, parseUsers, serverCredentials, type Gate, type SecurityArgs } from './security';
import {
  compileFilter,
  drained,
  streamDeletedError,
  subscribeToAll,
  subscribeToStream,
  type ReadCall,
} from './subscriptions';

/** ClusterVNodeOptions defaults. */
const DEFAULT_MAX_APPEND_SIZE = 1024 * 1024;
const DEFAULT_MAX_APPEND_EVENT_SIZE = 2 ** 31 - 1;
const WRITE_TIMEOUT_MS = 2_000;
/**
 * The 24.10 patch level to behave as (docker-compose runs the `24.10` image): 24.10.5 by
 * default; 24.10.4 brings back the KDB-710 end checkpoint. Where 23.10 and 24.10 differ
 * (subscriptions), the test server follows 24.10.
 */
export const SERVER_VERSIONS = ['24.10.5', '24.10.4'] as const;
export type ServerVersion = (typeof SERVER_VERSIONS)[number];
/** ASP.NET Core gRPC's status for an exception a handler did not map. */
const HANDLER_EXCEPTION = { code: Code.UNKNOWN, details: 'Exception was thrown by handler.' };

export interface ServerOptions {
  readonly version?: ServerVersion;
  readonly maxAppendSize?: number;
  /** MaxAppendEventSize (24.10.4+): one event's size; unlimited by default. */
  readonly maxAppendEventSize?: number;
}

export interface ServerStats {
  /** gRPC calls per method, e.g. `Streams/Read`. One BatchAppend call carries many appends. */
  readonly calls: Record<string, number>;
  /** Appends completed through BatchAppend (batches whose last chunk arrived). */
  readonly batchAppends: number;
  /** BatchAppend request messages (chunks) received. */
  readonly batchAppendChunks: number;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

export function createStreamsService(
  store: LogStore,
  options: ServerOptions = {},
  stats: Mutable<ServerStats> = newStats(),
): GrpcModule.UntypedServiceImplementation {
  const maxAppendSize = options.maxAppendSize ?? DEFAULT_MAX_APPEND_SIZE;
  const subscriptionVersion = { endCheckpointBeforeKdb710: options.version === '24.10.4' };
  const maxAppendEventSize = options.maxAppendEventSize ?? DEFAULT_MAX_APPEND_EVENT_SIZE;
  const count = (method: string) => (stats.calls[method] = (stats.calls[method] ?? 0) + 1);

  const impl: StreamsGrpc.IStreamsServer = {
    // Streams.Append.cs: options first, then events; size and required metadata checked as they come.
    append: (call, callback) => {
      count('Streams/Append');
      let options: StreamsPb.AppendReq.Options | undefined;
      const proposed: ProposedEvent[] = [];
      let size = 0;
      let answered = false;
      const answer = (err: Partial<GrpcModule.StatusObject> | null, resp?: StreamsPb.AppendResp) => {
        if (answered) return;
        answered = true;
        callback(err, resp);
      };
      call.on('data', (req: StreamsPb.AppendReq) => {
        if (answered) return;
        if (!options) {
          if (!req.hasOptions()) return answer(HANDLER_EXCEPTION);
          options = req.getOptions();
          return;
        }
        const message = req.getProposedMessage();
        if (!message) return answer(HANDLER_EXCEPTION);
        const meta = message.getMetadataMap();
        if (meta.get('type') === undefined) return answer(missingMetadata('type'));
        if (meta.get('content-type') === undefined) return answer(missingMetadata('content-type'));
        const eventSize = sizeOnDisk(message);
        if (eventSize > maxAppendEventSize) {
          // The server puts the UUID message's ToString() (its JSON) in the trailer.
          const id = `{ "string": "${message.getId()?.getString() ?? ''}" }`;
          return answer(maxAppendEventSizeError(id, eventSize, maxAppendEventSize));
        }
        size += eventSize;
        if (size > maxAppendSize) return answer(maxAppendSizeError(maxAppendSize));
        try {
          proposed.push(toProposed(message));
        } catch {
          answer(HANDLER_EXCEPTION);
        }
      });
      call.on('error', () => {}); // the client went away: nothing to answer
      call.on('end', () => {
        if (answered) return;
        const identifier = options?.getStreamIdentifier();
        if (!options || !identifier) return answer(HANDLER_EXCEPTION);
        const expected = expectedOf(options);
        if (!expected) return answer({ code: Code.INVALID_ARGUMENT, details: 'ExpectedStreamRevisionCase not set' });
        const streamId = streamName(identifier);
        const outcome = store.append(streamId, expected, proposed);
        if (outcome.kind === 'stream_deleted') return answer(streamDeletedError(streamId));
        const resp = new pb.AppendResp();
        if (outcome.kind === 'wrong_expected_version')
          resp.setWrongExpectedVersion(appendWrongExpectedVersion(outcome));
        else resp.setSuccess(appendSuccess(outcome));
        answer(null, resp);
      });
    },

    // Streams.BatchAppend.cs: many appends on one bidi call, each buffered by correlation id.
    batchAppend: (call) => {
      count('Streams/BatchAppend');
      const pending = new Map<string, PendingBatch>();
      const timers = new Set<NodeJS.Timeout>();
      let closed = false;
      const respond = (resp: StreamsPb.BatchAppendResp) => {
        if (!closed) call.write(resp);
      };
      const finish = () => {
        closed = true;
        for (const t of timers) clearTimeout(t);
        timers.clear();
      };
      call.on('error', finish);
      call.on('cancelled', finish);
      call.on('end', () => {
        finish();
        call.end();
      });

      call.on('data', (req: StreamsPb.BatchAppendReq) => {
        if (closed) return;
        stats.batchAppendChunks++;
        const correlation = req.getCorrelationId();
        const key = uuidToString(correlation);
        const options = req.getOptions();
        const reply = (identifier: SharedPb.StreamIdentifier | undefined) =>
          new pb.BatchAppendResp().setCorrelationId(correlation).setStreamIdentifier(identifier);
        try {
          if (options) {
            const identifier = options.getStreamIdentifier();
            if (!identifier) {
              return respond(reply(identifier).setError(badRequest('Required field StreamIdentifier not set.')));
            }
            // The deadline is the client's absolute time: compared with the real clock, not the
            // one tests move on for $maxAge (client and server share this machine).
            const deadline = options.hasDeadline() ? options.getDeadline()!.toDate().getTime() : Infinity;
            const timeout = Math.min(deadline - Date.now(), WRITE_TIMEOUT_MS);
            if (timeout <= 0) return respond(reply(identifier).setError(timeoutStatus()));
            if (!pending.has(key)) {
              const expected = batchExpected(options);
              if (!expected) throw new Error(`Unexpected ExpectedStreamPositionCase`);
              pending.set(key, { streamId: streamName(identifier), expected, events: [], size: 0 });
              // Still pending when it fires (no last chunk): a Timeout, echoing the id as the
              // server does here, in structured form.
              const timer = setTimeout(() => {
                timers.delete(timer);
                const batch = pending.get(key);
                if (!batch || !pending.delete(key)) return;
                respond(
                  new pb.BatchAppendResp()
                    .setCorrelationId(uuidMessage(key, true))
                    .setStreamIdentifier(streamIdentifier(batch.streamId))
                    .setError(timeoutStatus()),
                );
              }, timeout);
              timer.unref();
              timers.add(timer);
            }
          }
          const batch = pending.get(key);
          if (!batch) return; // unknown, or already refused: later chunks are ignored
          let eventTooBig = false;
          for (const message of req.getProposedMessagesList()) {
            const event = toProposed(message); // a refusal here is a BadRequest (below)
            const eventSize = sizeOnDisk(message);
            if (eventSize > maxAppendEventSize) {
              pending.delete(key);
              respond(
                reply(streamIdentifier(batch.streamId)).setError(
                  maxAppendEventSizeStatus(event.id, eventSize, maxAppendEventSize),
                ),
              );
              eventTooBig = true;
              break;
            }
            batch.size += eventSize;
            batch.events.push(event);
          }
          if (!eventTooBig && batch.size > maxAppendSize) {
            pending.delete(key);
            respond(reply(streamIdentifier(batch.streamId)).setError(maxAppendSizeStatus(maxAppendSize)));
          }
          if (!req.getIsFinal() || !pending.delete(key)) return;
          stats.batchAppends++;
          const outcome = store.append(batch.streamId, batch.expected, batch.events);
          const resp = reply(streamIdentifier(batch.streamId));
          if (outcome.kind === 'ok') resp.setSuccess(batchSuccess(outcome));
          else if (outcome.kind === 'stream_deleted') resp.setError(streamDeletedStatus(batch.streamId));
          else resp.setError(wrongExpectedVersionStatus(outcome));
          respond(resp);
        } catch (err) {
          // The batch stays pending, so its timer will answer Timeout for the same id later
          // (a second answer the Node client cannot match: see README).
          if (!options) {
            // The server's catch block reads request.Options.StreamIdentifier: with no options
            // that throws too, and the whole call fails.
            finish();
            call.emit('error', HANDLER_EXCEPTION);
            return;
          }
          respond(reply(options.getStreamIdentifier()).setError(badRequest((err as Error).message)));
        }
      });
    },

    delete: (call, callback) => {
      count('Streams/Delete');
      const options = call.request.getOptions();
      const identifier = options?.getStreamIdentifier();
      if (!options || !identifier) return callback(HANDLER_EXCEPTION);
      const expected = expectedOf(options);
      if (!expected) return callback({ code: Code.INVALID_ARGUMENT, details: 'ExpectedStreamRevisionCase not set' });
      const streamId = streamName(identifier);
      const outcome = store.softDelete(streamId, expected);
      const failure = deleteFailure(streamId, outcome);
      if (failure) return callback(failure);
      const resp = new pb.DeleteResp();
      const position = outcome.kind === 'ok' ? outcome.position : null;
      if (position === null) resp.setNoPosition(new shared.Empty());
      else
        resp.setPosition(
          new pb.DeleteResp.Position().setCommitPosition(String(position)).setPreparePosition(String(position)),
        );
      callback(null, resp);
    },

    tombstone: (call, callback) => {
      count('Streams/Tombstone');
      const options = call.request.getOptions();
      const identifier = options?.getStreamIdentifier();
      if (!options || !identifier) return callback(HANDLER_EXCEPTION);
      const expected = expectedOf(options);
      if (!expected) return callback({ code: Code.INVALID_ARGUMENT, details: 'ExpectedStreamRevisionCase not set' });
      const streamId = streamName(identifier);
      const outcome = store.tombstone(streamId, expected);
      const failure = deleteFailure(streamId, outcome);
      if (failure) return callback(failure);
      const resp = new pb.TombstoneResp();
      const position = outcome.kind === 'ok' ? outcome.position : null;
      if (position === null) resp.setNoPosition(new shared.Empty());
      else
        resp.setPosition(
          new pb.TombstoneResp.Position().setCommitPosition(String(position)).setPreparePosition(String(position)),
        );
      callback(null, resp);
    },

    read: (call) => {
      count('Streams/Read');
      const options = call.request.getOptions();
      if (!options) {
        call.emit('error', HANDLER_EXCEPTION);
        return;
      }
      const structuredIds = options.getUuidOption()?.hasStructured() ?? false;
      const toResp = (e: StoredEvent) => eventResp(e, structuredIds);
      const backwards = options.getReadDirection() === pb.ReadReq.Options.ReadDirection.BACKWARDS;
      if (options.hasSubscription()) {
        // Streams.Read.cs: subscriptions go forwards; a filter only on `$all`.
        if (backwards || (options.hasStream() && options.hasFilter())) {
          call.emit('error', { code: Code.INVALID_ARGUMENT, details: 'Invalid combination of read options' });
          return;
        }
        if (options.hasAll()) subscribeToAll(store, call, options, toResp, subscriptionVersion);
        else subscribeToStream(store, call, options, toResp);
        return;
      }
      const maxCount = BigInt(options.getCount() || '0');
      if (options.hasAll()) {
        const from = options.getAll()!.getPosition();
        if (from && !store.isRecordBoundary(BigInt(from.getCommitPosition()))) {
          call.emit('error', { code: Code.INVALID_ARGUMENT, details: 'Trying to read from an invalid position.' });
          return;
        }
        void writeAll(call, readAll(store, options, backwards, maxCount).map(toResp));
        return;
      }
      const streamOptions = options.getStream();
      const identifier = streamOptions?.getStreamIdentifier();
      if (!streamOptions || !identifier) {
        call.emit('error', HANDLER_EXCEPTION);
        return;
      }
      const streamId = streamName(identifier);
      const view = store.streamView(streamId);
      if (view.kind === 'deleted') {
        call.emit('error', streamDeletedError(streamId));
        return;
      }
      if (view.kind === 'no_stream') {
        // A missing or soft-deleted stream: the message, then OK.
        void writeAll(call, [
          new pb.ReadResp().setStreamNotFound(new pb.ReadResp.StreamNotFound().setStreamIdentifier(identifier)),
        ]);
        return;
      }
      const events: StoredEvent[] = [];
      const take = (rev: bigint) => {
        const e = view.events[Number(rev)];
        if (view.visible(e)) events.push(e);
      };
      if (backwards) {
        let rev = streamOptions.hasRevision()
          ? min(BigInt(streamOptions.getRevision()), view.last)
          : streamOptions.hasStart()
            ? 0n // backwards from the start: only event 0
            : view.last;
        for (; rev >= view.min && BigInt(events.length) < maxCount; rev--) take(rev);
      } else if (!streamOptions.hasEnd()) {
        let rev = streamOptions.hasRevision() ? max(BigInt(streamOptions.getRevision()), view.min) : view.min;
        for (; rev <= view.last && BigInt(events.length) < maxCount; rev++) take(rev);
      }
      void writeAll(call, events.map(toResp));
    },
  };
  return impl;
}

interface PendingBatch {
  readonly streamId: string;
  readonly expected: Expected;
  readonly events: ProposedEvent[];
  size: number;
}

export function newStats(): Mutable<ServerStats> {
  return { calls: {}, batchAppends: 0, batchAppendChunks: 0 };
}

/**
 * ServerFeatures.cs lists every endpoint of the node; this lists what the test server serves.
 * Read's features are the server's; BatchAppend's `deadline_duration` is left out because only
 * the Timestamp deadline (what this client sends) is understood here. The version is the patch
 * level the server behaves as.
 */
export function createServerFeaturesService(
  stats: Mutable<ServerStats>,
  version: ServerVersion = '24.10.5',
): GrpcModule.UntypedServiceImplementation {
  const methods: Array<[service: string, method: string, features: string[]]> = [
    ['event_store.client.streams.streams', 'read', ['position', 'events']],
    ['event_store.client.streams.streams', 'append', []],
    ['event_store.client.streams.streams', 'batchappend', []],
    ['event_store.client.streams.streams', 'delete', []],
    ['event_store.client.streams.streams', 'tombstone', []],
    ['event_store.client.server_features.serverfeatures', 'getsupportedmethods', []],
  ];
  return {
    getSupportedMethods: (_call: unknown, callback: GrpcModule.sendUnaryData<unknown>) => {
      stats.calls['ServerFeatures/GetSupportedMethods'] = (stats.calls['ServerFeatures/GetSupportedMethods'] ?? 0) + 1;
      const resp = new features.SupportedMethods().setEventStoreServerVersion(version);
      for (const [service, method, list] of methods) {
        resp.addMethods(
          new features.SupportedMethod().setServiceName(service).setMethodName(method).setFeaturesList(list),
        );
      }
      callback(null, resp);
    },
  };
}

function readAll(
  store: LogStore,
  options: StreamsPb.ReadReq.Options,
  backwards: boolean,
  count: bigint,
): StoredEvent[] {
  const all = options.getAll()!;
  const filter = options.hasFilter() ? compileFilter(options.getFilter()!) : null;
  const out: StoredEvent[] = [];
  const log = store.log;
  const position = all.getPosition();
  const keep = (e: StoredEvent) => {
    if (!filter || filter.matches(e)) out.push(e);
  };
  // `$all` shows every record, including events that `$maxAge`/`$maxCount`/`$tb` or a delete hide
  // from stream reads: the server only drops them when scavenging.
  if (backwards) {
    // From a position: the records that end at or before it (the event at it is not included).
    let i = position
      ? store.countEndingAtOrBefore(BigInt(position.getCommitPosition()), BigInt(position.getPreparePosition())) - 1
      : all.hasStart()
        ? -1
        : log.length - 1;
    for (; i >= 0 && BigInt(out.length) < count; i--) keep(log[i]);
  } else {
    let i = position
      ? store.indexAtOrAfter(BigInt(position.getCommitPosition()), BigInt(position.getPreparePosition()))
      : all.hasEnd()
        ? log.length
        : 0;
    for (; i < log.length && BigInt(out.length) < count; i++) keep(log[i]);
  }
  return out;
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

function eventResp(e: StoredEvent, structuredIds: boolean): StreamsPb.ReadResp {
  const record = new pb.ReadResp.ReadEvent.RecordedEvent()
    .setId(uuidMessage(e.id, structuredIds))
    .setStreamIdentifier(streamIdentifier(e.streamId))
    .setStreamRevision(String(e.revision))
    .setPreparePosition(String(e.position))
    .setCommitPosition(String(e.position))
    .setData(e.data)
    .setCustomMetadata(e.customMetadata);
  const meta = record.getMetadataMap();
  meta.set('type', e.type);
  // The server keeps only "is JSON": any other content type reads back as octet-stream.
  meta.set('content-type', e.contentType === 'application/json' ? 'application/json' : 'application/octet-stream');
  meta.set('created', e.created);
  const readEvent = new pb.ReadResp.ReadEvent().setEvent(record).setCommitPosition(String(e.position));
  return new pb.ReadResp().setEvent(readEvent);
}

/**
 * Event.SizeOnDisk: data + custom metadata + 2 bytes per UTF-16 unit of the type. (Until 24.10.3
 * a precedence slip made it the data length alone.)
 */
function sizeOnDisk(message: StreamsPb.AppendReq.ProposedMessage | StreamsPb.BatchAppendReq.ProposedMessage): number {
  return (
    message.getData_asU8().length +
    message.getCustomMetadata_asU8().length +
    2 * (message.getMetadataMap().get('type') ?? '').length
  );
}

/** The server's Event constructor, with its refusals (BatchAppend answers them as BadRequest). */
function toProposed(
  message: StreamsPb.AppendReq.ProposedMessage | StreamsPb.BatchAppendReq.ProposedMessage,
): ProposedEvent {
  const meta = message.getMetadataMap();
  const type = meta.get('type');
  const contentType = meta.get('content-type');
  if (type === undefined) throw new Error("The given key 'type' was not present in the dictionary.");
  if (contentType === undefined) throw new Error("The given key 'content-type' was not present in the dictionary.");
  const id = message.getId();
  if (!id) throw new Error('Object reference not set to an instance of an object.');
  const eventId = uuidToString(id);
  if (eventId === '00000000-0000-0000-0000-000000000000')
    throw new Error("Empty eventId provided. (Parameter 'eventId')");
  if (type === '') throw new Error("Empty eventType provided. (Parameter 'eventType')");
  return {
    id: eventId,
    type,
    contentType,
    data: Buffer.from(message.getData_asU8()),
    customMetadata: Buffer.from(message.getCustomMetadata_asU8()),
  };
}

function streamName(identifier: SharedPb.StreamIdentifier): string {
  return Buffer.from(identifier.getStreamName_asU8()).toString('utf8');
}

function streamIdentifier(streamId: string): SharedPb.StreamIdentifier {
  return new shared.StreamIdentifier().setStreamName(Buffer.from(streamId, 'utf8'));
}

function uuidToString(uuid: SharedPb.UUID | undefined): string {
  if (!uuid) throw new Error('Object reference not set to an instance of an object.');
  if (uuid.hasStructured()) {
    const s = uuid.getStructured()!;
    const bytes = Buffer.alloc(16);
    bytes.writeBigInt64BE(BigInt(s.getMostSignificantBits()), 0);
    bytes.writeBigInt64BE(BigInt(s.getLeastSignificantBits()), 8);
    const hex = bytes.toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
  const text = uuid.getString().toLowerCase();
  if (!/^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/.test(text.replace(/[{}]/g, ''))) {
    throw new Error('Guid should contain 32 digits with 4 dashes (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx).');
  }
  const hex = text.replace(/[^0-9a-f]/g, '');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
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

/** The expected-revision oneof of Append, Delete and Tombstone options. */
function expectedOf(
  o: StreamsPb.AppendReq.Options | StreamsPb.DeleteReq.Options | StreamsPb.TombstoneReq.Options,
): Expected | null {
  if (o.hasRevision()) return { kind: 'revision', revision: BigInt(o.getRevision()) };
  if (o.hasNoStream()) return { kind: 'no_stream' };
  if (o.hasStreamExists()) return { kind: 'stream_exists' };
  if (o.hasAny()) return { kind: 'any' };
  return null;
}

function batchExpected(o: StreamsPb.BatchAppendReq.Options): Expected | null {
  if (o.hasStreamPosition()) return { kind: 'revision', revision: BigInt(o.getStreamPosition()) };
  if (o.hasNoStream()) return { kind: 'no_stream' };
  if (o.hasStreamExists()) return { kind: 'stream_exists' };
  if (o.hasAny()) return { kind: 'any' };
  return null;
}

function appendSuccess(outcome: Extract<WriteOutcome, { kind: 'ok' }>): StreamsPb.AppendResp.Success {
  const success = new pb.AppendResp.Success();
  if (outcome.revision < 0n) success.setNoStream(new shared.Empty());
  else success.setCurrentRevision(String(outcome.revision));
  if (outcome.position === null) success.setNoPosition(new shared.Empty());
  else
    success.setPosition(
      new pb.AppendResp.Position()
        .setCommitPosition(String(outcome.position))
        .setPreparePosition(String(outcome.position)),
    );
  return success;
}

/** Both the current fields and the 20.6.0 ones, as the server fills them (the client reads the current ones). */
function appendWrongExpectedVersion(
  outcome: Extract<WriteOutcome, { kind: 'wrong_expected_version' }>,
): StreamsPb.AppendResp.WrongExpectedVersion {
  const wev = new pb.AppendResp.WrongExpectedVersion();
  if (outcome.current < 0n) wev.setCurrentNoStream(new shared.Empty()).setNoStream2060(new shared.Empty());
  else wev.setCurrentRevision(String(outcome.current)).setCurrentRevision2060(Number(outcome.current));
  switch (outcome.expected.kind) {
    case 'any':
      wev.setExpectedAny(new shared.Empty()).setAny2060(new shared.Empty());
      break;
    case 'stream_exists':
      wev.setExpectedStreamExists(new shared.Empty()).setStreamExists2060(new shared.Empty());
      break;
    case 'no_stream':
      // The server also puts ulong.MaxValue in expected_revision_20_6_0; that field is a JS number
      // in this generated code, which cannot carry it.
      wev.setExpectedNoStream(new shared.Empty());
      break;
    case 'revision':
      wev
        .setExpectedRevision(String(outcome.expected.revision))
        .setExpectedRevision2060(Number(outcome.expected.revision));
      break;
  }
  return wev;
}

function batchSuccess(outcome: Extract<WriteOutcome, { kind: 'ok' }>): StreamsPb.BatchAppendResp.Success {
  const success = new pb.BatchAppendResp.Success();
  if (outcome.revision < 0n) success.setNoStream(new emptyPb.Empty());
  else success.setCurrentRevision(String(outcome.revision));
  if (outcome.position === null) success.setNoPosition(new emptyPb.Empty());
  else
    success.setPosition(
      new shared.AllStreamPosition()
        .setCommitPosition(String(outcome.position))
        .setPreparePosition(String(outcome.position)),
    );
  return success;
}

/** google.rpc.Status as Status.cs builds them: code, the detail's name as message, packed detail. */
function rpcStatus(
  code: number,
  name: string,
  detail: { serializeBinary(): Uint8Array },
): InstanceType<typeof status.Status> {
  const any = new anyPb.Any();
  any.pack(detail.serializeBinary(), `event_store.client.${name}`);
  return new status.Status().setCode(code).setMessage(name).setDetails(any);
}

function wrongExpectedVersionStatus(outcome: Extract<WriteOutcome, { kind: 'wrong_expected_version' }>) {
  const wev = new shared.WrongExpectedVersion();
  if (outcome.current < 0n) wev.setCurrentNoStream(new emptyPb.Empty());
  else wev.setCurrentStreamRevision(String(outcome.current));
  switch (outcome.expected.kind) {
    case 'any':
      wev.setExpectedAny(new emptyPb.Empty());
      break;
    case 'no_stream':
      wev.setExpectedNoStream(new emptyPb.Empty());
      break;
    case 'stream_exists':
      wev.setExpectedStreamExists(new emptyPb.Empty());
      break;
    case 'revision':
      wev.setExpectedStreamPosition(String(outcome.expected.revision));
      break;
  }
  return rpcStatus(Code.ALREADY_EXISTS, 'WrongExpectedVersion', wev);
}

function streamDeletedStatus(streamId: string) {
  return rpcStatus(
    Code.NOT_FOUND,
    'StreamDeleted',
    new shared.StreamDeleted().setStreamIdentifier(streamIdentifier(streamId)),
  );
}

function maxAppendSizeStatus(maxAppendSize: number) {
  return rpcStatus(
    Code.INVALID_ARGUMENT,
    'MaximumAppendSizeExceeded',
    new shared.MaximumAppendSizeExceeded().setMaxappendsize(maxAppendSize),
  );
}

/** Not in @eventstore/db-client 6.2.1's protos (it reports an UnknownError): encoded by hand. */
function maxAppendEventSizeStatus(eventId: string, proposedSize: number, maxSize: number) {
  const writer = new jspb.BinaryWriter();
  writer.writeString(1, eventId);
  writer.writeUint32(2, proposedSize);
  writer.writeUint32(3, maxSize);
  const bytes = writer.getResultBuffer();
  return rpcStatus(Code.INVALID_ARGUMENT, 'MaximumAppendEventSizeExceeded', { serializeBinary: () => bytes });
}

function timeoutStatus() {
  return rpcStatus(Code.DEADLINE_EXCEEDED, 'Timeout', new shared.Timeout());
}

function badRequest(message: string) {
  return rpcStatus(Code.INVALID_ARGUMENT, 'BadRequest', new shared.BadRequest().setMessage(message));
}

function trailers(entries: Record<string, string>): GrpcModule.Metadata {
  const metadata = new grpc.Metadata();
  for (const [k, v] of Object.entries(entries)) metadata.set(k, v);
  return metadata;
}

function missingMetadata(property: string): Partial<GrpcModule.StatusObject> {
  return {
    code: Code.INVALID_ARGUMENT,
    details: `Required Metadata Property '${property}' is missing`,
    metadata: trailers({
      exception: 'missing-required-metadata-property',
      'required-metadata-properties': 'type,content-type',
    }),
  };
}

function maxAppendEventSizeError(
  eventId: string,
  proposedSize: number,
  maxSize: number,
): Partial<GrpcModule.StatusObject> {
  return {
    code: Code.INVALID_ARGUMENT,
    details: `Event with Id: ${eventId}, Size: ${proposedSize}, exceeds Maximum Append Event Size of ${maxSize}.`,
    metadata: trailers({
      exception: 'maximum-append-event-size-exceeded',
      'maximum-append-event-size': String(maxSize),
      'event-id': eventId,
      'proposed-append-event-size': String(proposedSize),
    }),
  };
}

function maxAppendSizeError(maxAppendSize: number): Partial<GrpcModule.StatusObject> {
  return {
    code: Code.INVALID_ARGUMENT,
    details: `Maximum Append Size of ${maxAppendSize} Exceeded.`,
    metadata: trailers({ exception: 'maximum-append-size-exceeded', 'maximum-append-size': String(maxAppendSize) }),
  };
}

/** Delete/Tombstone report failures as gRPC errors with `exception` trailers (not response fields). */
function deleteFailure(streamId: string, outcome: WriteOutcome): Partial<GrpcModule.StatusObject> | null {
  if (outcome.kind === 'stream_deleted') return streamDeletedError(streamId);
  if (outcome.kind !== 'wrong_expected_version') return null;
  const expected = expectedVersionNumber(outcome.expected);
  return {
    code: Code.FAILED_PRECONDITION,
    details: `Delete failed due to WrongExpectedVersion. Stream: ${streamId}, Expected version: ${expected}, Actual version: ${outcome.current}`,
    metadata: trailers({
      exception: 'wrong-expected-version',
      'stream-name': streamId,
      'expected-version': expected,
      'actual-version': String(outcome.current),
    }),
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

const min = (a: bigint, b: bigint) => (a < b ? a : b);
const max = (a: bigint, b: bigint) => (a > b ? a : b);

// ---------------------------------------------------------------------------------------------
// Process entry point

export const LISTENING_MARKER = 'ESDB_TEST_SERVER_LISTENING';

/** Control messages over the harness's IPC channel. */
export type ControlOp =
  | { readonly op: 'drop-connections' }
  | { readonly op: 'stats' }
  | { readonly op: 'advance-clock'; readonly ms: number }
  | { readonly op: 'set-read-delay'; readonly ms: number };
export type ControlRequest = ControlOp & { readonly id: number };
export type ControlReply = { readonly id: number; readonly result?: unknown; readonly error?: string };

interface Args {
  dataDir: string;
  port: number;
  serverFeatures: boolean;
  version: ServerVersion;
  maxAppendSize: number;
  maxAppendEventSize: number;
  clockOffsetMs: number;
  /** Exit when stdin closes: the harness's way of saying "your parent is gone". */
  exitWithStdin: boolean;
  security: SecurityArgs;
  readDelayMs: number;
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
  const maxAppendSize = Number(get('--max-append-size') ?? DEFAULT_MAX_APPEND_SIZE);
  if (!Number.isInteger(maxAppendSize) || maxAppendSize <= 0)
    throw new Error('--max-append-size must be a positive integer');
  const version = (get('--version') ?? SERVER_VERSIONS[0]) as ServerVersion;
  if (!SERVER_VERSIONS.includes(version)) throw new Error(`--version must be one of ${SERVER_VERSIONS.join(', ')}`);
  const maxAppendEventSize = Number(get('--max-append-event-size') ?? DEFAULT_MAX_APPEND_EVENT_SIZE);
  if (!Number.isInteger(maxAppendEventSize) || maxAppendEventSize <= 0)
    throw new Error('--max-append-event-size must be a positive integer');
  const clockOffsetMs = Number(get('--clock-offset-ms') ?? 0);
  if (!Number.isFinite(clockOffsetMs)) throw new Error('--clock-offset-ms must be a number');
  const security = { tlsCert: get('--tls-cert'), tlsKey: get('--tls-key'), users: parseUsers(get('--users')) };
  if (!security.tlsCert !== !security.tlsKey) throw new Error('--tls-cert and --tls-key go together');
  const readDelayMs = Number(get('--read-delay-ms') ?? 0);
  if (!Number.isInteger(readDelayMs) || readDelayMs < 0) throw new Error('--read-delay-ms must be >= 0');
  return {
    dataDir,
    port,
    serverFeatures: !argv.includes('--no-server-features'),
    version,
    maxAppendSize,
    maxAppendEventSize,
    clockOffsetMs,
    exitWithStdin: argv.includes('--exit-with-stdin'),
    security,
    readDelayMs,
  };
}

function main(): void {
  const args = parseArgs(process.argv.slice(2));
  let clockOffsetMs = args.clockOffsetMs;
  const now = () => Date.now() + clockOffsetMs;
  const store = new LogStore(args.dataDir, { now });
  const stats = newStats();
  const server = new grpc.Server({ 'grpc.max_receive_message_length': 17 * 1024 * 1024 });
  const gate: Gate = { readDelayMs: args.readDelayMs };
  server.addService(
    StreamsService,
    guarded(
      StreamsService,
      createStreamsService(
        store,
        { version: args.version, maxAppendSize: args.maxAppendSize, maxAppendEventSize: args.maxAppendEventSize },
        stats,
      ),
      args.security.users,
      gate,
    ),
  );
  // Without it the client sees UNIMPLEMENTED, as from a pre-21.10 server, and appends with Append.
  // Open to anonymous callers, as on the node.
  if (args.serverFeatures) {
    server.addService(ServerFeaturesService, createServerFeaturesService(stats, args.version));
  }

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
  process.on('disconnect', () => shutdown(0));
  // Belt and braces: an orphan is re-parented, so a changed ppid means the parent died.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) shutdown(0);
  }, 500);

  let boundPort = 0;
  process.on('message', (message: ControlRequest) => {
    const reply = (r: Omit<ControlReply, 'id'>) => process.send?.({ id: message.id, ...r });
    switch (message.op) {
      case 'drop-connections':
        // Every HTTP/2 session goes (GOAWAY, then destroyed at once); the listener and the log stay.
        server.drain(`127.0.0.1:${boundPort}`, 0);
        setTimeout(() => reply({}), 20);
        return;
      case 'stats':
        reply({ result: stats });
        return;
      case 'advance-clock':
        clockOffsetMs += message.ms;
        reply({ result: clockOffsetMs });
        return;
      case 'set-read-delay':
        gate.readDelayMs = message.ms;
        reply({});
        return;
      default:
        reply({ error: `unknown op ${(message as { op: string }).op}` });
    }
  });

  let attempts = 0;
  const bind = () => {
    server.bindAsync(`127.0.0.1:${args.port}`, serverCredentials(args.security), (err, port) => {
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
      boundPort = port;
      process.stdout.write(`${LISTENING_MARKER} ${port}\n`);
    });
  };
  bind();
}

if (require.main === module) main();
