import type { EventStore, Position } from '@filing/event-store';
import type { LoggerService } from '@nestjs/common';
import { field, ProcessorRecords, processorStream, skippedEvents } from '../processors/processor-records';
import {
  haltReport,
  StreamProcessor,
  type EventHandlingError,
  type HaltReport,
  type ProcessorMessage,
  type ProcessorStatus,
} from '../processors/stream-processor';
import { ProjectionFailedError } from './batch-applier';
import type { CheckpointStore } from './checkpoint-store';
import type { Projection } from './projection';

export interface LiveProjectorOptions {
  readonly store: EventStore;
  readonly logger: Pick<LoggerService, 'log' | 'error' | 'warn'>;
  /** The runner's projections (the same array: it grows as they are registered). */
  readonly projections: readonly Projection[];
  readonly checkpoints: CheckpointStore;
  readonly maxBatch: number;
  readonly stopAt?: Position;
  readonly backoff?: { readonly minMs: number; readonly maxMs: number };
  /** False: any failure fails the whole run at once (rebuilds, audits). */
  readonly isolateFailures: boolean;
  /** Applies and commits a batch (throws what failed). */
  readonly handle: (batch: readonly ProcessorMessage[]) => void;
  /** The runner stops for good on this failure. */
  readonly fail: (err: unknown) => void;
}

interface Waiter {
  readonly position: Position;
  readonly settle: (reached: boolean) => void;
}

/**
 * The projections as one stream processor (libs/platform/src/processors) on an unfiltered `$all`
 * subscription, resuming from the lowest checkpoint in service. It keeps what is out of service:
 * a projection halted on an event, the events operators skipped; and who waits for a position.
 */
export class LiveProjector {
  private processor: StreamProcessor | null = null;
  private readonly halted = new Map<string, HaltReport>();
  /** Per projection, the events an operator chose to skip (`processors:skip`), from its record stream. */
  private skips = new Map<string, Set<string>>();
  private readonly waiters = new Set<Waiter>();

  constructor(private readonly options: LiveProjectorOptions) {}

  start(): void {
    const { store, logger, maxBatch, backoff, stopAt, isolateFailures } = this.options;
    this.processor = new StreamProcessor(
      store,
      {
        name: 'projections',
        kind: 'projector',
        maxBatch,
        beforeStart: () => this.loadSkips(),
        resumeFrom: () => this.resumePosition(),
        handle: (batch) => this.options.handle(batch),
        isolate: (failure) => this.isolate(failure),
      },
      {
        logger,
        ...(backoff && { backoff }),
        ...(stopAt && { stopAt }),
        ...(!isolateFailures && { haltAfter: 1, anyFailureHalts: true }),
      },
    );
    this.processor.start();
  }

  async stop(): Promise<void> {
    const processor = this.processor;
    this.processor = null;
    await processor?.stop();
  }

  /** A new run (start, replay): every projection in service again. */
  clearHalts(): void {
    this.halted.clear();
  }

  get haltedCount(): number {
    return this.halted.size;
  }

  /** The processor is neither running nor done (stopped, or halted as a whole). */
  get stalled(): boolean {
    return this.processor !== null && !this.processor.running && this.processor.status().state !== 'finished';
  }

  /** The projections in service, in registration order. */
  active(): Projection[] {
    return this.options.projections.filter((p) => !this.halted.has(p.name));
  }

  /** Where the subscription resumes: the lowest checkpoint of the projections still in service. */
  resumePosition(): Position | null {
    return this.options.checkpoints.lowest(this.active());
  }

  /** Every projection in service has reached `position` (halted ones are not waited on, see waitFor). */
  reached(position: Position): boolean {
    return this.options.checkpoints.reached(this.active(), position);
  }

  isSkipped(projection: string, eventId: string): boolean {
    return this.skips.get(projection)?.has(eventId) ?? false;
  }

