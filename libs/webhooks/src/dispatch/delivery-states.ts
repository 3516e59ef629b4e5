import type { StreamRevision } from '@filing/event-store';
import type { RecordedEnvelope } from '@filing/platform';
import { evolveDelivery, initialDelivery, type DeliveryState } from '../deliveries/delivery';
import { type DeliveryEvent, DeliveryEvents } from '../deliveries/delivery.events';

/** Pending deliveries kept at most (a backlog beyond it reads its streams): ~1 KB each. */
export const DELIVERY_STATES_LIMIT = 25_000;

export interface KnownDelivery {
  readonly state: DeliveryState;
  readonly revision: StreamRevision;
}

/**
 * The pending deliveries' states folded from their events as the deliveries projection applies
 * them, so an attempt need not read its stream first. Only a hint: an entry is the fold of its
 * stream's events 0..revision with none missing (an event out of order drops it), and the claim
 * appends expecting that revision (or, on a store one process owns, checks it is still the
 * stream's), so an entry that missed a later write (another instance's, a cancel) fails the claim
 * and the pipeline reads the stream instead. A delivery that is no longer
 * pending is forgotten. One per app (a factory provider: the limit is a plain argument).
 */
export class DeliveryStates {
  private readonly known = new Map<string, KnownDelivery>();

  constructor(private readonly limit = DELIVERY_STATES_LIMIT) {}

  get size(): number {
    return this.known.size;
  }

  get(deliveryId: string): KnownDelivery | undefined {
    return this.known.get(deliveryId);
  }

  forget(deliveryId: string): void {
    this.known.delete(deliveryId);
  }

  /** Every delivery event, in stream order (a projection's apply). */
  observe(event: RecordedEnvelope<DeliveryEvent>): void {
    const id = event.data.delivery_id;
    const known = this.known.get(id);
    if (known === undefined) {
      // Only a stream's first event starts an entry: a later one alone is not the whole state.
      if (event.type !== DeliveryEvents.DeliveryScheduled || event.revision !== 0n) return;
      if (this.known.size >= this.limit) return;
      this.keep(id, evolveDelivery(initialDelivery, event), event.revision);
    } else if (event.revision === known.revision + 1n) {
      this.keep(id, evolveDelivery(known.state, event), event.revision);
    } else {
      // Seen twice (a projection batch re-applied) or one missed: not a fold to trust.
      this.known.delete(id);
    }
  }

  private keep(id: string, state: DeliveryState, revision: StreamRevision): void {
    if (state.status === 'pending') this.known.set(id, { state, revision });
    else this.known.delete(id);
  }
}
