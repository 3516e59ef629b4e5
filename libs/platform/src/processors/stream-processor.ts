import {
  comparePositions,
  positionToString,
  type EventStore,
  type EventSubscription,
  type Position,
  type RecordedEvent,
  type SubscriptionFilter,
  type SubscriptionMessage,
} from '@filing/event-store';
import type { LoggerService } from '@nestjs/common';

/** What a processor handles: events, and checkpoints for what a filter passed over. */
export type ProcessorMessage = Exclude<SubscriptionMessage, { kind: 'caught-up' }>;

export function messagePosition(message: ProcessorMessage): Position {
  return message.kind === 'event' ? message.event.position : message.position;
}

/**
 * A handler failed on one event. The supervisor counts repeats of the same failure: a transient
 * one passes on restart, a poison event halts the processor (or the part the handler isolates).
 */
export class EventHandlingError extends Error {
  override readonly name = 'EventHandlingError';
  constructor(
    /** Which part of the processor failed (a projection of the runner), or the processor itself. */
    readonly part: string,
    readonly event: Pick<RecordedEvent, 'id' | 'type' | 'streamId' | 'position'>,
    options: { cause: unknown },
  ) {
    super(
      `${part} failed on event ${event.id} (${event.type}, stream ${event.streamId}, ` +
        `position ${positionToString(event.position)}): ${describe(options.cause)}`,
      options,
    );
  }
}

export interface ProcessorDefinition {
  /** Unique among processors: names it in logs, /readyz and /metrics. */
  readonly name: string;
  /** A projector writes read-model rows; a reactor appends events (Emmett's two kinds). */
  readonly kind: 'projector' | 'reactor';
  readonly filter?: SubscriptionFilter;
  /** Most messages handed to `handle` at once (default 500). */
  readonly maxBatch?: number;
  /** Before every (re)start: reload in-memory state a failed batch may have left half-applied. */
  beforeStart?(): void;
  /** Read at every (re)start: the processor resumes after it; null is the start of the log. */
  resumeFrom(): Position | null;
  /**
   * Handles a batch in order and commits its effects and checkpoint (one transaction where it
   * can: whatever is not committed is handed over again after a restart). Throw an
   * `EventHandlingError` to name the event that failed.
   */
  handle(batch: readonly ProcessorMessage[]): void | Promise<void>;
  /**
   * The same event failed `haltAfter` times in a row. Return true when the handler took the part
   * that failed out of service itself (the runner halts one projection, the others go on); the
   * processor then restarts at once. Otherwise the whole processor halts.
   */
  isolate?(failure: EventHandlingError): boolean;
}

export interface SupervisionOptions {
  /** Restart delays double from `minMs` up to `maxMs`. */
  readonly backoff?: { readonly minMs: number; readonly maxMs: number };
  /** Consecutive failures on one event before it is taken for poison. Default 5. */
  readonly haltAfter?: number;
  /** Handle nothing after this position and stop there (rebuilds up to a known point). */
  readonly stopAt?: Position;
  readonly logger: Pick<LoggerService, 'log' | 'error' | 'warn'>;
}

export type ProcessorState = 'stopped' | 'running' | 'restarting' | 'halted' | 'finished';

/** What an operator sees of one processor (or one isolated part of it) in /readyz and /metrics. */
export interface ProcessorStatus {
  readonly name: string;
  readonly kind: 'projector' | 'reactor';
  readonly state: ProcessorState;
  readonly restarts: number;
  readonly checkpoint: Position | null;
  /** The failure that halted it. */
  readonly halted: HaltReport | null;
}

export interface HaltReport {
  readonly eventId: string;
  readonly eventType: string;
  readonly streamId: string;
  readonly position: string;
  readonly error: string;
}

export function haltReport(failure: EventHandlingError): HaltReport {
  return {
    eventId: failure.event.id,
    eventType: failure.event.type,
    streamId: failure.event.streamId,
    position: positionToString(failure.event.position),
    error: describe(failure.cause),
  };
}

/**
 * One consumer of `$all`: subscribe from its checkpoint → take what is there into a batch →
 * handle (which commits effects and checkpoint) → repeat, supervised. A failure restarts it from
 * its checkpoint after a capped exponential backoff; the same event failing `haltAfter` times in
 * a row halts it, loudly (log, status). Nothing ends silently: a subscription that ends by
 * itself is a failure too.
 *
 * Batching keeps the subscription read ahead of the handler (a catch-up page or a group commit
 * arrives within microtasks and shares one batch), but never more than one batch ahead.
 */
export class StreamProcessor {
  private state: ProcessorState = 'stopped';
  private restartCount = 0;
  private halt: HaltReport | null = null;
  private subscription: EventSubscription | null = null;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private generation = 0;
  private lastFailure: { key: string; count: number } | null = null;
  private readonly finishedWaiters: Array<() => void> = [];
  private readonly backoff: { minMs: number; maxMs: number };
  private readonly haltAfter: number;

  constructor(
    private readonly store: EventStore,
    readonly definition: ProcessorDefinition,
    private readonly options: SupervisionOptions,
  ) {
    this.backoff = { minMs: 100, maxMs: 10_000, ...options.backoff };
    this.haltAfter = options.haltAfter ?? 5;
  }

  get name(): string {
    return this.definition.name;
  }

  status(): ProcessorStatus {
    return {
      name: this.definition.name,
      kind: this.definition.kind,
      state: this.state,
      restarts: this.restartCount,
      checkpoint: this.definition.resumeFrom(),
      halted: this.halt,
    };
  }

