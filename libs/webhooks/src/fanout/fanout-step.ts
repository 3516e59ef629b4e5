import type { RecordedEvent } from '@filing/event-store';
import { positionToString } from '@filing/event-store';
import { notificationOf, type ResourceFacts, type SourceNotification } from '../notifications/notification-mapper';
import { DeliveryEvents, type DeliveryScheduled } from '../deliveries/delivery.events';
import { EndpointEvents, NOTIFICATIONS_SWITCHED } from '../endpoints/endpoint.events';
import { deliveryId } from './delivery-id';
import { type MemoryFanOutView, recipients } from './fanout-view';
import { extend } from '@filing/platform';

export type CancelScope = { readonly endpointId: string } | { readonly accountId: string };

export interface StepResult {
  readonly scheduled: DeliveryScheduled[];
  /** Pending deliveries scheduled before this event that must end as cancelled. */
  readonly cancel: CancelScope | null;
  /** The resource's facts changed (stream id → facts). */
  readonly facts: readonly [string, ResourceFacts] | null;
  /** The endpoint or account whose row in the view changed. */
  readonly endpointChanged: string | null;
  readonly switchChanged: string | null;
}

const NONE: StepResult = { scheduled: [], cancel: null, facts: null, endpointChanged: null, switchChanged: null };

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const accountOf = (event: RecordedEvent): string | null => {
  const a = event.metadata.account_id;
  return typeof a === 'string' && a.length > 0 ? a : null;
};

/**
 * One event through the fan-out: updates the view (in place) and says what to schedule. Pure
 * apart from the view it is given, and deterministic: a replay from the start takes the same
 * decisions and makes the same delivery ids.
 */
export function fanOutStep(
  view: MemoryFanOutView,
  factsOf: (streamId: string) => ResourceFacts | undefined,
  event: RecordedEvent,
): StepResult {
  if (!event.type.startsWith('webhooks.')) return sourceStep(view, factsOf, event);
  if (event.type === NOTIFICATIONS_SWITCHED) return switchStep(view, event);
  const step = WEBHOOK_STEPS[event.type];
  return step ? step(view, event, str(event.data.endpoint_id)) : NONE;
}

/** An event of the filing service: its notification (if any), and the resource facts it changes. */
function sourceStep(
  view: MemoryFanOutView,
  factsOf: (streamId: string) => ResourceFacts | undefined,
  event: RecordedEvent,
): StepResult {
  const mapped = notificationOf(event, factsOf(event.streamId));
  const facts = mapped.facts ? ([event.streamId, mapped.facts] as const) : null;
  return extend(NONE, { scheduled: schedule(view, event, mapped), facts });
}

function switchStep(view: MemoryFanOutView, event: RecordedEvent): StepResult {
  const d = event.data;
  const account = str(d.account_id) || accountOf(event);
  if (!account) return NONE;
  view.putSwitch(account, d.enabled === true);
  return extend(NONE, { switchChanged: account, cancel: d.enabled === true ? null : { accountId: account } });
}

type WebhookStep = (view: MemoryFanOutView, event: RecordedEvent, endpointId: string) => StepResult;

/** Operational notices (issue 50) change nothing here: each is one notification. */
const noticeStep: WebhookStep = (view, event) =>
  extend(NONE, { scheduled: schedule(view, event, notificationOf(event, undefined)) });

const createdStep: WebhookStep = (view, event, id) => {
  const accountId = accountOf(event);
  if (!accountId) return NONE;
  view.putEndpoint({
    id,
    accountId,
    enabled: false,
    deleted: false,
    eventTypes: (event.data.event_types as string[]) ?? [],
  });
  return extend(NONE, { endpointChanged: id });
};

const updatedStep: WebhookStep = (view, event, id) => {
  const current = view.endpoint(id);
  if (!current || !Array.isArray(event.data.event_types)) return NONE;
  view.putEndpoint(extend(current, { eventTypes: event.data.event_types as string[] }));
  return extend(NONE, { endpointChanged: id });
};

const enabledStep: WebhookStep = (view, _event, id) => {
  const current = view.endpoint(id);
  if (!current) return NONE;
  view.putEndpoint(extend(current, { enabled: true }));
  return extend(NONE, { endpointChanged: id });
};

const disabledOrDeletedStep: WebhookStep = (view, event, id) => {
  const current = view.endpoint(id);
  if (!current) return NONE;
  view.putEndpoint(
    extend(current, {
      enabled: false,
      deleted: current.deleted || event.type === EndpointEvents.EndpointDeleted,
    }),
  );
  // A disable by the service is also `webhook_endpoint.disabled`, to the account's other endpoints that chose it.
  const scheduled =
    event.type === EndpointEvents.EndpointDisabled ? schedule(view, event, notificationOf(event, undefined)) : [];
  return extend(NONE, { scheduled, endpointChanged: id, cancel: { endpointId: id } });
};

/** The webhooks' own events that matter to the fan-out; any other changes nothing. */
const WEBHOOK_STEPS: Readonly<Record<string, WebhookStep>> = {
  [EndpointEvents.EndpointFailing]: noticeStep,
  [DeliveryEvents.DeliveryFailed]: noticeStep,
  [EndpointEvents.EndpointCreated]: createdStep,
  [EndpointEvents.EndpointUpdated]: updatedStep,
  [EndpointEvents.EndpointEnabled]: enabledStep,
  [EndpointEvents.EndpointDisabled]: disabledOrDeletedStep,
  [EndpointEvents.EndpointDeleted]: disabledOrDeletedStep,
};

/** One delivery of the event's notification (if it is one) per endpoint subscribed to it at the event's position. */
function schedule(view: MemoryFanOutView, event: RecordedEvent, mapped: SourceNotification): DeliveryScheduled[] {
  const { notification, accountId, occurredAt } = mapped;
  if (!notification || !accountId) return [];
  return recipients(view, accountId, notification.event_type).map((endpoint): DeliveryScheduled => ({
    type: DeliveryEvents.DeliveryScheduled,
    data: {
      delivery_id: deliveryId(event.id, endpoint.id, new Date(occurredAt)),
      endpoint_id: endpoint.id,
      account_id: accountId,
      event_id: event.id,
      event_type: notification.event_type,
      source_position: positionToString(event.position),
      payload: notification,
      due_at: occurredAt,
    },
  }));
}
