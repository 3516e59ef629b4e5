import {
  AccessDeniedError,
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  InvalidArgumentError,
  START,
  StreamNotFoundError,
  UnsupportedError,
  WrongExpectedVersionError as EsdbWrongExpectedVersionError,
  eventTypeFilter,
  excludeSystemEvents,
  isCommandError,
  jsonEvent,
  streamNameFilter,
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type Filter,
  type Position as EsdbPosition,
  type RecordedEvent as EsdbRecordedEvent,
} from '@eventstore/db-client';
import {
  ANY,
  NO_STREAM,
  type AppendOptions,
  type AppendResult,
  type EventData,
  type EventStore,
  type EventSubscription,
  type ExpectedRevision,
  type JsonObject,
  type Position,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type StreamMetadata,
  type SubscribeToAllOptions,
  type SubscriptionFilter,
  type SubscriptionMessage,
} from '../event-store.port';
import { EventStoreUnavailableError, WrongExpectedVersionError } from '../errors';
import { comparePositions } from '../position';
import { validateAppend } from '../validate-events';

export interface EsdbEventStoreOptions {
  /** e.g. `esdb://localhost:2113?tls=false` */
  readonly connectionString: string;
  /** Resubscription backoff after a dropped subscription: doubles from `min` up to `max`. */
  readonly resubscribeDelayMs?: { readonly min: number; readonly max: number };
  /** How long `ping()` waits for an answer. Default 5 s. */
  readonly pingTimeoutMs?: number;
}

const END_OF_LOG = 0xffffffffffffffffn;

/** `$all` is read in pages because system events are skipped client-side (6.2.1 readAll has no filter). */
const READ_ALL_PAGE = 512;

/**
 * The EventStoreDB adapter, on @eventstore/db-client. Same semantics as the sqlite adapter, proven
 * by the shared conformance suite (against the gRPC test server in test/esdb-test-server, and
 * against a real server when EVENTSTORE_CONNECTION_STRING is set).
 */
export class EsdbEventStore implements EventStore {
  readonly kind = 'esdb';
  private readonly client: EventStoreDBClient;
  private readonly subscriptions = new Set<ResilientSubscription>();
  private readonly resubscribeDelayMs: { min: number; max: number };
  private readonly pingTimeoutMs: number;
  private closed = false;

  constructor(options: EsdbEventStoreOptions | string) {
    const opts = typeof options === 'string' ? { connectionString: options } : options;
    this.client = EventStoreDBClient.connectionString(opts.connectionString);
    this.resubscribeDelayMs = { min: 100, max: 2_000, ...opts.resubscribeDelayMs };
    this.pingTimeoutMs = opts.pingTimeoutMs ?? 5_000;
  }

  async appendToStream(streamId: string, events: readonly EventData[], options: AppendOptions = {}): Promise<AppendResult> {
    this.assertOpen();
    validateAppend(streamId, events);
    const expected = options.expectedRevision ?? ANY;
    try {
      const result = await this.client.appendToStream(
        streamId,
        events.map((e) =>
          jsonEvent({ id: e.id, type: e.type, data: e.data, ...(e.metadata !== undefined && { metadata: e.metadata }) }),
        ),
        { expectedRevision: expected },
      );
      // An idempotent re-append may be acknowledged without a position: look the event up.
      const position = result.position ?? (await this.positionOf(streamId, result.nextExpectedRevision));
      return { nextExpectedRevision: result.nextExpectedRevision, position };
    } catch (err) {
      throw mapError(err, { streamId, expected });
    }
  }

