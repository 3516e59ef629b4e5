import { rmSync } from 'node:fs';
import { makeTestPki, type TestPki } from '../../../../test/support/tls-certs';
import { startReceiver, type WebhookReceiver } from '../../../../test/support/webhook-receiver';
import type { Resolver } from '../address/address-guard';
import { generateSecret, verifySignature } from '../signing/signature';
import { USER_AGENT, WebhookSender, type WebhookRequest } from './webhook-sender';

/** The sender against a real HTTPS receiver on 127.0.0.1: the address guard at every attempt. */
describe('webhook sender', () => {
  let pki: TestPki;
  let receiver: WebhookReceiver;
  const senders: WebhookSender[] = [];

  beforeAll(async () => {
    pki = makeTestPki();
    receiver = await startReceiver(pki);
  });
  afterAll(async () => {
    await Promise.all(senders.map((s) => s.close()));
    await receiver.close();
    rmSync(pki.dir, { recursive: true, force: true });
  });

  const sender = (resolver: Resolver, allowPrivateNetworks: boolean) => {
    const s = new WebhookSender({
      timeoutMs: 2000,
      allowPrivateNetworks,
      extraCa: pki.caPem,
      resolver,
      connectionsPerOrigin: 2,
    });
    senders.push(s);
    return s;
  };
  const toLoopback: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
  const secret = generateSecret();
  const post = (url: string, eventId = 'msg_1'): WebhookRequest => ({
    url,
    eventId,
    timestamp: 1_700_000_000,
    body: '{"a":1}',
    secrets: [secret],
  });

  it('signs the request it sends: the Standard Webhooks headers, a signature the receiver verifies', async () => {
    const result = await sender(toLoopback, true).send(post(receiver.url, 'msg_signed'));
    expect(result.result).toEqual({ kind: 'response', statusCode: 200 });
    const got = receiver.requests.find((r) => r.headers['webhook-id'] === 'msg_signed')!;
    expect(got.body).toBe('{"a":1}');
    expect(got.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'webhook-timestamp': '1700000000',
    });
    expect(
      verifySignature(secret, String(got.headers['webhook-signature']), 'msg_signed', 1_700_000_000, got.body),
    ).toBe(true);
  });

  it('resolves names through the guard only: the socket connects to the address the guard returned', async () => {
    const asked: string[] = [];
    const counting: Resolver = async (host) => {
      asked.push(host);
      return [{ address: '127.0.0.1', family: 4 }];
    };
    const result = await sender(counting, true).send(post(receiver.url.replace('127.0.0.1', 'localhost')));
    expect(result.result).toEqual({ kind: 'response', statusCode: 200 });
    expect(asked).toEqual(['localhost']);
  });

  it('refuses, at send time, a name that now resolves to loopback (DNS rebinding): nothing reaches the receiver', async () => {
    const before = receiver.requests.length;
    // Creation saw a public address; this attempt's own lookup (the one the socket uses) sees loopback.
    const result = await sender(toLoopback, false).send(post(`https://localhost:${receiver.port}/hook`));
    expect(result.result).toEqual({ kind: 'error', error: 'address_refused' });
    expect(receiver.requests.length).toBe(before);
  });

  it('refuses IP-literal private URLs at send time', async () => {
    const result = await sender(toLoopback, false).send(post(receiver.url));
    expect(result.result).toEqual({ kind: 'error', error: 'address_refused' });
  });
});
