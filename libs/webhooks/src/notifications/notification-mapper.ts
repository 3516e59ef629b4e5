import type { Json, JsonObject } from '@filing/event-store';
import { jsonObject } from '@filing/platform';
import type { WebhookEventTypeName } from '../catalog/event-types';
import { DeliveryEvents } from '../deliveries/delivery.events';
import { EndpointEvents } from '../endpoints/endpoint.events';
import { type NotificationTable, type ResourceFacts, str, streamResourceId, TABLE } from './notification-table';

export {
  NOTIFICATIONS,
  NOTIFICATION_BY_TYPE,
  publishedEventTypes,
  type NotificationEntry,
  type PublishedEventType,
  type ResourceFacts,
} from './notification-table';

/** The JSON body sent to receivers (CONTRACT.md §4 table). */
export interface Notification extends JsonObject {
  event_id: string;
  event_type: WebhookEventTypeName;
  timestamp: string;
  resource_version: number;
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

/** The resource's facts after an event: what the event says, else what was known, else the default status. */
function mergedFacts(d: JsonObject, prior: ResourceFacts, status: string | null): ResourceFacts {
  return {
    entity_id: str(d.entity_id) ?? prior.entity_id ?? null,
    order_id: d.order_id === null ? null : (str(d.order_id) ?? prior.order_id ?? null),
    status: str(d.status) ?? prior.status ?? status,
  };
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
