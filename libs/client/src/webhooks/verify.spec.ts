import { randomBytes } from 'node:crypto';
import { FakeClock } from '../testing/fake-fetch';
import type { OrderSubmittedEvent } from './events';
import {
  secretKey,
  sign,
  signedHeaders,
  verify,
  verifyWebhook,
  WebhookVerificationError,
  type WebhookVerificationReason,
} from './verify';

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;
const SECRET = newSecret();
const NOW = 1_795_000_000; // seconds
const clock = new FakeClock(NOW * 1000);
const PAYLOAD: OrderSubmittedEvent = {
  event_id: '0193a2b4-0000-7000-8000-00000000000a',
  event_type: 'order.submitted',
  timestamp: '2026-11-22T10:00:00.000Z',
  order_id: '0193a2b4-0000-7000-8000-00000000000b',
  entity_id: '0193a2b4-0000-7000-8000-00000000000c',
  status: 'submitted',
  resource_version: 0,
};
const BODY = JSON.stringify(PAYLOAD);
const ID = PAYLOAD.event_id;

function reason(fn: () => unknown): WebhookVerificationReason | 'passed' {
  try {
    fn();
    return 'passed';
  } catch (err) {
    if (err instanceof WebhookVerificationError) return err.reason;
    throw err;
  }
}

