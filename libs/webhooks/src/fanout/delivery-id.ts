import { v5 as uuidv5 } from 'uuid';

/** Namespace of delivery ids (a fixed random UUID: changing it would re-schedule everything). */
const DELIVERY_NAMESPACE = '5b0e8f0e-7a53-4d0c-9a54-3c7f1d6f2a91';

/**
 * One delivery per (event, endpoint), the same on every run: it is the delivery's stream id and
 * its DeliveryScheduled event id, so a re-run's append is acknowledged without a second write.
 */
export function deliveryId(eventId: string, endpointId: string): string {
  return uuidv5(`${eventId.toLowerCase()}/${endpointId.toLowerCase()}`, DELIVERY_NAMESPACE);
}
