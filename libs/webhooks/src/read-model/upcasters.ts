import { extend, type RecordedEnvelope, type Upcasters, withData } from '@filing/platform';
import { disabledReasonOf, type EndpointDisabled, EndpointEvents } from '../endpoints/endpoint.events';

/**
 * Schema 1 of EndpointDisabled had no `reason`: every disable before reasons existed was a
 * user's (`manual`). Schema 2 on carries it.
 */
function disabledWithoutReason(event: RecordedEnvelope): RecordedEnvelope {
  if (event.metadata.schema_version >= 2) return event;
  const data = event.data as EndpointDisabled['data'];
  return withData(event, extend(data, { reason: disabledReasonOf(data) }));
}

/**
 * The webhooks' stored events in older shapes, made current before the read models' handlers
 * see them (one place: a handler never tests a schema version). Fields that were merely added
 * later and are optional in the current type (EndpointCreated's `secret_sealed`,
 * `rate_limit_per_second`; a delivery's `priority`, `outcome`) need none, and DeliverySucceeded,
 * no longer appended, is an event type of its own with its own handler.
 */
export const WEBHOOK_UPCASTERS: Upcasters = {
  [EndpointEvents.EndpointDisabled]: disabledWithoutReason,
};
