import { comparePositions, type EventStore, type RecordedEvent, type SubscriptionMessage } from '@filing/event-store';
import { BoundedQueue, pump } from './bounded-queue';
import { TransientError } from './failure';
import { FailureHandling } from './failure-handling';
import { lastPosition, ParkingLot, withRecords, type Unit } from './parking-lot';
import {
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
  private readonly finishedWaiters: Array<() => void> = [];
  private readonly parking: ParkingLot | null;
  private readonly failures: FailureHandling;

  constructor(
    private readonly store: EventStore,
    readonly definition: ProcessorDefinition,
    private readonly options: SupervisionOptions,
  ) {
    this.parking = definition.kind === 'reactor' ? new ParkingLot(store, definition.name) : null;
    this.failures = new FailureHandling({
      name: definition.name,
      definition,
      parking: this.parking,
      options,
      enter: (state, halt) => {
        this.state = state;
        if (halt) this.halt = halt;
      },
    });
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
    this.failures.forget();
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
      const next = await this.failures.onFailure(outcome.error, outcome.unit);
      if (next === 'halt') return;
      if (next === 'again') continue;
      await this.failures.backOff(outcome.error, signal);
    }
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
      const read = await queue.take(this.failures.narrowing ? 1 : maxBatch);
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
    this.failures.succeeded(lastPosition(unit));
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
}
