import type { Json, JsonObject } from '@filing/event-store';
import { extend } from '@filing/platform';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType, type WebhookEventTypeName } from '../catalog/event-types';
import { DeliveryEvents } from '../deliveries/delivery.events';
import { disabledReasonOf, EndpointEvents } from '../endpoints/endpoint.events';
import { FIELDS, type JsonSchema, payloadSchema, SCHEMA_VERSION } from './payload-schemas';

/*
 * The notification table (STYLE.md §5): domain event type → the notification it is, with its
 * payload's schema beside its mapping. notification-mapper.ts runs events through it.
 */

/**
 * What the fan-out remembers about one resource (keyed by its stream), so an update event that
 * carries only the changed fields still yields a complete payload (entity_id, order_id, status).
 */
export interface ResourceFacts {
  readonly entity_id?: string | null;
  readonly order_id?: string | null;
  readonly status?: string | null;
}

export const str = (v: Json | undefined): string | null => (typeof v === 'string' && v.length > 0 ? v : null);

/** The id after `<context>-`: every family's stream is named for its resource. */
export function streamResourceId(streamId: string): string {
  const dash = streamId.indexOf('-');
  return dash >= 0 ? streamId.slice(dash + 1) : streamId;
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

export type NotificationTable = Readonly<Record<string, NotificationEntry | FactsOnlyEntry>>;

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

export const TABLE: NotificationTable = NOTIFICATIONS;

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
