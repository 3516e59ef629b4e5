import type { Json, JsonObject } from '@filing/event-store';
import { extend, jsonObject } from '@filing/platform';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType, type WebhookEventTypeName } from '../catalog/event-types';
import { DeliveryEvents } from '../deliveries/delivery.events';
import { disabledReasonOf, EndpointEvents } from '../endpoints/endpoint.events';
import { FIELDS, type JsonSchema, payloadSchema, SCHEMA_VERSION } from './payload-schemas';

/** The JSON body sent to receivers (CONTRACT.md §4 table). */
export interface Notification extends JsonObject {
  event_id: string;
  event_type: WebhookEventTypeName;
  timestamp: string;
  resource_version: number;
}

/**
 * What the fan-out remembers about one resource (keyed by its stream), so an update event that
 * carries only the changed fields still yields a complete payload (entity_id, order_id, status).
 */
export interface ResourceFacts {
  readonly entity_id?: string | null;
  readonly order_id?: string | null;
  readonly status?: string | null;
}

/** The facts as text, as the projection's and the fan-out's tables keep them (JSON.stringify's bytes). */
export function factsText(facts: ResourceFacts): string {
  return jsonObject(facts);
}

/**
 * Whether earlier events of `event`'s stream can have left facts: not for its first, since a
 * deleted stream's next append continues its revisions (revision 0 is a stream's first event
 * ever). Every order, entity, … begins one, so the projection and the fan-out skip the read.
 */
export function mayHaveFacts(event: { readonly revision: bigint }): boolean {
  return event.revision !== 0n;
}

export interface MappableEvent {
  readonly id: string;
  /** Its stream revision: the resource's `version` after it (`resource_version`). */
  readonly revision: bigint;
  readonly type: string;
  readonly streamId: string;
  readonly data: JsonObject;
  readonly occurredAt: string;
}

/**
 * The body of a notification as it goes over the wire, and as the Events API shows it: one
 * serialization for both, so a webhook body and the Events API's item are byte-equal.
 */
export function serializeNotification(notification: JsonObject): string {
  return JSON.stringify(notification);
}

export interface MapResult {
  /** null: the event is not a notification (e.g. TaskUpdated, a user's disable). */
  readonly notification: Notification | null;
  /** The resource's facts after the event; null when the event concerns no tracked resource. */
  readonly facts: ResourceFacts | null;
}

/**
 * Event type prefixes whose events the mapper reads (for the subscription filter): the five
 * families, and the webhooks' own events behind the operational notifications.
 */
export const NOTIFIABLE_EVENT_PREFIXES = [
  'entities.',
  'jurisdictions.',
  'documents.',
  'tasks.',
  'orders.',
  EndpointEvents.EndpointDisabled,
  EndpointEvents.EndpointFailing,
  DeliveryEvents.DeliveryFailed,
] as const;

const str = (v: Json | undefined): string | null => (typeof v === 'string' && v.length > 0 ? v : null);

/** The id after `<context>-`: every family's stream is named for its resource. */
function streamResourceId(streamId: string): string {
  const dash = streamId.indexOf('-');
  return dash >= 0 ? streamId.slice(dash + 1) : streamId;
}

/** The resource's facts after an event: what the event says, else what was known, else the default status. */
function mergedFacts(d: JsonObject, prior: ResourceFacts, status: string | null): ResourceFacts {
  return {
    entity_id: str(d.entity_id) ?? prior.entity_id ?? null,
    order_id: d.order_id === null ? null : (str(d.order_id) ?? prior.order_id ?? null),
    status: str(d.status) ?? prior.status ?? status,
  };
}

/** What an entry maps from: the event, the resource's id and its facts after the event. */
export interface PayloadInput {
  readonly id: string;
  readonly facts: ResourceFacts;
  readonly data: JsonObject;
  readonly streamId: string;
}

