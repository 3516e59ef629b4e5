import type { Json, JsonObject } from '@filing/event-store';
import { jsonObject } from '@filing/platform';
import type { WebhookEventTypeName } from '../catalog/event-types';
import { disabledReasonOf, EndpointEvents } from '../endpoints/endpoint.events';

/** The JSON body sent to receivers (CONTRACT.md §4 table). */
export interface Notification extends JsonObject {
  event_id: string;
  event_type: WebhookEventTypeName;
  timestamp: string;
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
 * families, and the endpoint disable behind the operational `webhook_endpoint.disabled`.
 */
export const NOTIFIABLE_EVENT_PREFIXES = [
  'entities.',
  'jurisdictions.',
  'documents.',
  'tasks.',
  'orders.',
  EndpointEvents.EndpointDisabled,
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

/** The resource's id: its id field, else `id`, else the stream's. */
function resourceId(event: MappableEvent, idField: string): string {
  return str(event.data[idField]) ?? str(event.data.id) ?? streamResourceId(event.streamId);
}

const NO_FACTS: ResourceFacts = {};

/**
 * Domain event → notification, exactly per the contract's table. Pure and deterministic: the
 * payload depends only on the event and the facts the earlier events of its stream left. Each
 * notification is one literal, its keys in the payload's order (a rebuild maps every event, so
 * no intermediate objects).
 */
export function mapNotification(event: MappableEvent, known: ResourceFacts | undefined): MapResult {
  const d = event.data;
  const prior = known ?? NO_FACTS;
  const { id: event_id, occurredAt: timestamp } = event;

  switch (event.type) {
    case 'entities.EntityCreated':
    case 'entities.EntityUpdated': {
      const id = resourceId(event, 'entity_id');
      const facts = mergedFacts(d, prior, 'active');
      const type = event.type === 'entities.EntityCreated' ? 'entity.created' : 'entity.updated';
      return {
        notification: { event_id, timestamp, event_type: type, entity_id: id, status: facts.status ?? 'active' },
        facts: { entity_id: id, order_id: facts.order_id, status: facts.status },
      };
    }
    case 'jurisdictions.JurisdictionAdded':
    case 'jurisdictions.JurisdictionUpdated': {
      const id = resourceId(event, 'jurisdiction_id');
      const facts = mergedFacts(d, prior, 'pending');
      const type = event.type === 'jurisdictions.JurisdictionAdded' ? 'jurisdiction.created' : 'jurisdiction.updated';
      return {
        notification: {
          event_id,
          timestamp,
          event_type: type,
          jurisdiction_id: id,
          entity_id: facts.entity_id ?? null,
          status: facts.status ?? 'pending',
        },
        facts,
      };
    }
    case 'documents.DocumentAdded':
    case 'documents.DocumentUpdated':
    case 'documents.DocumentDeleted': {
      const id = resourceId(event, 'document_id');
      const facts = mergedFacts(d, prior, null);
      const deleted = event.type === 'documents.DocumentDeleted';
      const type =
        event.type === 'documents.DocumentAdded'
          ? 'document.created'
          : deleted
            ? 'document.deleted'
            : 'document.updated';
      const status = deleted ? 'deleted' : 'available';
      return {
        notification: {
          event_id,
          timestamp,
          event_type: type,
          document_id: id,
          entity_id: facts.entity_id ?? null,
          order_id: facts.order_id ?? null,
          status,
        },
        facts: { entity_id: facts.entity_id, order_id: facts.order_id, status },
      };
    }
    case 'tasks.TaskCreated': {
      const id = resourceId(event, 'task_id');
      const facts = mergedFacts(d, prior, 'open');
      return {
        notification: {
          event_id,
          timestamp,
          event_type: 'task.created',
          task_id: id,
          entity_id: facts.entity_id ?? null,
          status: facts.status ?? 'open',
        },
        facts,
      };
    }
    case 'tasks.TaskUpdated':
      // Not one of the eleven notifications; remembered only so facts stay right.
      return { notification: null, facts: mergedFacts(d, prior, null) };
    case 'orders.OrderSubmitted':
    case 'orders.OrderCancelled':
    case 'orders.OrderCompleted': {
      const status =
        event.type === 'orders.OrderSubmitted'
          ? 'submitted'
          : event.type === 'orders.OrderCancelled'
            ? 'cancelled'
            : 'completed';
      const id = resourceId(event, 'order_id');
      const facts = mergedFacts(d, prior, null);
      return {
        notification: {
          event_id,
          timestamp,
          event_type: `order.${status}`,
          order_id: id,
          entity_id: facts.entity_id ?? null,
          status,
        },
        facts: { entity_id: facts.entity_id, order_id: id, status },
      };
    }
    case EndpointEvents.EndpointDisabled: {
      // Operational: only the service's own disables (410 Gone, failing), never a user's.
      const reason = disabledReasonOf(d);
      if (reason === 'manual') return { notification: null, facts: null };
      const endpointId = str(d.endpoint_id) ?? streamResourceId(event.streamId);
      return {
        notification: {
          event_id,
          timestamp,
          event_type: 'webhook_endpoint.disabled',
          endpoint_id: endpointId,
          reason,
          status: 'disabled',
        },
        facts: null,
      };
    }
    default:
      return { notification: null, facts: null };
  }
}

/** A stored event, as the fan-out (a RecordedEvent) and a projection (a RecordedEnvelope) see it. */
export interface SourceEvent {
  readonly id: string;
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
    { id: event.id, type: event.type, streamId: event.streamId, data: event.data, occurredAt },
    known,
  );
  return { notification, facts, accountId: str(event.metadata.account_id ?? undefined), occurredAt };
}
