import type { EntityStatus, JurisdictionStatus, PageParams, TaskStatus } from '../types';
import type {
  WebhookDeliveryAttempt,
  WebhookDeliveryStatus,
  WebhookEndpointDisabledReason,
  WebhookEventTypeName,
} from '../webhook-types';

/** Fields of every notification (CONTRACT.md §4). */
export interface WebhookEventBase<Type extends WebhookEventTypeName> {
  /** Unique per domain event; the same on every retry and every endpoint (= `webhook-id`). */
  readonly event_id: string;
  readonly event_type: Type;
  /** When the domain event happened (ISO 8601), not when it was delivered. */
  readonly timestamp: string;
  /**
   * The `version` of the resource the notification is about right after this event (what GET
   * answered then). Deliveries are unordered: keep the highest seen per resource and ignore a
   * notification with a lower one (`latestOnly`).
   */
  readonly resource_version: number;
}

export interface EntityCreatedEvent extends WebhookEventBase<'entity.created'> {
  readonly entity_id: string;
  readonly status: EntityStatus;
}
export interface EntityUpdatedEvent extends WebhookEventBase<'entity.updated'> {
  readonly entity_id: string;
  readonly status: EntityStatus;
}
export interface DocumentCreatedEvent extends WebhookEventBase<'document.created'> {
  readonly document_id: string;
  readonly entity_id: string;
  readonly order_id: string | null;
  readonly status: 'available';
}
export interface DocumentUpdatedEvent extends WebhookEventBase<'document.updated'> {
  readonly document_id: string;
  readonly entity_id: string;
  readonly order_id: string | null;
  readonly status: 'available';
}
export interface DocumentDeletedEvent extends WebhookEventBase<'document.deleted'> {
  readonly document_id: string;
  readonly entity_id: string;
  readonly order_id: string | null;
  readonly status: 'deleted';
}
export interface JurisdictionCreatedEvent extends WebhookEventBase<'jurisdiction.created'> {
  readonly jurisdiction_id: string;
  readonly entity_id: string;
  readonly status: JurisdictionStatus;
}
export interface JurisdictionUpdatedEvent extends WebhookEventBase<'jurisdiction.updated'> {
  readonly jurisdiction_id: string;
  readonly entity_id: string;
  readonly status: JurisdictionStatus;
}
export interface TaskCreatedEvent extends WebhookEventBase<'task.created'> {
  readonly task_id: string;
  readonly entity_id: string;
  readonly status: TaskStatus;
}
export interface OrderSubmittedEvent extends WebhookEventBase<'order.submitted'> {
  readonly order_id: string;
  readonly entity_id: string;
  readonly status: 'submitted';
}
export interface OrderCancelledEvent extends WebhookEventBase<'order.cancelled'> {
  readonly order_id: string;
  readonly entity_id: string;
  readonly status: 'cancelled';
}
export interface OrderCompletedEvent extends WebhookEventBase<'order.completed'> {
  readonly order_id: string;
  readonly entity_id: string;
  readonly status: 'completed';
}

/**
 * Operational: one of your endpoints was disabled by the service (it answered 410 Gone, or every
 * attempt failed for WEBHOOK_DISABLE_AFTER). Only endpoints that list it in `event_types` get it.
 */
export interface WebhookEndpointDisabledEvent extends WebhookEventBase<'webhook_endpoint.disabled'> {
  readonly endpoint_id: string;
  readonly reason: Exclude<WebhookEndpointDisabledReason, 'manual'>;
  readonly status: 'disabled';
}

/**
 * Operational: every attempt to one of your endpoints has failed for WEBHOOK_FAILING_AFTER (1 h by
 * default). Sent once per failing streak, before any auto-disable; only to endpoints that list it.
 */
export interface WebhookEndpointFailingEvent extends WebhookEventBase<'webhook_endpoint.failing'> {
  readonly endpoint_id: string;
  /** The first failed attempt of the streak. */
  readonly failing_since: string;
}

/**
 * Operational: a delivery gave up (its last retry failed, or an answer not worth retrying). Never
 * about a delivery of `webhook_delivery.failed` itself; only to endpoints that list it.
 */
export interface WebhookDeliveryFailedEvent extends WebhookEventBase<'webhook_delivery.failed'> {
  readonly delivery_id: string;
  readonly endpoint_id: string;
  /** The `event_id` and `event_type` of the notification the delivery carried. */
  readonly failed_event_id: string;
  readonly failed_event_type: WebhookEventTypeName;
}

/** Notification type name → its payload. */
export interface WebhookEventMap {
  'entity.created': EntityCreatedEvent;
  'entity.updated': EntityUpdatedEvent;
  'document.created': DocumentCreatedEvent;
  'document.updated': DocumentUpdatedEvent;
  'document.deleted': DocumentDeletedEvent;
  'jurisdiction.created': JurisdictionCreatedEvent;
  'jurisdiction.updated': JurisdictionUpdatedEvent;
  'task.created': TaskCreatedEvent;
  'order.submitted': OrderSubmittedEvent;
  'order.cancelled': OrderCancelledEvent;
  'order.completed': OrderCompletedEvent;
  'webhook_endpoint.disabled': WebhookEndpointDisabledEvent;
  'webhook_endpoint.failing': WebhookEndpointFailingEvent;
  'webhook_delivery.failed': WebhookDeliveryFailedEvent;
}

/** Any notification: narrow on `event_type` (`switch (event.event_type) { case 'order.submitted': … }`). */
export type WebhookEvent = WebhookEventMap[WebhookEventTypeName];

