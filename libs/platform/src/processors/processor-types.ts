import {
  positionToString,
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
 * A handler failed on one event. Whether the processor retries it for ever or counts it towards
 * poison is decided by `classify(cause)` (what failed), never by where it was thrown.
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
  /** Unique among processors: names it in logs, /readyz, /metrics and its record stream. */
  readonly name: string;
  /**
   * A projector writes read-model rows: a poison event halts it (it cannot skip without lying).
   * A reactor appends events: a poison event is parked (recorded) and it goes on.
   */
  readonly kind: 'projector' | 'reactor';
  readonly filter?: SubscriptionFilter;
  /** Most messages handed to `handle` at once (default 500). */
  readonly maxBatch?: number;
  /** Before every (re)start: reload in-memory state a failed batch may have left half-applied. */
  beforeStart?(): void | Promise<void>;
  /** Read at every (re)start: the processor resumes after it; null is the start of the log. */
  resumeFrom(): Position | null;
  /**
   * Handles a batch in order and commits its effects and checkpoint (one transaction where it
   * can: whatever is not committed is handed over again after a restart). Throw an
   * `EventHandlingError` to name the event that failed, a `TransientError` for a failure that is
   * not the event's.
   */
  handle(batch: readonly ProcessorMessage[]): void | Promise<void>;
  /**
   * A poison event: the same event failed `haltAfter` times in a row. Return true when the
   * handler took the part that failed out of service itself (the runner halts one projection, the
   * others go on); the processor then restarts at once. Otherwise it halts, or parks (a reactor).
   */
  isolate?(failure: EventHandlingError): boolean;
}

export interface SupervisionOptions {
  /** Restart delays double from `minMs` up to `maxMs`, and start again from `minMs` after a success. */
  readonly backoff?: { readonly minMs: number; readonly maxMs: number };
  /** Consecutive failures on one event before it is taken for poison. Default 3. */
  readonly haltAfter?: number;
  /** Any failure, transient too, counts towards `haltAfter` (rebuilds and audits: fail fast). */
  readonly anyFailureHalts?: boolean;
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
  /** It has handled everything up to the head once since it started (then it follows live events). */
  readonly caughtUp?: boolean;
  /** A reactor: events parked now (recorded in its stream, by any instance). */
  readonly parked?: number;
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

export function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