  get running(): boolean {
    return this.state === 'running' || this.state === 'restarting';
  }

  start(): void {
    if (this.running) return;
    this.state = 'running';
    this.halt = null;
    this.lastFailure = null;
    const generation = ++this.generation;
    this.loop = this.supervise(generation);
  }

  async stop(): Promise<void> {
    this.generation++;
    if (this.state !== 'halted' && this.state !== 'finished') this.state = 'stopped';
    this.wake?.();
    const { subscription, loop } = this;
    this.subscription = null;
    this.loop = null;
    await subscription?.stop().catch(() => undefined);
    await loop;
  }

  /** Resolves when a processor with `stopAt` has handled everything up to it. */
  finished(): Promise<void> {
    if (this.state === 'finished') return Promise.resolve();
    return new Promise((resolve) => this.finishedWaiters.push(resolve));
  }

  private async supervise(generation: number): Promise<void> {
    let attempt = 0;
    while (generation === this.generation) {
      try {
        const done = await this.runOnce(generation);
        if (generation !== this.generation) return;
        if (done) {
          this.state = 'finished';
          for (const w of this.finishedWaiters.splice(0)) w();
          return;
        }
        throw new Error('the subscription ended by itself');
      } catch (err) {
        if (generation !== this.generation) return;
        this.restartCount++;
        const failure = err instanceof EventHandlingError ? err : null;
        const key = failure ? `${failure.part}\u0000${failure.event.id}` : null;
        const count = key !== null && this.lastFailure?.key === key ? this.lastFailure.count + 1 : 1;
        this.lastFailure = key === null ? null : { key, count };
        if (failure && count >= this.haltAfter) {
          if (this.definition.isolate?.(failure)) {
            this.lastFailure = null;
            attempt = 0;
            continue;
          }
          this.state = 'halted';
          this.halt = haltReport(failure);
          this.options.logger.error(
            `Stream processor ${this.name} HALTED after ${count} failures on one event: ` +
              `event ${this.halt.eventId} (${this.halt.eventType}) in stream ${this.halt.streamId}: ` +
              `${this.halt.error}. It stays halted until the cause is fixed and the service restarts.`,
          );
          return;
        }
        this.state = 'restarting';
        const delay = Math.min(this.backoff.maxMs, this.backoff.minMs * 2 ** attempt);
        attempt = Math.min(attempt + 1, 20);
        this.options.logger.warn(
          `Stream processor ${this.name} failed, restarting from its checkpoint in ${delay} ms: ${describe(err)}`,
        );
        await this.sleep(delay);
        if (generation !== this.generation) return;
        this.state = 'running';
      }
    }
  }

  /** One subscription's life. True when `stopAt` was reached; throws on any failure. */
  private async runOnce(generation: number): Promise<boolean> {
    const { definition } = this;
    const maxBatch = definition.maxBatch ?? 500;
    const stopAt = this.options.stopAt;
    definition.beforeStart?.();
    const from = definition.resumeFrom();
    if (stopAt && from && comparePositions(from, stopAt) >= 0) return true;
    const subscription = this.store.subscribeToAll({
      from: from ?? 'start',
      ...(definition.filter && { filter: definition.filter }),
    });
    this.subscription = subscription;
    let buffer: ProcessorMessage[] = [];
    let handling: Promise<void> = Promise.resolve();
    /** Batches handed to the handler and not yet handled. */
    let queued = 0;
    // The first failure, kept in a list: a handler may throw any value, null too.
    const failures: unknown[] = [];
    let scheduled: NodeJS.Immediate | null = null;
    const flush = (): void => {
      if (scheduled) clearImmediate(scheduled);
      scheduled = null;
      if (buffer.length === 0 || failures.length > 0) return;
      const batch = buffer;
      buffer = [];
      queued++;
      handling = handling.then(async () => {
        try {
          if (failures.length > 0 || generation !== this.generation) return;
          await definition.handle(batch);
          this.lastFailure = null;
        } catch (error) {
          failures.push(error);
          // Ends the for-await below even while it waits for a live event.
          void subscription.stop().catch(() => undefined);
        } finally {
          queued--;
        }
      });
    };
    let reachedStop = false;
    try {
      for await (const message of subscription) {
        if (failures.length > 0 || generation !== this.generation) break;
        if (message.kind === 'caught-up') continue;
        if (stopAt && comparePositions(messagePosition(message), stopAt) > 0) {
          reachedStop = true;
          break;
        }
        // Live events come in small batches; while the handler is behind, read no further (one
        // batch waiting behind the running one), or the queue of small batches grows unbounded.
        if (queued > 1) await handling;
        buffer.push(message);
        if (buffer.length >= maxBatch) {
          flush();
          await handling;
          // A long catch-up would otherwise run on microtasks alone and starve HTTP requests.
          await new Promise<void>((resolve) => setImmediate(resolve));
        } else {
          scheduled ??= setImmediate(flush);
        }
      }
    } finally {
      await subscription.stop().catch(() => undefined);
      if (this.subscription === subscription) this.subscription = null;
    }
    if (generation !== this.generation) return false;
    flush();
    await handling;
    if (failures.length > 0) throw failures[0];
    if (reachedStop) return true;
    return false;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      this.wake = done;
      function done() {
        clearTimeout(timer);
        resolve();
      }
    });
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