/**
 * One domain event type's notification: its name, what it means, the exact schema of its payload,
 * and the mapping. `facts`: how the event changes what the mapper remembers of its resource (null:
 * nothing, it concerns no tracked resource). `toPayload`: the type's own fields, in wire order
 * (after `event_id`, `timestamp`, `event_type`; before `resource_version`); null: this occurrence
 * is not published.
 */
export interface NotificationEntry {
  readonly event_type: WebhookEventTypeName;
  readonly description: string;
  readonly schema: JsonSchema;
  /** The data field naming the resource (else `id`, else the stream's name). */
  readonly idField: string;
  /** The status a resource has when no event said one. */
  readonly defaultStatus: string | null;
  readonly facts: ((merged: ResourceFacts, id: string) => ResourceFacts) | null;
  readonly toPayload: (input: PayloadInput) => JsonObject | null;
}

/** A domain event that changes facts but is never published (`toPayload: null`). */
export interface FactsOnlyEntry {
  readonly event_type: null;
  readonly idField: string;
  readonly defaultStatus: string | null;
  readonly facts: (merged: ResourceFacts, id: string) => ResourceFacts;
  readonly toPayload: null;
}

type NotificationTable = Readonly<Record<string, NotificationEntry | FactsOnlyEntry>>;

const keep = (merged: ResourceFacts): ResourceFacts => merged;

function entityEntry(event_type: 'entity.created' | 'entity.updated', description: string): NotificationEntry {
  return {
    event_type,
    description,
    schema: payloadSchema(event_type, description, FIELDS.entity),
    idField: 'entity_id',
    defaultStatus: 'active',
    facts: (m, id) => ({ entity_id: id, order_id: m.order_id, status: m.status }),
    toPayload: ({ id, facts }) => ({ entity_id: id, status: facts.status ?? 'active' }),
  };
}

function jurisdictionEntry(event_type: string, description: string): NotificationEntry {
  return {
    event_type,
    description,
    schema: payloadSchema(event_type, description, FIELDS.jurisdiction),
    idField: 'jurisdiction_id',
    defaultStatus: 'pending',
    facts: keep,
    toPayload: ({ id, facts }) => ({
      jurisdiction_id: id,
      entity_id: facts.entity_id ?? null,
      status: facts.status ?? 'pending',
    }),
  };
}

function documentEntry(event_type: string, description: string, status: 'available' | 'deleted'): NotificationEntry {
  return {
    event_type,
    description,
    schema: payloadSchema(event_type, description, FIELDS.document(status)),
    idField: 'document_id',
    defaultStatus: null,
    facts: (m) => ({ entity_id: m.entity_id, order_id: m.order_id, status }),
    toPayload: ({ id, facts }) => ({
      document_id: id,
      entity_id: facts.entity_id ?? null,
      order_id: facts.order_id ?? null,
      status,
    }),
  };
}

function orderEntry(status: 'submitted' | 'cancelled' | 'completed', description: string): NotificationEntry {
  const event_type = `order.${status}`;
  return {
    event_type,
    description,
    schema: payloadSchema(event_type, description, FIELDS.order(status)),
    idField: 'order_id',
    defaultStatus: null,
    facts: (m, id) => ({ entity_id: m.entity_id, order_id: id, status }),
    toPayload: ({ id, facts }) => ({
      order_id: id,
      entity_id: facts.entity_id ?? null,
      status,
    }),
  };
}

/** An operational notification: about the webhooks themselves, from one of their own events. */
function operationalEntry(
  event_type: string,
  description: string,
  fields: Parameters<typeof payloadSchema>[2],
  toPayload: (data: JsonObject, streamId: string) => JsonObject | null,
): NotificationEntry {
  return {
    event_type,
    description,
    schema: payloadSchema(event_type, description, fields),
    idField: 'endpoint_id',
    defaultStatus: null,
    facts: null,
    toPayload: ({ data, streamId }) => toPayload(data, streamId),
  };
}

