import { comparePositions, type Position } from '@filing/event-store';
import { classify } from './failure';
import { lastPosition, type ParkingLot, poisonEvent, type Unit } from './parking-lot';
import {
  describe,
  type EventHandlingError,
  haltReport,
  type HaltReport,
  type ProcessorDefinition,
  type ProcessorState,
  type SupervisionOptions,
} from './processor-types';

/** What of its StreamProcessor the failure handling reads, and how it moves the processor's state. */
export interface FailureHost {
  readonly name: string;
  readonly definition: ProcessorDefinition;
  readonly parking: ParkingLot | null;
  readonly options: SupervisionOptions;
  readonly enter: (state: ProcessorState, halt?: HaltReport) => void;
}

/**
 * A StreamProcessor's failures (see there): the back-off and its reset, the count of failures in a
 * row on one event, and what a poison event leads to (parked, isolated, answered, or a halt).
 */
export class FailureHandling {
  private attempt = 0;
  private lastFailure: { key: string; position: Position; count: number } | null = null;
  /** After a failure no event was named for: one event per batch up to here. */
  private narrowUntil: Position | null = null;
  private readonly backoff: { minMs: number; maxMs: number };
  private readonly haltAfter: number;

  constructor(private readonly host: FailureHost) {
    this.backoff = { minMs: 100, maxMs: 10_000, ...host.options.backoff };
    // Transient failures never count (classify): three tries tell a poison event, and keep the stall
    // it causes (its batch retried) short, well inside the head barrier's wait.
    this.haltAfter = host.options.haltAfter ?? 3;
  }

  /** A (re)start by hand: earlier failures count no more. */
  forget(): void {
    this.lastFailure = null;
  }

  /** True while narrowing down a failure no event was named for (one event per batch). */
  get narrowing(): boolean {
    return this.narrowUntil !== null;
  }

  /** What a failure leads to: halt, start again at once (the event was dealt with), or back off. */
  async onFailure(error: unknown, unit: Unit | null): Promise<'halt' | 'again' | 'back-off'> {
    const { name, options } = this.host;
    if (unit === null || (classify(error) === 'transient' && !options.anyFailureHalts)) return 'back-off';
    const failure = poisonEvent(name, error, unit);
    if (!failure) {
      this.narrowUntil = lastPosition(unit);
      return 'back-off';
    }
    const key = `${failure.part}\u0000${failure.event.id}`;
    const count = this.lastFailure?.key === key ? this.lastFailure.count + 1 : 1;
    this.lastFailure = { key, position: failure.event.position, count };
    if (count < this.haltAfter) return 'back-off';
    try {
      if ((await this.setAside(failure, unit, count)) === 'halt') return 'halt';
    } catch (err) {
      // Recording it failed (the store): try the event again, it will be poison again.
      options.logger.warn(`Stream processor ${name} could not record a poison event: ${describe(err)}`);
      return 'back-off';
    }
    this.lastFailure = null;
    this.attempt = 0;
    return 'again';
  }

  /** The poison event out of the way: answered (a retry), isolated by the handler, parked, or a halt. */
  private async setAside(failure: EventHandlingError, unit: Unit, count: number): Promise<'halt' | 'set-aside'> {
    const { name, definition, parking, options } = this.host;
    if (unit.kind === 'retry' && parking) {
      await parking.answer(unit.request, 'failed', describe(failure.cause));
      options.logger.error(`Stream processor ${name}: retry of parked ${describeEvent(failure)} failed again`);
    } else if (definition.isolate?.(failure)) {
      // The handler took the failing part out of service; the others go on.
    } else if (parking) {
      await parking.park(failure);
      options.logger.error(
        `Stream processor ${name} PARKED ${describeEvent(failure)} after ${count} failures: ` +
          `${describe(failure.cause)}. It goes on with the next event; \`filing processors:parked\` lists it.`,
      );
    } else {
      const halt = haltReport(failure);
      this.host.enter('halted', halt);
      options.logger.error(
        `Stream processor ${name} HALTED after ${count} failures on ${describeEvent(failure)}: ` +
          `${halt.error}. It stays halted until the cause is fixed and the service restarts.`,
      );
      return 'halt';
    }
    return 'set-aside';
  }

  async backOff(error: unknown, signal: AbortSignal): Promise<void> {
    this.host.enter('restarting');
    const delay = Math.min(this.backoff.maxMs, this.backoff.minMs * 2 ** this.attempt);
    this.attempt = Math.min(this.attempt + 1, 20);
    this.host.options.logger.warn(
      `Stream processor ${this.host.name} failed (${classify(error)}), restarting from its checkpoint in ${delay} ms: ${describe(error)}`,
    );
    await sleep(delay, signal);
    if (!signal.aborted) this.host.enter('running');
  }

  /** A success resets the back-off; past the event that failed, its count too. */
  succeeded(position: Position | null): void {
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
