import { createHmac, timingSafeEqual } from 'node:crypto';
import { type Clock, systemClock } from '../clock';
import { FilingError } from '../errors';
import type { WebhookEvent } from './events';

/** Standard Webhooks' default: a delivery older or newer than 5 minutes is refused (replay protection). */
export const DEFAULT_TOLERANCE_SECONDS = 5 * 60;
export const SECRET_PREFIX = 'whsec_';

export type WebhookVerificationReason =
  | 'missing_header'
  | 'invalid_timestamp'
  | 'timestamp_too_old'
  | 'timestamp_too_new'
  | 'no_matching_signature'
  | 'invalid_payload';

/** The delivery is not authentic (or not fresh): answer 4xx and do not act on it. */
export class WebhookVerificationError extends FilingError {
  constructor(
    readonly reason: WebhookVerificationReason,
    message: string,
  ) {
    super(message);
  }
}

/** Node's `req.headers`, a fetch `Headers`, or any case-insensitive name → value map. */
export type WebhookHeaders =
  { get(name: string): string | null } | Readonly<Record<string, string | readonly string[] | undefined>>;

export interface VerifyOptions {
  /** Default 300 s, both ways. */
  readonly toleranceSeconds?: number;
  readonly clock?: Clock;
}

/** What a verified delivery is, besides its payload. */
export interface VerifiedWebhook<T = WebhookEvent> {
  /** `webhook-id`: equals `event_id`; the deduplication key. */
  readonly id: string;
  /** `webhook-timestamp` (Unix seconds of this attempt). */
  readonly timestamp: number;
  readonly payload: T;
}

/**
 * Verifies a Standard Webhooks delivery and returns its parsed payload, or throws a
 * WebhookVerificationError.
 *
 * - `payload` must be the raw body exactly as received (a Buffer or the undecoded string): a
 *   re-serialized JSON object will not match.
 * - `secrets`: the endpoint's signing secret(s) (`whsec_` + base64). Pass both old and new while
 *   rotating; a delivery passes when any `v1` signature in `webhook-signature` matches any secret.
 * - The timestamp must be within `toleranceSeconds` of the clock, in the past or the future.
 * - Signatures are compared in constant time.
 */
export function verify<T = WebhookEvent>(
  payload: string | Buffer | Uint8Array,
  headers: WebhookHeaders,
  secrets: string | Buffer | readonly (string | Buffer)[],
  options: VerifyOptions = {},
): T {
  return verifyWebhook<T>(payload, headers, secrets, options).payload;
}

/** Like `verify`, also returning the `webhook-id` and timestamp. */
export function verifyWebhook<T = WebhookEvent>(
  payload: string | Buffer | Uint8Array,
  headers: WebhookHeaders,
  secrets: string | Buffer | readonly (string | Buffer)[],
  options: VerifyOptions = {},
): VerifiedWebhook<T> {
  const keys = (Array.isArray(secrets) ? secrets : [secrets]).map(secretKey);
  if (keys.length === 0) throw new TypeError('At least one webhook secret is required');
  const { id, timestampText, signatures } = requiredHeaders(headers);
  const timestamp = freshTimestamp(timestampText, options);
  const body =
    typeof payload === 'string'
      ? Buffer.from(payload, 'utf8')
      : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  if (!anySignatureMatches(signatures, keys, `${id}.${timestamp}.`, body))
    throw new WebhookVerificationError('no_matching_signature', 'No signature matches the payload and secret');
  let parsed: T;
  try {
    parsed = JSON.parse(body.toString('utf8')) as T;
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'The signed payload is not JSON');
  }
  return { id, timestamp, payload: parsed };
}

/** The three Standard Webhooks headers, or a `missing_header` error naming each one missing. */
function requiredHeaders(headers: WebhookHeaders): { id: string; timestampText: string; signatures: string } {
  const id = header(headers, 'webhook-id');
  const timestampText = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestampText || !signatures) {
    const missing = [
      !id && 'webhook-id',
      !timestampText && 'webhook-timestamp',
      !signatures && 'webhook-signature',
    ].filter(Boolean);
    throw new WebhookVerificationError('missing_header', `Missing header: ${missing.join(', ')}`);
  }
  return { id, timestampText, signatures };
}

/** `webhook-timestamp` as Unix seconds, within the tolerance of the clock either way. */
function freshTimestamp(text: string, options: VerifyOptions): number {
  if (!/^\d{1,15}$/.test(text)) {
    throw new WebhookVerificationError('invalid_timestamp', 'webhook-timestamp must be Unix seconds');
  }
  const timestamp = Number(text);
  const now = Math.floor((options.clock ?? systemClock).now() / 1000);
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (now - timestamp > tolerance) {
    throw new WebhookVerificationError('timestamp_too_old', `webhook-timestamp is more than ${tolerance} s old`);
  }
  if (timestamp - now > tolerance) {
    throw new WebhookVerificationError(
      'timestamp_too_new',
      `webhook-timestamp is more than ${tolerance} s in the future`,
    );
  }
  return timestamp;
}

/** Whether any `v1` signature matches any key over `prefix` + body. */
function anySignatureMatches(signatures: string, keys: readonly Buffer[], prefix: string, body: Buffer): boolean {
  const candidates = signatures
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => Buffer.from(s.slice(3), 'base64'));
  let matched = false;
  for (const key of keys) {
    const expected = createHmac('sha256', key).update(prefix).update(body).digest();
    // Every candidate is compared, match or not, so the time taken says nothing about which matched.
    for (const candidate of candidates) {
      if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) matched = true;
    }
  }
  return matched;
}

/** `whsec_<base64>` (or the base64 alone, or the key bytes) → the HMAC key. */
export function secretKey(secret: string | Buffer): Buffer {
  if (Buffer.isBuffer(secret)) {
    if (secret.length === 0) throw new TypeError('A webhook secret must not be empty');
    return secret;
  }
  if (typeof secret !== 'string') throw new TypeError('A webhook secret is a whsec_… string');
  const base64 = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) throw new TypeError('A webhook secret is whsec_ followed by base64');
  return Buffer.from(base64, 'base64');
}

/**
 * Signs like the service does: `v1,` + base64 HMAC-SHA256 over `{id}.{timestamp}.{body}`. For
 * tests of your receiver; one signature per secret, space-separated.
 */
export function sign(
  payload: string | Buffer,
  id: string,
  timestamp: number,
  secrets: string | readonly string[],
): string {
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  return (Array.isArray(secrets) ? secrets : [secrets])
    .map(
      (s: string) =>
        `v1,${createHmac('sha256', secretKey(s)).update(`${id}.${timestamp}.`).update(body).digest('base64')}`,
    )
    .join(' ');
}

/** The headers a delivery of `payload` carries (for tests). */
export function signedHeaders(
  payload: string | Buffer,
  id: string,
  secrets: string | readonly string[],
  timestamp: number = Math.floor(Date.now() / 1000),
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': sign(payload, id, timestamp, secrets),
  };
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(name: string): string | null }).get(name)?.trim() || undefined;
  }
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  let value = record[name];
  if (value === undefined) {
    const key = Object.keys(record).find((k) => k.toLowerCase() === name);
    value = key === undefined ? undefined : record[key];
  }
  const text = Array.isArray(value) ? value.join(' ') : (value as string | undefined);
  return text?.trim() || undefined;
}
