import type { JsonObject } from '@filing/event-store';
import type { DomainEvent } from '@filing/platform';

/** One delivery of one event to one endpoint: `webhookdelivery-<deterministic uuid v7 (event time; hash of event id, endpoint id)>`. */
export const DELIVERY_STREAM = 'webhookdelivery';

/** The delivery stream's event type names (stored: never renamed). */
export const DeliveryEvents = {
  DeliveryScheduled: 'webhooks.DeliveryScheduled',
  DeliveryClaimed: 'webhooks.DeliveryClaimed',
  DeliveryAttempted: 'webhooks.DeliveryAttempted',
  DeliveryRetryScheduled: 'webhooks.DeliveryRetryScheduled',
  DeliverySucceeded: 'webhooks.DeliverySucceeded',
  DeliveryFailed: 'webhooks.DeliveryFailed',
  DeliveryCancelled: 'webhooks.DeliveryCancelled',
  DeliveryRedeliveryRequested: 'webhooks.DeliveryRedeliveryRequested',
} as const;
/** What every delivery event type starts with (a projection's or subscription's filter). */
export const DELIVERY_EVENT_PREFIX = 'webhooks.Delivery';

export type DeliveryScheduled = DomainEvent<
  typeof DeliveryEvents.DeliveryScheduled,
  {
    delivery_id: string;
    endpoint_id: string;
    account_id: string;
    event_id: string;
    event_type: string;
    /** The domain event's position in `$all` (what the decision was taken at). */
    source_position: string;
    /** The body sent on every attempt. */
    payload: JsonObject;
    /** The domain event's time: due at once, and the same data on every replay. */
    due_at: string;
    /**
     * 'replay': scheduled by `POST /webhook-endpoints/{id}/replay` (issue 50); the endpoint's live
     * deliveries go first. Absent: a live delivery.
     */
    priority?: 'replay';
  }
>;
export type DeliveryAttempted = DomainEvent<
  typeof DeliveryEvents.DeliveryAttempted,
  {
    delivery_id: string;
    attempt: number;
    attempted_at: string;
    status_code: number | null;
    error: string | null;
    duration_ms: number;
    /**
     * 'succeeded': this attempt delivered a pending delivery, and no `DeliverySucceeded` follows
     * (one event where streams written before hold Attempted, then Succeeded). Absent: the
     * delivery's outcome, if the attempt changed it, is the next event (a retry, a failure, or in
     * those older streams the success). Stated, never derived from `status_code` on replay: the
     * classification of answers may change between versions.
     */
    outcome?: 'succeeded';
  }
>;
/**
 * An instance takes the next attempt: appended expecting the revision it loaded, so of several
 * instances reaching for one attempt exactly one appends it. Until `lease_until` no other
 * instance attempts the delivery; after it (the claimer died mid-attempt) any instance may.
 */
export type DeliveryClaimed = DomainEvent<
  typeof DeliveryEvents.DeliveryClaimed,
  { delivery_id: string; attempt: number; instance: string; lease_until: string }
>;
export type DeliveryRetryScheduled = DomainEvent<
  typeof DeliveryEvents.DeliveryRetryScheduled,
  { delivery_id: string; next_attempt_at: string }
>;
/** No longer appended (an attempt that delivers says so itself); older streams hold it after their attempt. */
export type DeliverySucceeded = DomainEvent<
  typeof DeliveryEvents.DeliverySucceeded,
  { delivery_id: string; attempt: number }
>;
/**
 * Since issue 50 it also names the delivery's account, endpoint and notification (absent in
 * older streams): `webhook_delivery.failed` is mapped from this event alone.
 */
export type DeliveryFailed = DomainEvent<
  typeof DeliveryEvents.DeliveryFailed,
  {
    delivery_id: string;
    reason: string;
    account_id?: string | null;
    endpoint_id?: string;
    event_id?: string;
    event_type?: string;
  }
>;
export type DeliveryCancelled = DomainEvent<
  typeof DeliveryEvents.DeliveryCancelled,
  { delivery_id: string; reason: string }
>;
export type DeliveryRedeliveryRequested = DomainEvent<
  typeof DeliveryEvents.DeliveryRedeliveryRequested,
  { delivery_id: string; due_at: string }
>;

export type DeliveryEvent =
  | DeliveryScheduled
  | DeliveryClaimed
  | DeliveryAttempted
  | DeliveryRetryScheduled
  | DeliverySucceeded
  | DeliveryFailed
  | DeliveryCancelled
  | DeliveryRedeliveryRequested;

/** How a delivery ended. */
export type DeliveryEnd = 'delivered' | 'failed' | 'cancelled';

/**
 * The end an event gives its delivery, or null: `DeliverySucceeded` (older streams) and a
 * `DeliveryAttempted` with outcome 'succeeded' (since) both mean delivered.
 */
export function deliveryEnd(event: { readonly type: string; readonly data: object }): DeliveryEnd | null {
  switch (event.type) {
    case DeliveryEvents.DeliveryAttempted:
      return (event.data as DeliveryAttempted['data']).outcome === 'succeeded' ? 'delivered' : null;
    case DeliveryEvents.DeliverySucceeded:
      return 'delivered';
    case DeliveryEvents.DeliveryFailed:
      return 'failed';
    case DeliveryEvents.DeliveryCancelled:
      return 'cancelled';
    default:
      return null;
  }
}
