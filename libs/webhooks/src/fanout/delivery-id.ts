import { hash } from 'node:crypto';

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
  if (!Number.isSafeInteger(ms) || ms < 0 || ms >= 2 ** 48) {
    throw new RangeError(`Not a delivery time: ${String(occurredAt)}`);
  }
  // One-shot hash, the id written from hex (no Hash object, no buffers): one per delivery.
  const h = hash('sha256', `${DELIVERY_ID_SALT}/${eventId.toLowerCase()}/${endpointId.toLowerCase()}`, 'hex');
  const t = ms.toString(16).padStart(12, '0');
  // The hash's first 10 bytes are the id's bytes 6–15, less the version (7, byte 6's high nibble)
  // and the variant (10, byte 8's top two bits).
  const variant = VARIANT_NIBBLE[parseInt(h[4], 16) & 0x3];
  return `${t.slice(0, 8)}-${t.slice(8)}-7${h.slice(1, 4)}-${variant}${h.slice(5, 8)}-${h.slice(8, 20)}`;
}

const VARIANT_NIBBLE = '89ab';
