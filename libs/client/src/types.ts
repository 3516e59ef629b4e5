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
