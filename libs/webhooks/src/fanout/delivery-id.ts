import { createHash } from 'node:crypto';

/** Salt of delivery ids (fixed: changing it would re-schedule everything on a replay). */
const DELIVERY_ID_SALT = '5b0e8f0e-7a53-4d0c-9a54-3c7f1d6f2a91';

/**
 * One delivery per (event, endpoint), the same on every run: it is the delivery's stream id and
 * its DeliveryScheduled event id, so a re-run's append is acknowledged without a second write.
 *
 * A UUID v7 like every other id (CONTRACT.md conventions), but deterministic: the 48-bit time
 * is when the event occurred and the 74 "random" bits come from a hash of the pair, as RFC 9562
 * §6.2 allows. Deliveries therefore sort by their event's time.
 */
export function deliveryId(eventId: string, endpointId: string, occurredAt: Date): string {
  const ms = occurredAt.getTime();
  if (!Number.isSafeInteger(ms) || ms < 0) throw new RangeError(`Not a delivery time: ${String(occurredAt)}`);
  const hash = createHash('sha256')
    .update(`${DELIVERY_ID_SALT}/${eventId.toLowerCase()}/${endpointId.toLowerCase()}`)
    .digest();
  const bytes = Buffer.alloc(16);
  bytes.writeUIntBE(ms, 0, 6);
  hash.copy(bytes, 6, 0, 10);
  bytes[6] = 0x70 | (bytes[6] & 0x0f); // version 7
  bytes[8] = 0x80 | (bytes[8] & 0x3f); // variant 10
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