  private async positionOf(streamId: string, revision: bigint): Promise<Position> {
    const [event] = await this.readStream(streamId, { direction: 'backwards', fromRevision: revision, maxCount: 1 });
    if (!event || event.revision !== revision) {
      throw new EventStoreUnavailableError(`Appended ${streamId}@${revision} but cannot read it back`);
    }
    return event.position;
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    this.assertOpen();
    const backwards = options.direction === 'backwards';
    const from = options.fromRevision ?? (backwards ? 'end' : 'start');
    const maxCount = clampCount(options.maxCount);
    // Nothing lies forwards of the end; don't ask the server what it thinks of that.
    if (maxCount === 0 || (!backwards && from === 'end')) return [];
    const out: RecordedEvent[] = [];
    try {
      const read = this.client.readStream(streamId, {
        direction: backwards ? BACKWARDS : FORWARDS,
        fromRevision: from === 'start' ? START : from === 'end' ? END : from,
        maxCount,
      });
      for await (const resolved of read) {
        if (resolved.event) out.push(toRecorded(resolved.event));
      }
    } catch (err) {
      if (err instanceof StreamNotFoundError) return [];
      throw mapError(err);
    }
    return out;
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    this.assertOpen();
    const backwards = options.direction === 'backwards';
    const from = options.from ?? (backwards ? 'end' : 'start');
    const maxCount = clampCount(options.maxCount);
    if (maxCount === 0 || (backwards && from === 'start') || (!backwards && from === 'end')) return [];
    try {
      return await this.readAllPaged(backwards, from, maxCount, false);
    } catch (err) {
      throw mapError(err);
    }
  }

  /**
   * Pages through `$all` until `maxCount` application events are collected (system events are
   * skipped but must not eat into the count). Backwards from a position is exclusive whatever the
   * server does: anything at or after the position is dropped, which also skips the page cursor
   * when the next page starts on it.
   */
  private async readAllPaged(
    backwards: boolean,
    from: Position | 'start' | 'end',
    maxCount: number,
    includeSystem: boolean,
  ): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    let cursor: Position | 'start' | 'end' = from;
    // Forwards, the first page is inclusive of `from`; later pages restart on the last event seen.
    let skipUpTo: Position | null = null;
    let before: Position | null = backwards && typeof from === 'object' ? from : null;
    // Start with what is asked for (+1: a later page restarts on its cursor); grow the page when
    // system events keep filling it.
    let page = 0;
    for (;;) {
      page = Math.min(READ_ALL_PAGE, Math.max(page * 4, maxCount - out.length + 1));
      let received = 0;
      let last: Position | null = null;
      const read = this.client.readAll({
        direction: backwards ? BACKWARDS : FORWARDS,
        fromPosition: cursor === 'start' ? START : cursor === 'end' ? END : cursor,
        maxCount: page,
      });
      for await (const resolved of read as AsyncIterable<AllStreamResolvedEvent>) {
        received++;
        const event = resolved.event;
        if (!event) continue;
        const position = event.position;
        last = position;
        if (skipUpTo && comparePositions(position, skipUpTo) <= 0) continue;
        if (before && comparePositions(position, before) >= 0) continue;
        if (!includeSystem && isSystemEvent(event)) continue;
        if (out.length < maxCount) out.push(toRecorded(event));
      }
      if (out.length >= maxCount || received < page || last === null) return out;
      cursor = last;
      if (backwards) before = last;
      else skipUpTo = last;
    }
  }

  async setStreamMetadata(streamId: string, metadata: StreamMetadata): Promise<void> {
    this.assertOpen();
    try {
      await this.client.setStreamMetadata(streamId, {
        ...(metadata.maxAge !== undefined && { maxAge: metadata.maxAge }),
        ...(metadata.maxCount !== undefined && { maxCount: metadata.maxCount }),
        ...(metadata.truncateBefore !== undefined && { truncateBefore: Number(metadata.truncateBefore) }),
      });
    } catch (err) {
      throw mapError(err);
    }
  }

  async getStreamMetadata(streamId: string): Promise<StreamMetadata> {
    this.assertOpen();
    try {
      const { metadata } = await this.client.getStreamMetadata(streamId);
      if (!metadata) return {};
      return {
        ...(metadata.maxAge !== undefined && { maxAge: Number(metadata.maxAge) }),
        ...(metadata.maxCount !== undefined && { maxCount: Number(metadata.maxCount) }),
        // A soft delete's $tb (long.MaxValue) is the server's own marker, not a limit set here.
        ...(metadata.truncateBefore !== undefined &&
          BigInt(metadata.truncateBefore) < 0x7fffffffffffffffn && { truncateBefore: BigInt(metadata.truncateBefore) }),
      };
    } catch (err) {
      if (err instanceof StreamNotFoundError) return {};
      throw mapError(err);
    }
  }

  async deleteStream(streamId: string): Promise<void> {
    this.assertOpen();
    try {
      await this.client.deleteStream(streamId, { expectedRevision: ANY });
    } catch (err) {
      // The server answers a delete of a stream that never existed with a wrong expected version.
      if (err instanceof StreamNotFoundError || err instanceof EsdbWrongExpectedVersionError) return;
      throw mapError(err);
    }
  }

  subscribeToAll(options: SubscribeToAllOptions = {}): EventSubscription {
    this.assertOpen();
    const sub = new ResilientSubscription(this.client, options, this.resubscribeDelayMs, () => this.headOfLog());
    this.subscriptions.add(sub);
    sub.onEnd(() => this.subscriptions.delete(sub));
    return sub;
  }

  /** The newest record of `$all`, system events included: where "from end" begins. */
  private async headOfLog(): Promise<Position | null> {
    const [head] = await this.readAllPaged(true, 'end', 1, true);
    return head?.position ?? null;
  }

  async headPosition(): Promise<Position | null> {
    const [newest] = await this.readAll({ direction: 'backwards', maxCount: 1 });
    return newest?.position ?? null;
  }

  async ping(): Promise<void> {
    this.assertOpen();
    const read = this.client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 });
    read.on('error', () => {}); // the iterator below reports it
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new EventStoreUnavailableError(`EventStoreDB did not answer within ${this.pingTimeoutMs} ms`)), this.pingTimeoutMs);
    });
    try {
      await Promise.race([
        (async () => {
          for await (const _ of read) void _;
        })(),
        timeout,
      ]);
    } catch (err) {
      void read.cancel();
      throw mapError(err);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.subscriptions].map((s) => s.terminate(new EventStoreUnavailableError('The event store is closed'))));
    await this.client.dispose();
  }

  private assertOpen(): void {
    if (this.closed) throw new EventStoreUnavailableError('The event store is closed');
  }
}