describe('verify (Standard Webhooks)', () => {
  it('matches the Standard Webhooks reference vector', () => {
    const headers = {
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    };
    const payload = '{"test": 2432232314}';
    const vectorClock = new FakeClock(1614265330 * 1000);
    expect(verify(payload, headers, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', { clock: vectorClock })).toEqual({
      test: 2432232314,
    });
    expect(sign(payload, headers['webhook-id'], 1614265330, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')).toBe(
      headers['webhook-signature'],
    );
  });

  it('accepts a correct signature and returns the typed payload (string, Buffer, Headers)', () => {
    const headers = signedHeaders(BODY, ID, SECRET, NOW);
    const event = verify(BODY, headers, SECRET, { clock });
    expect(event).toEqual(PAYLOAD);
    if (event.event_type === 'order.submitted') expect(event.order_id).toBe(PAYLOAD.order_id);
    expect(verify(Buffer.from(BODY), new Headers(headers), [SECRET], { clock })).toEqual(PAYLOAD);
    const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    expect(verifyWebhook(BODY, upper, SECRET, { clock })).toEqual({ id: ID, timestamp: NOW, payload: PAYLOAD });
  });

  it('passes when any of several signatures matches, and with any of several secrets (rotation)', () => {
    const oldSecret = newSecret();
    const both = signedHeaders(BODY, ID, [oldSecret, SECRET], NOW);
    expect(both['webhook-signature'].split(' ')).toHaveLength(2);
    expect(reason(() => verify(BODY, both, SECRET, { clock }))).toBe('passed');
    expect(reason(() => verify(BODY, both, oldSecret, { clock }))).toBe('passed');

    const withNoise = {
      ...both,
      'webhook-signature': `v2,abc v1,${randomBytes(32).toString('base64')} ${sign(BODY, ID, NOW, SECRET)}`,
    };
    expect(reason(() => verify(BODY, withNoise, SECRET, { clock }))).toBe('passed');

    // The receiver holds both secrets while it switches over; the sender may sign with either.
    expect(reason(() => verify(BODY, signedHeaders(BODY, ID, oldSecret, NOW), [SECRET, oldSecret], { clock }))).toBe(
      'passed',
    );
    expect(reason(() => verify(BODY, signedHeaders(BODY, ID, SECRET, NOW), [oldSecret, SECRET], { clock }))).toBe(
      'passed',
    );
  });

  it('rejects a tampered body, id or timestamp', () => {
    const headers = signedHeaders(BODY, ID, SECRET, NOW);
    expect(reason(() => verify(BODY.replace('submitted', 'cancelled'), headers, SECRET, { clock }))).toBe(
      'no_matching_signature',
    );
    expect(reason(() => verify(`${BODY} `, headers, SECRET, { clock }))).toBe('no_matching_signature');
    expect(reason(() => verify(BODY, { ...headers, 'webhook-id': 'other' }, SECRET, { clock }))).toBe(
      'no_matching_signature',
    );
    expect(reason(() => verify(BODY, { ...headers, 'webhook-timestamp': String(NOW - 1) }, SECRET, { clock }))).toBe(
      'no_matching_signature',
    );
    const pretty = JSON.stringify(JSON.parse(BODY), null, 2);
    expect(reason(() => verify(pretty, headers, SECRET, { clock }))).toBe('no_matching_signature');
  });

  it('rejects a wrong secret, a truncated signature, and a non-v1 signature', () => {
    const headers = signedHeaders(BODY, ID, SECRET, NOW);
    expect(reason(() => verify(BODY, headers, newSecret(), { clock }))).toBe('no_matching_signature');
    expect(
      reason(() =>
        verify(BODY, { ...headers, 'webhook-signature': headers['webhook-signature'].slice(0, 20) }, SECRET, { clock }),
      ),
    ).toBe('no_matching_signature');
    expect(
      reason(() =>
        verify(BODY, { ...headers, 'webhook-signature': headers['webhook-signature'].replace('v1,', 'v2,') }, SECRET, {
          clock,
        }),
      ),
    ).toBe('no_matching_signature');
  });

  it('allows 5 minutes of clock skew both ways and rejects stale and future timestamps', () => {
    const at = (ts: number) => reason(() => verify(BODY, signedHeaders(BODY, ID, SECRET, ts), SECRET, { clock }));
    expect(at(NOW - 300)).toBe('passed');
    expect(at(NOW + 300)).toBe('passed');
    expect(at(NOW - 301)).toBe('timestamp_too_old');
    expect(at(NOW + 301)).toBe('timestamp_too_new');
    expect(at(NOW - 86_400)).toBe('timestamp_too_old');
    expect(
      reason(() => verify(BODY, signedHeaders(BODY, ID, SECRET, NOW - 30), SECRET, { clock, toleranceSeconds: 10 })),
    ).toBe('timestamp_too_old');
  });

  it('rejects missing headers and a malformed timestamp', () => {
    const headers = signedHeaders(BODY, ID, SECRET, NOW);
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const) {
      const { [name]: _dropped, ...rest } = headers;
      expect(reason(() => verify(BODY, rest, SECRET, { clock }))).toBe('missing_header');
      expect(reason(() => verify(BODY, { ...rest, [name]: '' }, SECRET, { clock }))).toBe('missing_header');
    }
    expect(reason(() => verify(BODY, {}, SECRET, { clock }))).toBe('missing_header');
    expect(reason(() => verify(BODY, { ...headers, 'webhook-timestamp': '17e8' }, SECRET, { clock }))).toBe(
      'invalid_timestamp',
    );
    expect(reason(() => verify(BODY, { ...headers, 'webhook-timestamp': `${NOW}.5` }, SECRET, { clock }))).toBe(
      'invalid_timestamp',
    );
  });

  it('rejects a signed body that is not JSON', () => {
    expect(reason(() => verify('not json', signedHeaders('not json', ID, SECRET, NOW), SECRET, { clock }))).toBe(
      'invalid_payload',
    );
  });

  it('parses whsec_ secrets and refuses nonsense ones', () => {
    const key = randomBytes(32);
    expect(secretKey(`whsec_${key.toString('base64')}`).equals(key)).toBe(true);
    expect(secretKey(key.toString('base64')).equals(key)).toBe(true);
    expect(() => secretKey('whsec_not base64!')).toThrow(TypeError);
    expect(() => verify(BODY, signedHeaders(BODY, ID, SECRET, NOW), [], { clock })).toThrow(TypeError);
  });
});
