import {
  END,
  START,
  eventTypeFilter,
  excludeSystemEvents,
  streamNameFilter,
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type EventStoreDBClient,
  type Filter,
  type Position as EsdbPosition,
} from '@eventstore/db-client';
import type {
  EventSubscription,
  Position,
  SubscribeToAllOptions,
  SubscriptionFilter,
  SubscriptionMessage,
} from '../event-store.port';
import { comparePositions } from '../position';
import { isRecoverable, isSystemEvent, mapError, toRecorded } from './esdb-mapping';

const END_OF_LOG = 0xffffffffffffffffn;

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
export class ResilientSubscription implements EventSubscription {
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
  /** Where the next subscription resumes: the last event or checkpoint delivered. */
  private resume: Position | 'start' | 'end' | undefined;
  private caughtUpSent = false;
  /** Failed attempts in a row (reset once a subscription is confirmed): the backoff's exponent. */
  private attempt = 0;

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
    try {
      while (!this.stopped) {
        yield* this.subscribeOnce();
        if (this.stopped) break;
        await sleep(Math.min(this.delay.max, this.delay.min * 2 ** this.attempt), this.abort.signal);
        this.attempt = Math.min(this.attempt + 1, 30);
      }
      if (this.failure) throw this.failure;
    } finally {
      this.ended();
    }
  }

  /**
   * One subscription, from just after what was delivered, until the server ends the call or it
   * fails in a way a resubscription may cure (anything else is thrown, mapped).
   */
  private async *subscribeOnce(): AsyncGenerator<SubscriptionMessage> {
    try {
      if (this.resume === undefined) this.resume = await this.firstStart();
      const sub = this.open(this.resume, () => (this.attempt = 0));
      for await (const item of sub as AsyncIterable<AllStreamResolvedEvent | Marker>) {
        const message = item instanceof Marker ? this.fromMarker(item.message) : this.fromEvent(item);
        if (message) yield message;
      }
      // The server ended the call (or we dropped it): resubscribe unless stopped.
    } catch (err) {
      if (this.stopped) return;
      if (!isRecoverable(err)) throw mapError(err);
    } finally {
      this.dropCurrent();
    }
  }

  /** Where the first subscription starts; if the head could not be read, it is read again next time. */
  private async firstStart(): Promise<Position | 'start'> {
    const start = await this.startFrom;
    if (start instanceof Error) {
      this.startFrom = this.resolveStart();
      throw start;
    }
    return start;
  }

  /** The caught-up marker once only; checkpoints that move past what was delivered. */
  private fromMarker(message: Marker['message']): SubscriptionMessage | null {
    if (message.kind === 'caught-up') {
      if (this.caughtUpSent) return null; // again after a resubscription: the consumer knows
      this.caughtUpSent = true;
      return message;
    }
    if (message.kind !== 'checkpoint') return null;
    const position = message.position;
    // EventStoreDB 24.10.0–.4 (KDB-710) checkpoints a filtered catch-up that found
    // nothing at End = 2^64-1: resuming from there would pass over every later event.
    if (position.commit >= END_OF_LOG || position.prepare >= END_OF_LOG) return null;
    if (this.delivered(position)) return null;
    this.resume = position;
    return message;
  }

  private fromEvent(item: AllStreamResolvedEvent): SubscriptionMessage | null {
    const event = item.event;
    if (!event) return null;
    // Never hand out anything at or before what was already delivered.
    if (this.delivered(event.position)) return null;
    this.resume = event.position;
    if (isSystemEvent(event)) return null;
    return { kind: 'event', event: toRecorded(event) };
  }

  private delivered(position: Position): boolean {
    return typeof this.resume === 'object' && comparePositions(position, this.resume) <= 0;
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