/** Items the client's subscription stream carries besides events (pushed in order, see below). */
class Marker {
  constructor(readonly message: Exclude<SubscriptionMessage, { kind: 'event' }>) {}
}

/**
 * A `$all` catch-up subscription that survives dropped connections: on an error it resubscribes
 * (bounded exponential backoff) from the position of the last event or checkpoint it delivered,
 * so the consumer sees neither a gap nor a repeat. Only `stop()` (or closing the store) ends it.
 *
 * Backpressure: the client's subscription is a Transform stream read through its async iterator,
 * so when the consumer stops pulling, the stream stops reading from gRPC, and HTTP/2 flow control
 * stops the server.
 */
class ResilientSubscription implements EventSubscription {
  private stopped = false;
  private failure: Error | undefined;
  private current: AllStreamSubscription | undefined;
  private readonly abort = new AbortController();
  private readonly iterator: AsyncGenerator<SubscriptionMessage>;
  private readonly endListeners: Array<() => void> = [];
  /**
   * Where the first subscription starts. "end" is resolved to the head of `$all` at once, so an
   * event appended after subscribeToAll() returns is delivered even if the first attempt fails.
   */
  private startFrom: Promise<Position | 'start' | Error>;

  constructor(
    private readonly client: EventStoreDBClient,
    private readonly options: SubscribeToAllOptions,
    private readonly delay: { min: number; max: number },
    private readonly headOfLog: () => Promise<Position | null>,
  ) {
    this.startFrom = this.resolveStart();
    this.iterator = this.run();
  }

