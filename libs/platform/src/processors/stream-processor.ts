import {
  comparePositions,
  type EventStore,
  type Position,
  type RecordedEvent,
  type SubscriptionMessage,
} from '@filing/event-store';
import { BoundedQueue, pump } from './bounded-queue';
import { classify, TransientError } from './failure';
import { lastPosition, ParkingLot, poisonEvent, withRecords, type Unit } from './parking-lot';
import {
  describe,
  type EventHandlingError,
  haltReport,
  messagePosition,
  type HaltReport,
  type ProcessorDefinition,
  type ProcessorMessage,
  type ProcessorState,
  type ProcessorStatus,
  type SupervisionOptions,
} from './processor-types';

export * from './processor-types';

/** How one subscription's life ended. */
type RunOutcome =
  | { readonly kind: 'finished' | 'stopped' | 'restart' }
  | { readonly kind: 'failed'; readonly error: unknown; readonly unit: Unit | null };

/**
 * One consumer of `$all`: subscribe from its checkpoint → read into a bounded queue → take a
 * batch → handle it (which commits effects and checkpoint) → repeat, supervised.
 *
 * A failure restarts it from its checkpoint. What failed decides the rest (`classify`): the
 * store, the disk or the network → retried with back-off (reset after a success), for ever; the
 * handler throwing on an event N times in a row → poison: a projector halts, loudly (log,
 * status), a reactor parks the event (a record in `processor-<name>`, so every instance and a
 * replay skip it too) and goes on. A failure no event is named for is narrowed down by handling
 * the failed batch's events one at a time. `stop()` aborts the loop through its signal.
 */
export class StreamProcessor {
  private state: ProcessorState = 'stopped';
  private restartCount = 0;
  private caughtUp = false;
  private halt: HaltReport | null = null;
  private abort: AbortController | null = null;
  private run: AbortController | null = null;
  private loop: Promise<void> | null = null;
  private attempt = 0;
  private lastFailure: { key: string; position: Position; count: number } | null = null;
  /** After a failure no event was named for: one event per batch up to here. */
  private narrowUntil: Position | null = null;
  private readonly finishedWaiters: Array<() => void> = [];
  private readonly backoff: { minMs: number; maxMs: number };
  private readonly haltAfter: number;
  private readonly parking: ParkingLot | null;

  constructor(
    private readonly store: EventStore,
    readonly definition: ProcessorDefinition,
    private readonly options: SupervisionOptions,
  ) {
    this.backoff = { minMs: 100, maxMs: 10_000, ...options.backoff };
    // Transient failures never count (classify): three tries tell a poison event, and keep the stall
    // it causes (its batch retried) short, well inside the head barrier's wait.
    this.haltAfter = options.haltAfter ?? 3;
    this.parking = definition.kind === 'reactor' ? new ParkingLot(store, definition.name) : null;
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
      caughtUp: this.caughtUp,
      ...(this.parking && { parked: this.parking.size }),
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
    const abort = (this.abort = new AbortController());
    this.loop = this.supervise(abort.signal);
  }

  async stop(): Promise<void> {
    if (this.state !== 'halted' && this.state !== 'finished') this.state = 'stopped';
    this.abort?.abort();
    this.abort = null;
    const loop = this.loop;
    this.loop = null;
    await loop;
  }

  /** Ends the current subscription and subscribes again from `resumeFrom()` (not a failure). */
  restart(): void {
    this.run?.abort();
  }

  /** Resolves when a processor with `stopAt` has handled everything up to it. */
  finished(): Promise<void> {
    if (this.state === 'finished') return Promise.resolve();
    return new Promise((resolve) => this.finishedWaiters.push(resolve));
  }

