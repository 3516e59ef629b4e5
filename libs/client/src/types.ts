/**
 * The API's resources and request bodies, exactly as the contract writes them (snake_case JSON).
 * Ids are UUID strings; timestamps ISO 8601 UTC strings; dates (`formation_date`, `due_date`)
 * `YYYY-MM-DD` strings.
 */

/** Fields every resource carries. `version` is its stream revision, also sent as `ETag: "<version>"`. */
export interface Resource {
  readonly id: string;
  readonly created_at: string;
  readonly updated_at: string;
  readonly version: number;
}

/** Every collection: oldest first; pass `next_cursor` back as `cursor` until it is null. */
export interface Page<T> {
  readonly data: T[];
  readonly next_cursor: string | null;
}

export interface PageParams {
  /** 1..200, default 50. */
  readonly limit?: number;
  /** The `next_cursor` of the previous page. */
  readonly cursor?: string;
}

/** One event of `GET /{family}/{id}/history`: the customer's audit trail. */
export interface HistoryEvent<Type extends string = string> {
  /** e.g. `EntityCreated`. */
  readonly type: Type;
  readonly occurred_at: string;
  /** Who caused it, e.g. `client:<client_id>` or `operator:<id>`. */
  readonly actor: string;
  readonly data: Record<string, unknown>;
}

// ── entities ────────────────────────────────────────────────────────────────────────────────
export type EntityType = 'llc' | 'corporation' | 'nonprofit' | 'partnership' | 'sole_proprietorship' | 'other';
export type EntityStatus = 'active' | 'inactive' | 'dissolved';

export interface Entity extends Resource {
  readonly name: string;
  readonly entity_type: EntityType;
  readonly status: EntityStatus;
  readonly formation_jurisdiction: string | null;
  readonly formation_date: string | null;
}
export interface CreateEntity {
  name: string;
  entity_type: EntityType;
  formation_jurisdiction?: string;
  formation_date?: string;
}
export interface UpdateEntity {
  name?: string;
  status?: EntityStatus;
  formation_jurisdiction?: string | null;
  formation_date?: string | null;
}
export interface EntityFilters extends PageParams {
  readonly status?: EntityStatus;
  readonly entity_type?: EntityType;
  /** Free-text search on the name. */
  readonly q?: string;
}
export type EntityEventType = 'EntityCreated' | 'EntityUpdated';

// ── jurisdictions ───────────────────────────────────────────────────────────────────────────
export type RegistrationType = 'domestic' | 'foreign';
export type JurisdictionStatus = 'pending' | 'active' | 'inactive';

export interface Jurisdiction extends Resource {
  readonly entity_id: string;
  /** ISO 3166-2, e.g. `US-DE`. */
  readonly code: string;
  readonly registration_type: RegistrationType;
  readonly status: JurisdictionStatus;
}
export interface CreateJurisdiction {
  entity_id: string;
  code: string;
  registration_type: RegistrationType;
}
export interface UpdateJurisdiction {
  registration_type?: RegistrationType;
  status?: JurisdictionStatus;
}
export interface JurisdictionFilters extends PageParams {
  readonly entity_id?: string;
  readonly status?: JurisdictionStatus;
}
export type JurisdictionEventType = 'JurisdictionAdded' | 'JurisdictionUpdated';

// ── documents ───────────────────────────────────────────────────────────────────────────────
export interface Document extends Resource {
  readonly entity_id: string;
  readonly order_id: string | null;
  readonly title: string;
  readonly document_type: string;
  /** The MIME type `GET /documents/{id}/content` answers with. */
  readonly content_type: string;
  /** Size of the content in bytes. */
  readonly size_bytes: number;
  /** Hex SHA-256 of the content: compare it with what `content()` returns. */
  readonly sha256: string;
}
export interface CreateDocument {
  entity_id: string;
  order_id?: string;
  title: string;
  document_type: string;
  content_type: string;
  /** The bytes, base64 (≤ 10 MiB decoded). `Buffer.from(bytes).toString('base64')`. */
  content_base64: string;
}
export interface UpdateDocument {
  title?: string;
  document_type?: string;
}
export interface DocumentFilters extends PageParams {
  readonly entity_id?: string;
  readonly order_id?: string;
}
/** `GET /documents/{id}/content`. */
export interface DocumentContent {
  readonly content_type: string;
  readonly data: Buffer;
}
export type DocumentEventType = 'DocumentAdded' | 'DocumentUpdated' | 'DocumentDeleted';

// ── tasks ───────────────────────────────────────────────────────────────────────────────────
export type TaskStatus = 'open' | 'completed';

export interface Task extends Resource {
  readonly entity_id: string;
  readonly title: string;
  readonly description: string | null;
  readonly due_date: string | null;
  readonly status: TaskStatus;
}
export interface CreateTask {
  entity_id: string;
  title: string;
  description?: string;
  due_date?: string;
}
export interface UpdateTask {
  title?: string;
  description?: string | null;
  due_date?: string | null;
  status?: TaskStatus;
}
export interface TaskFilters extends PageParams {
  readonly entity_id?: string;
  readonly status?: TaskStatus;
}
export type TaskEventType = 'TaskCreated' | 'TaskUpdated';

// ── orders ──────────────────────────────────────────────────────────────────────────────────
export type OrderType =
  | 'formation'
  | 'annual_report'
  | 'registered_agent'
  | 'amendment'
  | 'dissolution'
  | 'foreign_qualification'
  | 'certificate_of_good_standing'
  | 'other';
export type OrderStatus = 'submitted' | 'cancelled' | 'completed';

export interface Order extends Resource {
  readonly entity_id: string;
  readonly order_type: OrderType;
  readonly jurisdiction_code: string | null;
  /** Free-form JSON you sent at creation (`{}` when none). */
  readonly details: Record<string, unknown>;
  readonly status: OrderStatus;
  /** The reason given when cancelling (null otherwise, or when none was given). */
  readonly cancellation_reason: string | null;
}
export interface CreateOrder {
  entity_id: string;
  order_type: OrderType;
  jurisdiction_code?: string;
  details?: Record<string, unknown>;
}
export interface CancelOrder {
  reason?: string | null;
}
export interface OrderFilters extends PageParams {
  readonly entity_id?: string;
  readonly status?: OrderStatus;
}
export type OrderEventType = 'OrderSubmitted' | 'OrderCancelled' | 'OrderCompleted';

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