  private resolveStart(): Promise<Position | 'start' | Error> {
    const from = this.options.from ?? 'start';
    if (from !== 'end') return Promise.resolve(from);
    return this.headOfLog().then(
      (head) => head ?? 'start',
      (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
    );
  }

  [Symbol.asyncIterator](): AsyncIterator<SubscriptionMessage> {
    return this.iterator;
  }

  async stop(): Promise<void> {
    this.halt();
    await this.iterator.return(undefined);
    // A generator that never started skips its finally block.
    this.ended();
  }

  /** Ends the subscription with an error (the store was closed). */
  async terminate(error: Error): Promise<void> {
    this.failure = error;
    this.halt();
  }

  onEnd(listener: () => void): void {
    this.endListeners.push(listener);
  }

  private ended(): void {
    this.stopped = true;
    for (const listener of this.endListeners.splice(0)) listener();
  }

  private halt(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.abort.abort();
    this.dropCurrent();
  }

  private dropCurrent(): void {
    const sub = this.current;
    this.current = undefined;
    if (!sub) return;
    // Cancel the gRPC call, and destroy the stream so a pending iterator step settles now.
    void sub.unsubscribe().catch(() => {});
    sub.destroy();
  }

  private async *run(): AsyncGenerator<SubscriptionMessage> {
    let resume: Position | 'start' | 'end' | undefined;
    let caughtUpSent = false;
    let attempt = 0;
    try {
      while (!this.stopped) {
        try {
          if (resume === undefined) {
            const start = await this.startFrom;
            if (start instanceof Error) {
              this.startFrom = this.resolveStart();
              throw start;
            }
            resume = start;
          }
          const sub = this.open(resume, () => (attempt = 0));
          for await (const item of sub as AsyncIterable<AllStreamResolvedEvent | Marker>) {
            if (item instanceof Marker) {
              if (item.message.kind === 'caught-up') {
                if (caughtUpSent) continue; // again after a resubscription: the consumer knows
                caughtUpSent = true;
                yield item.message;
              } else if (item.message.kind === 'checkpoint') {
                const position = item.message.position;
                // EventStoreDB 24.10.0–.4 (KDB-710) checkpoints a filtered catch-up that found
                // nothing at End = 2^64-1: resuming from there would pass over every later event.
                if (position.commit >= END_OF_LOG || position.prepare >= END_OF_LOG) continue;
                if (typeof resume === 'object' && comparePositions(position, resume) <= 0) continue;
                resume = position;
                yield item.message;
              }
              continue;
            }
            const event = item.event;
            if (!event) continue;
            // Never hand out anything at or before what was already delivered.
            if (typeof resume === 'object' && comparePositions(event.position, resume) <= 0) continue;
            resume = event.position;
            if (isSystemEvent(event)) continue;
            yield { kind: 'event', event: toRecorded(event) };
          }
          // The server ended the call (or we dropped it): resubscribe unless stopped.
        } catch (err) {
          if (this.stopped) break;
          if (!isRecoverable(err)) throw mapError(err);
        } finally {
          this.dropCurrent();
        }
        if (this.stopped) break;
        await sleep(Math.min(this.delay.max, this.delay.min * 2 ** attempt), this.abort.signal);
        attempt = Math.min(attempt + 1, 30);
      }
      if (this.failure) throw this.failure;
    } finally {
      this.ended();
    }
  }

  private open(from: Position | 'start' | 'end', onConfirmed: () => void): AllStreamSubscription {
    const sub = this.client.subscribeToAll({
      fromPosition: from === 'start' ? START : from === 'end' ? END : from,
      filter: clientFilter(this.options.filter, (s, position) => {
        // Called and awaited inside the stream's transform, so pushing here keeps the checkpoint
        // in order with the events around it (an event listener would run ahead of buffered events).
        s.push(new Marker({ kind: 'checkpoint', position }));
      }),
    });
    this.current = sub;
    sub.on('error', () => {}); // reported through the iterator; an unhandled 'error' would crash
    sub.on('confirmation', onConfirmed);
    // Emitted synchronously inside the transform too: same ordering argument as checkpoints.
    sub.on('caughtUp', () => sub.push(new Marker({ kind: 'caught-up' })));
    return sub;
  }
}

function clientFilter(
  filter: SubscriptionFilter | undefined,
  checkpointReached: (sub: AllStreamSubscription, position: EsdbPosition) => void,
): Filter {
  if (filter && 'eventTypePrefixes' in filter && filter.eventTypePrefixes.length > 0) {
    return eventTypeFilter({ prefixes: [...filter.eventTypePrefixes], checkpointReached });
  }
  if (filter && 'streamNamePrefixes' in filter && filter.streamNamePrefixes.length > 0) {
    return streamNameFilter({ prefixes: [...filter.streamNamePrefixes], checkpointReached });
  }
  // No filter still means "application events only", as in readAll.
  return excludeSystemEvents({ checkpointReached });
}

/** A dropped connection, a restarting or unreachable server: worth another try. */
function isRecoverable(err: unknown): boolean {
  if (err instanceof AccessDeniedError || err instanceof InvalidArgumentError || err instanceof UnsupportedError) {
    return false;
  }
  if (isClientError(err)) return true;
  if (isGrpcError(err)) return true;
  // A stream torn down under the iterator (ERR_STREAM_PREMATURE_CLOSE, aborts).
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'ERR_STREAM_PREMATURE_CLOSE' || (err as Error | null)?.name === 'AbortError';
}

const UNAVAILABLE_GRPC_CODES = new Set([1 /* CANCELLED */, 4 /* DEADLINE_EXCEEDED */, 10 /* ABORTED */, 14 /* UNAVAILABLE */]);

function isClientError(err: unknown): boolean {
  return err instanceof Error && isCommandError(err);
}

function isGrpcError(err: unknown): err is { code: number; details?: string; message: string } {
  return typeof err === 'object' && err !== null && typeof (err as { code?: unknown }).code === 'number';
}

/** The client's errors in the port's terms. */
function mapError(err: unknown, append?: { streamId: string; expected: ExpectedRevision }): unknown {
  if (err instanceof EsdbWrongExpectedVersionError && append) {
    const actual = err.actualVersion;
    return new WrongExpectedVersionError(
      append.streamId,
      append.expected,
      typeof actual === 'bigint' && actual >= 0n ? actual : NO_STREAM,
    );
  }
  if (err instanceof EventStoreUnavailableError || err instanceof WrongExpectedVersionError) return err;
  // The client types UNAVAILABLE, CANCELLED, DEADLINE_EXCEEDED, ABORTED (Timeout) and NOT_LEADER;
  // raw gRPC errors can also escape it (e.g. from the append request stream).
  const type = (err as { type?: unknown } | null)?.type;
  const transient = ['unavailable', 'cancelled', 'deadline-exceeded', 'timeout', 'not-leader'];
  if (
    (isClientError(err) && typeof type === 'string' && transient.includes(type)) ||
    (!isClientError(err) && isGrpcError(err) && UNAVAILABLE_GRPC_CODES.has(err.code))
  ) {
    return new EventStoreUnavailableError(`EventStoreDB is unavailable: ${(err as Error).message}`, { cause: err });
  }
  return err;
}

function isSystemEvent(event: { type: string; streamId: string }): boolean {
  return event.type.startsWith('$') || event.streamId.startsWith('$');
}

function toRecorded(event: EsdbRecordedEvent): RecordedEvent {
  return {
    id: event.id,
    type: event.type,
    streamId: event.streamId,
    revision: event.revision,
    // Stream reads carry positions too (servers since 22.6); `$all` reads always do.
    position: event.position ?? { commit: 0n, prepare: 0n },
    data: asJsonObject(event.data),
    metadata: asJsonObject(event.metadata),
    created: event.created,
  };
}

/**
 * The application writes JSON objects only. Anything else (a foreign binary event, metadata
 * another tool wrote) is parsed if it is JSON, else read as an empty object rather than failing
 * every reader of `$all`.
 */
function asJsonObject(value: unknown): JsonObject {
  let v = value;
  if (v instanceof Uint8Array) {
    try {
      v = JSON.parse(Buffer.from(v).toString('utf8'));
    } catch {
      return {};
    }
  }
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as JsonObject) : {};
}

function clampCount(maxCount: number | undefined): number {
  if (maxCount === undefined || !Number.isFinite(maxCount)) return Number.MAX_SAFE_INTEGER;
  return Math.max(0, Math.min(Number.MAX_SAFE_INTEGER, Math.floor(maxCount)));
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
