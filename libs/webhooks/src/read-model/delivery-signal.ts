import { Injectable } from '@nestjs/common';

/** A delivery the deliveries read model has just listed as pending (and nothing else of it since). */
export interface ScheduledDelivery {
  readonly id: string;
  readonly endpointId: string;
  readonly dueAt: string;
  /** A replay's delivery: sent after the endpoint's live ones (issue 50). */
  readonly replay?: boolean;
}

/** What one projection commit added. */
export interface NewWork {
  /** New deliveries. */
  readonly scheduled: readonly ScheduledDelivery[];
  /** Work that came back (a retry time set, a redelivery): only a fresh read of the queue knows where it goes. */
  readonly other: boolean;
}

/**
 * Rings when the deliveries read model gained work (a delivery due now, a retry, a redelivery),
 * so the dispatcher looks at once instead of at its next tick. Only a hint: the read model is
 * the truth, and the dispatcher's timer finds the same rows after a restart.
 */
@Injectable()
export class DeliverySignal {
  private readonly listeners = new Set<(work: NewWork) => void>();

  on(listener: (work: NewWork) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  ring(work: NewWork): void {
    for (const l of this.listeners) l(work);
  }
}