  private async supervise(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      let outcome: RunOutcome;
      try {
        outcome = await this.runOnce(signal);
      } catch (error) {
        outcome = { kind: 'failed', error, unit: null };
      }
      if (signal.aborted || outcome.kind === 'stopped') return;
      if (outcome.kind === 'finished') {
        this.state = 'finished';
        for (const w of this.finishedWaiters.splice(0)) w();
        return;
      }
      if (outcome.kind !== 'failed') continue;
      this.restartCount++;
      const next = await this.onFailure(outcome.error, outcome.unit);
      if (next === 'halt') return;
      if (next === 'again') continue;
      await this.backOff(outcome.error, signal);
    }
  }

  /** What a failure leads to: halt, start again at once (the event was dealt with), or back off. */
  private async onFailure(error: unknown, unit: Unit | null): Promise<'halt' | 'again' | 'back-off'> {
    if (unit === null || (classify(error) === 'transient' && !this.options.anyFailureHalts)) return 'back-off';
    const failure = poisonEvent(this.name, error, unit);
    if (!failure) {
      this.narrowUntil = lastPosition(unit);
      return 'back-off';
    }
    const key = `${failure.part}\u0000${failure.event.id}`;
    const count = this.lastFailure?.key === key ? this.lastFailure.count + 1 : 1;
    this.lastFailure = { key, position: failure.event.position, count };
    if (count < this.haltAfter) return 'back-off';
    try {
      if (unit.kind === 'retry' && this.parking) {
        await this.parking.answer(unit.request, 'failed', describe(failure.cause));
        this.options.logger.error(
          `Stream processor ${this.name}: retry of parked ${describeEvent(failure)} failed again`,
        );
      } else if (this.definition.isolate?.(failure)) {
        // The handler took the failing part out of service; the others go on.
      } else if (this.parking) {
        await this.parking.park(failure);
        this.options.logger.error(
          `Stream processor ${this.name} PARKED ${describeEvent(failure)} after ${count} failures: ` +
            `${describe(failure.cause)}. It goes on with the next event; \`filing processors:parked\` lists it.`,
        );
      } else {
        this.state = 'halted';
        this.halt = haltReport(failure);
        this.options.logger.error(
          `Stream processor ${this.name} HALTED after ${count} failures on ${describeEvent(failure)}: ` +
            `${this.halt.error}. It stays halted until the cause is fixed and the service restarts.`,
        );
        return 'halt';
      }
    } catch (err) {
      // Recording it failed (the store): try the event again, it will be poison again.
      this.options.logger.warn(`Stream processor ${this.name} could not record a poison event: ${describe(err)}`);
      return 'back-off';
    }
    this.lastFailure = null;
    this.attempt = 0;
    return 'again';
  }

  private async backOff(error: unknown, signal: AbortSignal): Promise<void> {
    this.state = 'restarting';
    const delay = Math.min(this.backoff.maxMs, this.backoff.minMs * 2 ** this.attempt);
    this.attempt = Math.min(this.attempt + 1, 20);
    this.options.logger.warn(
      `Stream processor ${this.name} failed (${classify(error)}), restarting from its checkpoint in ${delay} ms: ${describe(error)}`,
    );
    await sleep(delay, signal);
    if (!signal.aborted) this.state = 'running';
  }

  /** One subscription's life: read into the queue on one side, handle batches on the other. */
  private async runOnce(signal: AbortSignal): Promise<RunOutcome> {
    const { definition } = this;
    await definition.beforeStart?.();
    await this.parking?.load();
    const from = definition.resumeFrom();
    const stopAt = this.options.stopAt;
    if (stopAt && from && comparePositions(from, stopAt) >= 0) return { kind: 'finished' };
    const filter = this.parking ? withRecords(definition.filter) : definition.filter;
    const subscription = this.store.subscribeToAll({ from: from ?? 'start', ...(filter && { filter }) });
    const run = (this.run = new AbortController());
    // Two batches' worth: one being handled, one read ahead.
    const queue = new BoundedQueue<SubscriptionMessage>(2 * (definition.maxBatch ?? 500));
    const end = () => {
      queue.close();
      void subscription.stop().catch(() => undefined);
    };
    signal.addEventListener('abort', end);
    run.signal.addEventListener('abort', end);
    const reading = pump(subscription, queue);
    let outcome: RunOutcome | null;
    try {
      outcome = await this.consume(queue, () => signal.aborted || run.signal.aborted);
    } finally {
      signal.removeEventListener('abort', end);
      end();
      if (this.run === run) this.run = null;
    }
    const readFailure = await reading;
    if (outcome) return outcome;
    if (signal.aborted) return { kind: 'stopped' };
    if (run.signal.aborted) return { kind: 'restart' };
    return {
      kind: 'failed',
      error: readFailure?.error ?? new TransientError('the subscription ended by itself'),
      unit: null,
    };
  }

  /** Takes batches off the queue and handles them; an outcome, or null when the queue or the run ended. */
  private async consume(queue: BoundedQueue<SubscriptionMessage>, ended: () => boolean): Promise<RunOutcome | null> {
    const maxBatch = this.definition.maxBatch ?? 500;
    const stopAt = this.options.stopAt;
    for (;;) {
      const read = await queue.take(this.narrowUntil ? 1 : maxBatch);
      if (read === null || ended()) return null;
      // The catch-up's end, in order: once what came before it is handled, this processor is live.
      const taken = read.filter((m): m is ProcessorMessage => m.kind !== 'caught-up');
      const live = taken.length < read.length;
      const cut = stopAt ? taken.findIndex((m) => comparePositions(messagePosition(m), stopAt) > 0) : -1;
      const messages = cut >= 0 ? taken.slice(0, cut) : taken;
      for (const unit of this.parking ? this.parking.sort(messages) : [{ kind: 'batch' as const, messages }]) {
        const error = await this.handleUnit(unit);
        if (error) return { kind: 'failed', error: error.error, unit };
      }
      if (live) this.caughtUp = true;
      if (cut >= 0) return { kind: 'finished' };
      // A long catch-up would otherwise run on microtasks alone and starve HTTP requests.
      if (read.length >= maxBatch) await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  /** Hands one unit to the handler; the failure, if any (in a box: a handler may throw anything). */
  private async handleUnit(unit: Unit): Promise<{ error: unknown } | null> {
    try {
      if (unit.kind === 'batch') {
        if (unit.messages.length > 0) await this.definition.handle(unit.messages);
      } else {
        await this.retryParked(unit.request);
      }
    } catch (error) {
      return { error };
    }
    this.succeeded(lastPosition(unit));
    return null;
  }

  /**
   * An operator asked to retry a parked event: it is handled as if it happened at the request's
   * position (the reactor's view as of now, its checkpoint moving to the request), then answered.
   */
  private async retryParked(request: RecordedEvent): Promise<void> {
    const parking = this.parking!;
    const original = await parking.original(request);
    if (original === null) {
      await this.definition.handle([{ kind: 'checkpoint', position: request.position }]);
      await parking.answer(request, 'failed', 'the parked event is no longer in the log');
      return;
    }
    // As if it happened at the request's position: the checkpoint moves to the request, not back.
    const event: RecordedEvent = Object.assign({}, original, { position: request.position });
    await this.definition.handle([{ kind: 'event', event }]);
    await parking.answer(request, 'handled', null);
    this.options.logger.log(`Stream processor ${this.name}: parked event ${original.id} handled on retry`);
  }

  /** A success resets the back-off; past the event that failed, its count too. */
  private succeeded(position: Position | null): void {
    this.attempt = 0;
    if (position === null) return;
    if (this.lastFailure && comparePositions(position, this.lastFailure.position) >= 0) this.lastFailure = null;
    if (this.narrowUntil && comparePositions(position, this.narrowUntil) >= 0) this.narrowUntil = null;
  }
}

function describeEvent(failure: EventHandlingError): string {
  const { event } = failure;
  return `event ${event.id} (${event.type}) in stream ${event.streamId}`;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}
