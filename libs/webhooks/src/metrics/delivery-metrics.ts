import { EVENT_STORE, type EventStore, ObservedEventStore } from '@filing/event-store';
import { Metrics, ProjectionRunner } from '@filing/platform';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { type DeliveryEnd, deliveryEnd } from '../deliveries/delivery.events';
import { DeliveryQueue, type PendingStats } from '../read-model/delivery-queue.queries';

const ENDS: readonly DeliveryEnd[] = ['delivered', 'failed', 'cancelled'];

/**
 * Delivery metrics beside the dispatcher's per-attempt ones: final outcomes, counted from the
 * outcome events this process appends (the dispatcher's, the fan-out's and the API's, once each);
 * the queue's depth and the age of its oldest delivery, read from the deliveries read model at
 * each scrape, so they are right after a restart and need no bookkeeping.
 */
@Injectable()
export class DeliveryMetrics {
  private readonly logger = new Logger('WebhookMetrics');

  constructor(
    @Inject(EVENT_STORE) store: EventStore,
    private readonly runner: ProjectionRunner,
    private readonly queue: DeliveryQueue,
    @Optional() metrics?: Metrics,
  ) {
    if (!metrics) return;
    const outcomes = new Counter({
      name: 'webhook_deliveries_total',
      help: 'Webhook deliveries that reached a final outcome in this process: delivered, failed or cancelled (once per delivery, not per attempt)',
      labelNames: ['outcome'] as const,
      registers: [metrics.registry],
    });
    // Every outcome is exported from the start, so rate() sees the first one.
    for (const outcome of ENDS) outcomes.inc({ outcome }, 0);
    if (store instanceof ObservedEventStore) {
      store.onAppend((_stream, events) => {
        for (const event of events) {
          const outcome = deliveryEnd(event);
          if (outcome) outcomes.inc({ outcome });
        }
      });
    }

    const stats = () => this.pendingStats();
    new Gauge({
      name: 'webhook_delivery_queue_depth',
      help: 'Pending webhook deliveries: due (next attempt time reached: being sent or waiting for a slot) or waiting (for a retry time)',
      labelNames: ['state'] as const,
      registers: [metrics.registry],
      collect() {
        const s = stats();
        if (!s) return;
        this.set({ state: 'due' }, s.due);
        this.set({ state: 'waiting' }, s.waiting);
      },
    });
    new Gauge({
      name: 'webhook_delivery_oldest_pending_age_seconds',
      help: 'Age of the oldest pending webhook delivery, since its event (or its redelivery request); 0 when none is pending',
      registers: [metrics.registry],
      collect() {
        const s = stats();
        if (!s) return;
        this.set(s.oldest ? Math.max(0, (Date.now() - Date.parse(s.oldest)) / 1000) : 0);
      },
    });
  }

  /** null while the read model cannot be read (its tables are made at start, or being rebuilt). */
  private pendingStats(): PendingStats | null {
    if (!this.runner.db.open) return null;
    try {
      return this.queue.pendingStats(new Date());
    } catch (err) {
      this.logger.debug?.(`Delivery queue metrics: ${(err as Error).message}`);
      return null;
    }
  }
}
