import type {
  EntityStatus,
  JurisdictionStatus,
  PageParams,
  TaskStatus,
  WebhookEndpointDisabledReason,
  WebhookEventTypeName,
} from '../types';

/** Fields of every notification (CONTRACT.md §4). */
export interface WebhookEventBase<Type extends WebhookEventTypeName> {
  /** Unique per domain event; the same on every retry and every endpoint (= `webhook-id`). */
  readonly event_id: string;
  readonly event_type: Type;
  /** When the domain event happened (ISO 8601), not when it was delivered. */
  readonly timestamp: string;
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
}

/** Any notification: narrow on `event_type` (`switch (event.event_type) { case 'order.submitted': … }`). */
export type WebhookEvent = WebhookEventMap[WebhookEventTypeName];

/** The operational names: never part of "all events" (an empty `event_types`, an unfiltered `GET /events`). */
export const OPERATIONAL_EVENT_TYPE_NAMES: readonly WebhookEventTypeName[] = Object.freeze([
  'webhook_endpoint.disabled',
]);

/** The catalog's names, in its order: the eleven about your resources, then the operational one. */
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
]);

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
export interface EventFilters extends PageParams {
  /** Only these types (several are sent comma-separated). Without it, every type but `webhook_endpoint.disabled`. */
  readonly event_type?: WebhookEventTypeName | readonly WebhookEventTypeName[];
  /** Start right after this event: the `event_id` of the last notification you processed. */
  readonly after_event_id?: string;
}