/** The operational names: never part of "all events" (an empty `event_types`, an unfiltered `GET /events`). */
export const OPERATIONAL_EVENT_TYPE_NAMES: readonly WebhookEventTypeName[] = Object.freeze([
  'webhook_endpoint.disabled',
  'webhook_endpoint.failing',
  'webhook_delivery.failed',
]);

/** The catalog's names, in its order: the eleven about your resources, then the operational ones. */
export const WEBHOOK_EVENT_TYPE_NAMES: readonly WebhookEventTypeName[] = Object.freeze([
  'entity.created',
  'entity.updated',
  'document.created',
  'document.updated',
  'document.deleted',
  'jurisdiction.created',
  'jurisdiction.updated',
  'task.created',
  'order.submitted',
  'order.cancelled',
  'order.completed',
  'webhook_endpoint.disabled',
  'webhook_endpoint.failing',
  'webhook_delivery.failed',
]);

/**
 * Exactly the keys of `T`, each once: a list missing one, or naming one `T` does not have, does
 * not compile. Ties the field lists below to the payload interfaces.
 */
const fieldsOf =
  <T>() =>
  <const L extends readonly (keyof T)[]>(list: L & ([Exclude<keyof T, L[number]>] extends [never] ? unknown : never)) =>
    list;

const COMMON = ['event_id', 'event_type', 'timestamp', 'resource_version'] as const;

/**
 * Every payload's fields, checked against its interface by the compiler, and by the service's
 * tests against the JSON Schemas `GET /webhook-event-types` publishes: the SDK's types cannot
 * drift from the payloads without a test failing.
 */
export const WEBHOOK_PAYLOAD_FIELDS: { readonly [T in WebhookEventTypeName]: readonly string[] } = Object.freeze({
  'entity.created': fieldsOf<EntityCreatedEvent>()([...COMMON, 'entity_id', 'status']),
  'entity.updated': fieldsOf<EntityUpdatedEvent>()([...COMMON, 'entity_id', 'status']),
  'document.created': fieldsOf<DocumentCreatedEvent>()([...COMMON, 'document_id', 'entity_id', 'order_id', 'status']),
  'document.updated': fieldsOf<DocumentUpdatedEvent>()([...COMMON, 'document_id', 'entity_id', 'order_id', 'status']),
  'document.deleted': fieldsOf<DocumentDeletedEvent>()([...COMMON, 'document_id', 'entity_id', 'order_id', 'status']),
  'jurisdiction.created': fieldsOf<JurisdictionCreatedEvent>()([...COMMON, 'jurisdiction_id', 'entity_id', 'status']),
  'jurisdiction.updated': fieldsOf<JurisdictionUpdatedEvent>()([...COMMON, 'jurisdiction_id', 'entity_id', 'status']),
  'task.created': fieldsOf<TaskCreatedEvent>()([...COMMON, 'task_id', 'entity_id', 'status']),
  'order.submitted': fieldsOf<OrderSubmittedEvent>()([...COMMON, 'order_id', 'entity_id', 'status']),
  'order.cancelled': fieldsOf<OrderCancelledEvent>()([...COMMON, 'order_id', 'entity_id', 'status']),
  'order.completed': fieldsOf<OrderCompletedEvent>()([...COMMON, 'order_id', 'entity_id', 'status']),
  'webhook_endpoint.disabled': fieldsOf<WebhookEndpointDisabledEvent>()([...COMMON, 'endpoint_id', 'reason', 'status']),
  'webhook_endpoint.failing': fieldsOf<WebhookEndpointFailingEvent>()([...COMMON, 'endpoint_id', 'failing_since']),
  'webhook_delivery.failed': fieldsOf<WebhookDeliveryFailedEvent>()([
    ...COMMON,
    'delivery_id',
    'endpoint_id',
    'failed_event_id',
    'failed_event_type',
  ]),
});

export function isWebhookEventType(name: unknown): name is WebhookEventTypeName {
  return typeof name === 'string' && (WEBHOOK_EVENT_TYPE_NAMES as readonly string[]).includes(name);
}

/** Type guard for one notification type: `if (isEvent(event, 'order.completed')) event.order_id`. */
export function isEvent<T extends WebhookEventTypeName>(event: WebhookEvent, type: T): event is WebhookEventMap[T] {
  return event.event_type === type;
}

// ── the Events API (CONTRACT.md §3 "Events"): the same payloads, listed ───────────────────────
/** One notification as `GET /events` lists it: exactly the webhook payload, plus `occurred_at`. */
export type EventListItem = WebhookEvent & {
  /** When the domain event happened (the instant of `timestamp`). */
  readonly occurred_at: string;
};
/** One delivery of a notification, in `events.get(id)`: the endpoint, its status, every attempt. */
export interface EventDelivery {
  readonly delivery_id: string;
  readonly endpoint_id: string;
  readonly status: WebhookDeliveryStatus;
  readonly attempts: WebhookDeliveryAttempt[];
}

/** `GET /events/{id}`: the notification as listed, and where it went (every endpoint's delivery). */
export type EventTimeline = EventListItem & { readonly deliveries: EventDelivery[] };

export interface EventFilters extends PageParams {
  /** Only these types (several are sent comma-separated). Without it, every type but the operational ones. */
  readonly event_type?: WebhookEventTypeName | readonly WebhookEventTypeName[];
  /** Start right after this event: the `event_id` of the last notification you processed. */
  readonly after_event_id?: string;
}