  /** Reads each projection's record stream: the events operators chose to skip for it. */
  async loadSkips(): Promise<void> {
    const skips = new Map<string, Set<string>>();
    for (const p of this.options.projections) {
      const skipped = skippedEvents(await this.options.store.readStream(processorStream(`projection:${p.name}`)));
      if (skipped.size > 0) skips.set(p.name, skipped);
    }
    this.skips = skips;
  }

  /**
   * An operator skipped an event for a projection (recorded, so every instance reads it here): a
   * projection halted on it comes back into service (`resume`, once the batch has committed).
   */
  learnSkips(batch: readonly ProcessorMessage[]): string[] {
    const resumed: string[] = [];
    for (const work of batch) {
      if (work.kind !== 'event' || work.event.type !== ProcessorRecords.EventSkipped) continue;
      const name = field(work.event, 'processor').replace(/^projection:/, '');
      const eventId = field(work.event, 'event_id');
      if (!this.options.projections.some((p) => p.name === name)) continue;
      this.skips.set(name, (this.skips.get(name) ?? new Set()).add(eventId));
      if (this.halted.get(name)?.eventId === eventId) resumed.push(name);
    }
    return resumed;
  }

  /** Back in service; the subscription starts again from the lowest checkpoint, theirs. */
  resume(names: readonly string[]): void {
    for (const name of names) {
      this.halted.delete(name);
      this.options.logger.warn(
        `Projection ${name}: its event was skipped by an operator; resuming from its checkpoint`,
      );
    }
    this.processor?.restart();
  }

  /** The processor saw one projection fail on one event again and again: take it out of service. */
  private isolate(failure: EventHandlingError): boolean {
    if (!(failure instanceof ProjectionFailedError) || !this.options.isolateFailures) {
      this.options.fail(failure);
      return false;
    }
    const report = haltReport(failure);
    this.halted.set(failure.projection, report);
    this.options.logger.error(
      `Projection ${failure.projection} HALTED on event ${report.eventId} (${report.eventType}) in stream ` +
        `${report.streamId}: ${report.error}. Its read model stays at its checkpoint, and requests that need it ` +
        `answer 503, until the cause is fixed and the service restarts (or an operator runs ` +
        `'filing processors:skip projection:${failure.projection} ${report.eventId}'); the other projections go on.`,
    );
    // Writers no longer wait on it.
    this.settleReached();
    return true;
  }

  /** The halted projections among `names` (every one when omitted), with the event each stopped on. */
  haltedProjections(names?: Iterable<string>): Array<HaltReport & { readonly projection: string }> {
    const wanted = names ? [...names] : [...this.halted.keys()];
    return wanted.flatMap((name) => {
      const report = this.halted.get(name);
      return report ? [{ projection: name, ...report }] : [];
    });
  }

  /** One status per projection, named `projection:<name>`, for /readyz and /metrics. */
  statuses(): ProcessorStatus[] {
    const processor = this.processor?.status();
    return this.options.projections.map((p) => {
      const halted = this.halted.get(p.name) ?? null;
      return {
        name: `projection:${p.name}`,
        kind: 'projector' as const,
        state: halted ? 'halted' : (processor?.state ?? 'stopped'),
        restarts: processor?.restarts ?? 0,
        caughtUp: processor?.caughtUp ?? false,
        checkpoint: this.options.checkpoints.get(p.name),
        halted: halted ?? processor?.halted ?? null,
      };
    });
  }

  /** Resolves true once every projection in service has reached `position`, false at the timeout. */
  waitFor(position: Position, timeoutMs: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => waiter.settle(false), timeoutMs);
      const waiter: Waiter = {
        position,
        settle: (reached) => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve(reached);
        },
      };
      this.waiters.add(waiter);
    });
  }

  /** Answers the waiters whose position every projection in service has reached. */
  settleReached(): void {
    for (const waiter of this.waiters) if (this.reached(waiter.position)) waiter.settle(true);
  }

  settleAll(reached: boolean): void {
    for (const waiter of this.waiters) waiter.settle(reached);
  }
}