/**
 * Domain event type → notification (CONTRACT.md §4 table; STYLE.md §5): the one source of the
 * catalog's schemas, the OpenAPI components, the Events API's items, every webhook body and the
 * SDK's drift test. An event type not in it is never a notification.
 */
export const NOTIFICATIONS = {
  'entities.EntityCreated': entityEntry('entity.created', 'An entity was created'),
  'entities.EntityUpdated': entityEntry('entity.updated', 'An entity changed (its fields or its status)'),
  'documents.DocumentAdded': documentEntry('document.created', 'A document was added', 'available'),
  'documents.DocumentUpdated': documentEntry('document.updated', "A document's metadata changed", 'available'),
  'documents.DocumentDeleted': documentEntry('document.deleted', 'A document was deleted', 'deleted'),
  'jurisdictions.JurisdictionAdded': jurisdictionEntry(
    'jurisdiction.created',
    'An entity was registered in a jurisdiction',
  ),
  'jurisdictions.JurisdictionUpdated': jurisdictionEntry('jurisdiction.updated', 'A jurisdiction registration changed'),
  'tasks.TaskCreated': {
    event_type: 'task.created',
    description: 'A task was created',
    schema: payloadSchema('task.created', 'A task was created', FIELDS.task),
    idField: 'task_id',
    defaultStatus: 'open',
    facts: keep,
    toPayload: ({ id, facts }) => ({
      task_id: id,
      entity_id: facts.entity_id ?? null,
      status: facts.status ?? 'open',
    }),
  },
  // Not one of the eleven notifications; remembered only so facts stay right.
  'tasks.TaskUpdated': { event_type: null, idField: 'task_id', defaultStatus: null, facts: keep, toPayload: null },
  'orders.OrderSubmitted': orderEntry('submitted', 'An order was submitted'),
  'orders.OrderCancelled': orderEntry('cancelled', 'An order was cancelled by the customer'),
  'orders.OrderCompleted': orderEntry('completed', 'An order was completed'),
  [EndpointEvents.EndpointDisabled]: operationalEntry(
    'webhook_endpoint.disabled',
    'Operational: the service disabled one of your endpoints (it answered 410 Gone, or every attempt failed for WEBHOOK_DISABLE_AFTER). Sent only to endpoints that list it',
    FIELDS.endpointDisabled,
    (d, streamId) => {
      // Only the service's own disables (410 Gone, failing), never a user's.
      const reason = disabledReasonOf(d);
      if (reason === 'manual') return null;
      return { endpoint_id: str(d.endpoint_id) ?? streamResourceId(streamId), reason, status: 'disabled' };
    },
  ),
  [EndpointEvents.EndpointFailing]: operationalEntry(
    'webhook_endpoint.failing',
    'Operational: every attempt to one of your endpoints has failed for WEBHOOK_FAILING_AFTER (1 h by default); sent once per failing streak, before any auto-disable. Sent only to endpoints that list it',
    FIELDS.endpointFailing,
    (d, streamId) => ({
      endpoint_id: str(d.endpoint_id) ?? streamResourceId(streamId),
      failing_since: str(d.failing_since) ?? '',
    }),
  ),
  [DeliveryEvents.DeliveryFailed]: operationalEntry(
    'webhook_delivery.failed',
    'Operational: a delivery gave up (its last retry failed, or the receiver gave an answer not worth retrying). Never sent about a delivery of webhook_delivery.failed itself. Sent only to endpoints that list it',
    FIELDS.deliveryFailed,
    (d) => {
      const [endpoint_id, failed_event_id, failed_event_type] = [
        str(d.endpoint_id),
        str(d.event_id),
        str(d.event_type),
      ];
      // Older streams' failures do not name what failed; and a failure notice about a failure notice would never end.
      if (!endpoint_id || !failed_event_id || !failed_event_type || failed_event_type === 'webhook_delivery.failed') {
        return null;
      }
      return { delivery_id: str(d.delivery_id) ?? '', endpoint_id, failed_event_id, failed_event_type };
    },
  ),
} satisfies NotificationTable;

