/** Specs' shared fixtures: a delivery's first event and an endpoint it may be sent to. */
import type { DeliveryTarget } from '../deliveries/delivery';
import { type DeliveryEvent, DeliveryEvents } from '../deliveries/delivery.events';

/** Endpoint E of account A, enabled, its account's notifications on, one sealed secret. */
export const enabledTarget: DeliveryTarget = {
  endpointId: 'E',
  accountId: 'A',
  url: 'https://example.com/hook',
  endpoint: 'enabled',
  notificationsEnabled: true,
  signingSecrets: ['sealed'],
};

/** `DeliveryScheduled` of delivery `deliveryId` to endpoint E of account A, long due. */
export function scheduledDelivery(deliveryId: string): DeliveryEvent {
  return {
    type: DeliveryEvents.DeliveryScheduled,
    data: {
      delivery_id: deliveryId,
      endpoint_id: 'E',
      account_id: 'A',
      event_id: `ev-${deliveryId}`,
      event_type: 'entity.created',
      source_position: '1/1',
      payload: { event_id: `ev-${deliveryId}`, event_type: 'entity.created' },
      due_at: '2020-01-01T00:00:00.000Z',
    },
  };
}
