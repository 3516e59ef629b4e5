import { comparePositions, type Position } from '@filing/event-store';
import { Injectable } from '@nestjs/common';
import type { ProcessorStatus } from './stream-processor';

/** Anything that reports processor statuses: a StreamProcessor, or the runner (one per projection). */
export interface ProcessorStatusSource {
  statuses?(): ProcessorStatus[];
  status?(): ProcessorStatus;
}

/**
 * How far `checkpoint` is behind `head`, in log positions — events with sqlite (the position is
 * the row id), bytes of log with EventStoreDB — from positions alone: nothing is read.
 */
export function positionLag(checkpoint: Position | null, head: Position | null): number {
  if (head === null) return 0;
  if (checkpoint === null) return Number(head.commit) + 1;
  return comparePositions(checkpoint, head) >= 0 ? 0 : Number(head.commit - checkpoint.commit);
}

/**
 * Every stream processor of the process, for `/readyz` (lagging running ones make it 503; halted
 * ones are listed as degraded) and `/metrics` (state, lag, restarts, parked events). Processors
 * register themselves when they start.
 */
@Injectable()
export class ProcessorRegistry {
  private readonly sources = new Set<ProcessorStatusSource>();

  register(source: ProcessorStatusSource): void {
    this.sources.add(source);
  }

  unregister(source: ProcessorStatusSource): void {
    this.sources.delete(source);
  }

  statuses(): ProcessorStatus[] {
    return [...this.sources].flatMap((s) => s.statuses?.() ?? (s.status ? [s.status()] : []));
  }

  halted(): ProcessorStatus[] {
    return this.statuses().filter((s) => s.state === 'halted');
  }

  /** Each processor's lag behind `head` (the store's head, read once by the caller). */
  lags(head: Position | null): Array<[ProcessorStatus, number]> {
    return this.statuses().map((s) => [s, positionLag(s.checkpoint, head)]);
  }
}
