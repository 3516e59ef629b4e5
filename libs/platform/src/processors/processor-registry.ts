import { comparePositions, type EventStore } from '@filing/event-store';
import { Injectable } from '@nestjs/common';
import type { ProcessorStatus } from './stream-processor';

/** Anything that reports processor statuses: a StreamProcessor, or the runner (one per projection). */
export interface ProcessorStatusSource {
  statuses?(): ProcessorStatus[];
  status?(): ProcessorStatus;
}

/** Lag is counted up to this many events: past it an operator needs no exact figure. */
export const LAG_COUNT_CAP = 10_000;

/**
 * Every stream processor of the process, for `/readyz` (a halted one makes it 503, named) and
 * `/metrics` (state, lag in events, restarts). Processors register themselves when they start.
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

  /**
   * Events in `$all` after each processor's checkpoint (capped at LAG_COUNT_CAP). Read only for
   * processors behind the head, so a caught-up service pays one head read per scrape.
   */
  async lags(store: EventStore): Promise<Array<[ProcessorStatus, number]>> {
    const head = await store.headPosition();
    const out: Array<[ProcessorStatus, number]> = [];
    for (const status of this.statuses()) {
      const cp = status.checkpoint;
      if (head === null || (cp !== null && comparePositions(cp, head) >= 0)) {
        out.push([status, 0]);
        continue;
      }
      const ahead = await store.readAll({ from: cp ?? 'start', maxCount: LAG_COUNT_CAP + 1 });
      out.push([status, ahead.filter((e) => cp === null || comparePositions(e.position, cp) > 0).length]);
    }
    return out;
  }
}