const TABLE: NotificationTable = NOTIFICATIONS;

/** The published entry of each notification type, by name. */
export const NOTIFICATION_BY_TYPE: ReadonlyMap<string, NotificationEntry> = new Map(
  Object.values(TABLE).flatMap((e) => (e.event_type === null ? [] : [[e.event_type, e] as const])),
);

/** A catalog item as `GET /webhook-event-types` lists it: name, label, category, description, schema. */
export interface PublishedEventType extends WebhookEventType {
  readonly description: string;
  readonly schema: JsonSchema;
  readonly schema_version: number;
}

/** The catalog, in its order, with each type's schema from the table. */
export function publishedEventTypes(): PublishedEventType[] {
  return WEBHOOK_EVENT_TYPES.map((t) => {
    const entry = NOTIFICATION_BY_TYPE.get(t.name);
    if (!entry) throw new Error(`No notification table entry publishes ${t.name}`);
    return extend(t, { description: entry.description, schema: entry.schema, schema_version: SCHEMA_VERSION });
  });
}

const NO_FACTS: ResourceFacts = {};

/**
 * Domain event → notification, through the table. Pure and deterministic: the payload depends
 * only on the event and the facts the earlier events of its stream left. `resource_version` is
 * the event's own stream revision: the resource's `version` right after it.
 */
export function mapNotification(event: MappableEvent, known: ResourceFacts | undefined): MapResult {
  const entry = (TABLE as Partial<NotificationTable>)[event.type];
  if (!entry) return { notification: null, facts: null };
  const d = event.data;
  const id = str(d[entry.idField]) ?? str(d.id) ?? streamResourceId(event.streamId);
  const merged = mergedFacts(d, known ?? NO_FACTS, entry.defaultStatus);
  const facts = entry.facts ? entry.facts(merged, id) : null;
  if (entry.toPayload === null) return { notification: null, facts };
  const fields = entry.toPayload({ id, facts: facts ?? merged, data: d, streamId: event.streamId });
  if (!fields) return { notification: null, facts };
  // In wire order (part of what is stored and sent): the common head, the type's fields, the version.
  const notification: JsonObject = { event_id: event.id, timestamp: event.occurredAt, event_type: entry.event_type };
  for (const key of Object.keys(fields)) notification[key] = fields[key];
  notification.resource_version = Number(event.revision);
  return { notification: notification as Notification, facts };
}

/** A stored event, as the fan-out (a RecordedEvent) and a projection (a RecordedEnvelope) see it. */
export interface SourceEvent {
  readonly id: string;
  readonly revision: bigint;
  readonly type: string;
  readonly streamId: string;
  readonly data: JsonObject;
  readonly metadata: { readonly account_id?: Json | null; readonly occurred_at?: Json };
  /** When the store recorded it: the time of an event whose metadata has none. */
  readonly created?: Date;
}

export interface SourceNotification extends MapResult {
  /** The account the notification belongs to; null for an event of no account (never notified). */
  readonly accountId: string | null;
  /** When the domain event happened: the notification's `timestamp`. */
  readonly occurredAt: string;
}

/**
 * A stored event → its notification, account and time, and the resource's facts after it: what
 * the fan-out schedules and what the Events API lists, from one function, so both carry the
 * same payload.
 */
export function notificationOf(event: SourceEvent, known: ResourceFacts | undefined): SourceNotification {
  const occurredAt = str(event.metadata.occurred_at) ?? event.created?.toISOString() ?? '';
  const { notification, facts } = mapNotification(
    {
      id: event.id,
      revision: event.revision,
      type: event.type,
      streamId: event.streamId,
      data: event.data,
      occurredAt,
    },
    known,
  );
  // A delivery's failure may have been written without the account in its metadata: its data names it.
  const accountId = str(event.metadata.account_id ?? undefined) ?? str(event.data.account_id);
  return { notification, facts, accountId, occurredAt };
}
