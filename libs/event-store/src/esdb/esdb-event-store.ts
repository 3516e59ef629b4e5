import {
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  START,
  StreamDeletedError as EsdbStreamDeletedError,
  StreamNotFoundError,
  jsonEvent,
  type AllStreamResolvedEvent,
} from '@eventstore/db-client';
import {
  ANY,
  type AppendOptions,
  type AppendResult,
  type EventData,
  type EventStore,
  type EventSubscription,
  type HeadPositionOptions,
  type Position,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type StreamMetadata,
  type StreamRevision,
  type SubscribeToAllOptions,
} from '../event-store.port';
import { EventStoreUnavailableError } from '../errors';
import { comparePositions } from '../position';
import { validateAppend } from '../validate-events';
import { isSystemEvent, mapError, toRecorded } from './esdb-mapping';
import { readFilteredHead } from './esdb-head';
import * as admin from './esdb-stream-admin';
import { ResilientSubscription } from './esdb-subscription';

export interface EsdbEventStoreOptions {
  /** e.g. `esdb://localhost:2113?tls=false` */
  readonly connectionString: string;
  /** Resubscription backoff after a dropped subscription: doubles from `min` up to `max`. */
  readonly resubscribeDelayMs?: { readonly min: number; readonly max: number };
  /** How long `ping()` waits for an answer. Default 5 s. */
  readonly pingTimeoutMs?: number;
}

/** `$all` is read in pages because system events are skipped client-side (6.2.1 readAll has no filter). */
const READ_ALL_PAGE = 512;

/**
 * The EventStoreDB adapter, on @eventstore/db-client. Same semantics as the sqlite adapter, proven
 * by the shared conformance suite (against the gRPC test server in test/esdb-test-server, and
 * against a real server when EVENTSTORE_CONNECTION_STRING is set).
 */
export class EsdbEventStore implements EventStore {
  readonly kind = 'esdb';
  /** Several instances may append to one server at once: they arbitrate with expected revisions. */
  readonly sharedByInstances: boolean = true;
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

  async appendToStream(
    streamId: string,
    events: readonly EventData[],
    options: AppendOptions = {},
  ): Promise<AppendResult> {
    this.assertOpen();
    validateAppend(streamId, events);
    const expected = options.expectedRevision ?? ANY;
    try {
      const result = await this.client.appendToStream(
        streamId,
        events.map((e) =>
          jsonEvent({
            id: e.id,
            type: e.type,
            data: e.data,
            ...(e.metadata !== undefined && { metadata: e.metadata }),
          }),
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

  async streamRevision(streamId: string): Promise<StreamRevision | null> {
    // The server has no revision-only read: the newest event, backwards.
    const [last] = await this.readStream(streamId, { direction: 'backwards', maxCount: 1 });
    return last?.revision ?? null;
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
      // A tombstoned stream reads as empty, as on the sqlite store (whose rows are gone).
      if (err instanceof StreamNotFoundError || err instanceof EsdbStreamDeletedError) return [];
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

  setStreamMetadata(streamId: string, metadata: StreamMetadata): Promise<void> {
    this.assertOpen();
    return admin.setStreamMetadata(this.client, streamId, metadata);
  }

  getStreamMetadata(streamId: string): Promise<StreamMetadata> {
    this.assertOpen();
    return admin.getStreamMetadata(this.client, streamId);
  }

  deleteStream(streamId: string): Promise<void> {
    this.assertOpen();
    return admin.deleteStream(this.client, streamId);
  }

  tombstoneStream(streamId: string): Promise<void> {
    this.assertOpen();
    return admin.tombstoneStream(this.client, streamId);
  }

  truncateStream(streamId: string, before: StreamRevision): Promise<void> {
    this.assertOpen();
    return admin.truncateStream(this.client, streamId, before);
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

  async headPosition(options: HeadPositionOptions = {}): Promise<Position | null> {
    this.assertOpen();
    try {
      // One filtered read: no page of system events, and never the body of a skipped type.
      return await readFilteredHead(this.client, options.skipTypes ?? []);
    } catch (err) {
      throw mapError(err);
    }
  }

  async ping(): Promise<void> {
    this.assertOpen();
    const read = this.client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 });
    read.on('error', () => {}); // the iterator below reports it
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new EventStoreUnavailableError(`EventStoreDB did not answer within ${this.pingTimeoutMs} ms`)),
        this.pingTimeoutMs,
      );
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
    await Promise.all(
      [...this.subscriptions].map((s) => s.terminate(new EventStoreUnavailableError('The event store is closed'))),
    );
    await this.client.dispose();
  }

  private assertOpen(): void {
    if (this.closed) throw new EventStoreUnavailableError('The event store is closed');
  }
}

function clampCount(maxCount: number | undefined): number {
  if (maxCount === undefined || !Number.isFinite(maxCount)) return Number.MAX_SAFE_INTEGER;
  return Math.max(0, Math.min(Number.MAX_SAFE_INTEGER, Math.floor(maxCount)));
}
