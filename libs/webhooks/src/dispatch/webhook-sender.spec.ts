import { rmSync } from 'node:fs';
import { makeTestPki, type TestPki } from '../../../../test/support/tls-certs';
import { startReceiver, type WebhookReceiver } from '../../../../test/support/webhook-receiver';
import type { Resolver } from '../address/address-guard';
import { WebhookSender } from './webhook-sender';

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
      caFile: pki.caFile,
      resolver,
      connectionsPerOrigin: 2,
    });
    senders.push(s);
    return s;
  };
  const toLoopback: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
  it('resolves names through the guard only: the socket connects to the address the guard returned', async () => {
    const asked: string[] = [];
    const counting: Resolver = async (host) => {
      asked.push(host);
      return [{ address: '127.0.0.1', family: 4 }];
    };
    const result = await sender(counting, true).send(
      receiver.url.replace('127.0.0.1', 'localhost'),
      { 'webhook-id': 'a' },
      '{}',
    );
    expect(result.result).toEqual({ kind: 'response', statusCode: 200 });
    expect(asked).toEqual(['localhost']);
  });

  it('refuses, at send time, a name that now resolves to loopback (DNS rebinding): nothing reaches the receiver', async () => {
    const before = receiver.requests.length;
    // Creation saw a public address; this attempt's own lookup (the one the socket uses) sees loopback.
    const result = await sender(toLoopback, false).send(`https://localhost:${receiver.port}/hook`, {}, '{}');
    expect(result.result).toEqual({ kind: 'error', error: 'address_refused' });
    expect(receiver.requests.length).toBe(before);
  });

  it('refuses IP-literal private URLs at send time', async () => {
    const result = await sender(toLoopback, false).send(receiver.url, {}, '{}');
    expect(result.result).toEqual({ kind: 'error', error: 'address_refused' });
  });
});
