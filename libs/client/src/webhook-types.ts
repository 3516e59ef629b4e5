/**
 * The webhook side of the API's types (CONTRACT.md §4): endpoints, deliveries, settings, the
 * event-type catalog. Same conventions as ./types (snake_case JSON, ISO 8601 UTC timestamps).
 */
import type { PageParams, Resource } from './types';

// ── webhook endpoints (CONTRACT.md §4) ──────────────────────────────────────────────────────
export type WebhookEventTypeName =
  | 'entity.created'
  | 'entity.updated'
  | 'document.created'
  | 'document.updated'
  | 'document.deleted'
  | 'jurisdiction.created'
  | 'jurisdiction.updated'
  | 'task.created'
  | 'order.submitted'
  | 'order.cancelled'
  | 'order.completed'
  /** Operational: only to endpoints that list it (never part of "all events"). */
  | 'webhook_endpoint.disabled'
  | 'webhook_endpoint.failing'
  | 'webhook_delivery.failed';

export interface WebhookEndpoint extends Resource {
  readonly url: string;
  readonly description: string | null;
  /** Empty: every event type but the operational `webhook_endpoint.disabled`, sent only when listed. */
  readonly event_types: WebhookEventTypeName[];
  readonly enabled: boolean;
  /**
   * null while enabled; else `manual` (disabled by a user, or new and not enabled yet), `gone`
   * (the receiver answered 410 Gone) or `failing` (every attempt failed for WEBHOOK_DISABLE_AFTER,
   * 5 days by default). Enabling clears it.
   */
  readonly disabled_reason: WebhookEndpointDisabledReason | null;
  /** Requests per second at most (1–1,000); null: no limit. Deliveries beyond it wait, none is dropped. */
  readonly rate_limit_per_second: number | null;
}
export type WebhookEndpointDisabledReason = 'manual' | 'gone' | 'failing';
/** Create and rotate-secret answer with the signing secret (`whsec_…`). */
export interface WebhookEndpointWithSecret extends WebhookEndpoint {
  readonly secret: string;
}
export interface CreateWebhookEndpoint {
  /** Absolute `https:` URL on a public address. */
  url: string;
  description?: string;
  event_types?: WebhookEventTypeName[];
  /** 1–1,000 requests per second; null or absent: no limit. */
  rate_limit_per_second?: number | null;
}
export interface UpdateWebhookEndpoint {
  url?: string;
  description?: string | null;
  event_types?: WebhookEventTypeName[];
  /** null removes the limit. */
  rate_limit_per_second?: number | null;
}
export interface WebhookEndpointSecret {
  readonly secret: string;
}
export interface WebhookSettings {
  /** The account switch *Webhook Notifications*; off for a new account. */
  readonly notifications_enabled: boolean;
}
export interface WebhookEventTypeInfo {
  readonly name: WebhookEventTypeName;
  readonly label: string;
  readonly category: string;
  readonly description: string;
  /** A JSON Schema (2020-12) of the exact payload (`additionalProperties: false`). */
  readonly schema: Record<string, unknown>;
  /** Changes only when a field changes meaning or goes; added fields keep it. */
  readonly schema_version: number;
}
export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed' | 'cancelled';

export interface WebhookDelivery {
  readonly id: string;
  readonly event_id: string;
  readonly event_type: WebhookEventTypeName;
  readonly endpoint_id: string;
  readonly status: WebhookDeliveryStatus;
  readonly attempt_count: number;
  readonly last_attempt_at: string | null;
  readonly next_attempt_at: string | null;
  readonly created_at: string;
}
export interface WebhookDeliveryAttempt {
  readonly attempted_at: string;
  readonly status_code: number | null;
  readonly error: string | null;
  readonly duration_ms: number;
}
export interface WebhookDeliveryDetail extends WebhookDelivery {
  readonly attempts: WebhookDeliveryAttempt[];
}
export interface WebhookDeliveryFilters extends PageParams {
  readonly status?: WebhookDeliveryStatus;
}

/** `POST /webhook-endpoints/{id}/recover`. */
export interface RecoverDeliveries {
  /** Every `failed` delivery whose event happened at or after this instant is sent again (an ISO 8601 time with its offset, or a Date). */
  since: string | Date;
}
export interface RecoveredDeliveries {
  /** How many failed deliveries are pending again (new attempts, the same `webhook-id`). */
  readonly deliveries: number;
}
/** `POST /webhook-endpoints/{id}/replay`. */
export interface ReplayNotifications {
  /** Every notification of the account that happened at or after this instant and matches the endpoint's event types. */
  since: string | Date;
  /** …and before this one (default: up to now). */
  until?: string | Date;
}
export interface ReplayedNotifications {
  /** How many notifications are pending delivery to the endpoint (original event_id; after its live deliveries). */
  readonly deliveries: number;
}
/** `GET /webhook-endpoints/{id}/stats`: the last 24 h. */
export interface WebhookEndpointStats {
  /** Deliveries that succeeded in the last 24 h. */
  readonly delivered: number;
  /** Deliveries that ended `failed` in the last 24 h. */
  readonly failed: number;
  /** Deliveries waiting now for their first attempt or a retry. */
  readonly pending: number;
  /** Response time of the last 24 h's attempts that got an HTTP answer; null without any. */
  readonly p50_ms: number | null;
  readonly p99_ms: number | null;
  /** The latest attempt the receiver answered 2xx; null if none ever did. */
  readonly last_success_at: string | null;
  /** The first failed attempt after the last success; null when the last attempt succeeded or none failed. */
  readonly failing_since: string | null;
}
