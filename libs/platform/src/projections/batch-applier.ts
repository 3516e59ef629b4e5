import { comparePositions, type Position, type RecordedEvent } from '@filing/event-store';
import type Database from 'better-sqlite3';
import { fromRecorded, type RecordedEnvelope } from '../events/envelope';
import { EventHandlingError, messagePosition, type ProcessorMessage } from '../processors/stream-processor';
import type { CheckpointStore } from './checkpoint-store';
import { projectionHandles, type Projection } from './projection';

/** An event a projection could not apply: the runner never skips over it. */
export class ProjectionFailedError extends EventHandlingError {
  constructor(
    readonly projection: string,
    event: ConstructorParameters<typeof EventHandlingError>[1],
    options: { cause: unknown },
  ) {
    super(`projection ${projection}`, event, options);
  }
}

/** Where a batch's statements go: a database handle, and the transaction that holds them. */
export interface BatchTarget {
  readonly db: Database.Database;
  /** Runs `work` as one transaction: committed if it returns, rolled back if it throws. */
  transaction(work: () => void): void;
}

/** What a batch's transaction works through. */
interface BatchRun {
  readonly db: Database.Database;
  readonly active: readonly Projection[];
  readonly batch: readonly ProcessorMessage[];
  /** The checkpoints as they move; saved at the end. */
  readonly next: Map<string, Position | null>;
}

/**
 * Applies batches of events to the projections in service: every projection's rows and
 * checkpoints in one transaction, or nothing. Shared by the live projector and the rebuilder.
 */
export class BatchApplier {
  private handlerCache: { active: readonly Projection[]; byType: Map<string, readonly Projection[]> } | undefined;

  constructor(
    private readonly checkpoints: CheckpointStore,
    /** An operator chose to skip this event for this projection (`processors:skip`). */
    private readonly isSkipped: (projection: string, eventId: string) => boolean,
  ) {}

  /** One transaction on `target`; returns the new checkpoints (the caller commits them to the store). */
  apply(
    target: BatchTarget,
    active: readonly Projection[],
    batch: readonly ProcessorMessage[],
    kind: { readonly rebuild: boolean },
  ): Map<string, Position | null> {
    const run: BatchRun = { db: target.db, active, batch, next: new Map(this.checkpoints.current) };
    // Past the highest checkpoint every active projection takes every event: no per-projection
    // comparisons there, and the checkpoints all move to the batch's end.
    const ahead = highestCheckpoint(run);
    const handlers = this.handlersOf(active);
    target.transaction(() => {
      for (const p of active) p.beginBatch?.(run.db, kind);
      const from = this.catchUp(run, ahead);
      for (let i = from; i < batch.length; i++) {
        const work = batch[i];
        if (work.kind !== 'event') continue;
        let envelope: RecordedEnvelope | undefined;
        for (const p of handlers(work.event.type)) envelope = this.applyOne(run.db, p, work.event, envelope);
      }
      for (const p of active) p.endBatch?.(run.db);
      const last = batch.length > 0 ? messagePosition(batch[batch.length - 1]) : null;
      if (last !== null && (ahead === null || comparePositions(last, ahead) > 0)) {
        for (const p of active) run.next.set(p.name, last);
      }
      this.checkpoints.save(run.db, run.next, active);
    });
    return run.next;
  }

  /**
   * Up to the highest checkpoint, where projections stand at different positions: each event to
   * each projection not past it yet. Returns the index of the first message beyond.
   */
  private catchUp(run: BatchRun, ahead: Position | null): number {
    const { batch, active, next } = run;
    let i = 0;
    for (; i < batch.length; i++) {
      const work = batch[i];
      const position = work.kind === 'event' ? work.event.position : work.position;
      if (ahead === null || comparePositions(position, ahead) > 0) break;
      let envelope: RecordedEnvelope | undefined;
      for (const p of active) {
        const cp = next.get(p.name) ?? null;
        if (cp !== null && comparePositions(cp, position) >= 0) continue;
        if (work.kind === 'event' && projectionHandles(p, work.event.type)) {
          envelope = this.applyOne(run.db, p, work.event, envelope);
        }
        next.set(p.name, position);
      }
    }
    return i;
  }

  /** Applies one event to one projection; converted once per event, and only when someone handles it. */
  private applyOne(
    db: Database.Database,
    p: Projection,
    event: RecordedEvent,
    envelope: RecordedEnvelope | undefined,
  ): RecordedEnvelope | undefined {
    if (this.isSkipped(p.name, event.id)) return envelope;
    try {
      // Foreign events need no valid metadata: they are never converted.
      const converted = envelope ?? fromRecorded(event);
      p.apply(db, converted);
      return converted;
    } catch (cause) {
      throw new ProjectionFailedError(p.name, event, { cause });
    }
  }

  /** The projections (of `active`, in registration order) handling an event type, cached per type. */
  private handlersOf(active: readonly Projection[]): (type: string) => readonly Projection[] {
    if (this.handlerCache?.active.length !== active.length || this.handlerCache.active.some((p, i) => p !== active[i]))
      this.handlerCache = { active, byType: new Map() };
    const { byType } = this.handlerCache;
    return (type) => {
      let list = byType.get(type);
      if (!list) byType.set(type, (list = active.filter((p) => projectionHandles(p, type))));
      return list;
    };
  }
}

function highestCheckpoint({ active, next }: BatchRun): Position | null {
  let ahead: Position | null = null;
  for (const p of active) {
    const cp = next.get(p.name) ?? null;
    if (cp !== null && (ahead === null || comparePositions(cp, ahead) > 0)) ahead = cp;
  }
  return ahead;
}
