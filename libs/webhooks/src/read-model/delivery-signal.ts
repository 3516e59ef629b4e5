import { Injectable } from '@nestjs/common';

/**
 * Rings when the deliveries read model gained work (a delivery due now, a retry, a redelivery),
 * so the dispatcher looks at once instead of at its next tick. Only a hint: the read model is
 * the truth, and the dispatcher's timer finds the same rows after a restart.
 */
@Injectable()
export class DeliverySignal {
  private readonly listeners = new Set<() => void>();

  on(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  ring(): void {
    for (const l of this.listeners) l();
  }
}
