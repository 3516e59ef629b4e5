import { rmSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
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
  /** An HTTPS server on 127.0.0.1 answering with `reply`; closed after the test. */
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(
      servers.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve()).closeAllConnections())),
    );
  });
  const serve = async (reply: (res: ServerResponse, n: number) => void): Promise<string> => {
    let n = 0;
    const server = createServer({ cert: pki.cert, key: pki.key }, (req, res) => {
      req.resume();
      req.on('end', () => reply(res, ++n));
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `https://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  };
  const timed = (timeoutMs: number) => {
    const s = new WebhookSender({
      timeoutMs,
      allowPrivateNetworks: true,
      extraCa: pki.caPem,
      resolver: toLoopback,
      connectionsPerOrigin: 1,
    });
    senders.push(s);
    return s;
  };

  it('answers a 429 with its Retry-After, and never follows a redirect', async () => {
    const url = await serve((res, n) =>
      n === 1
        ? res.writeHead(429, { 'retry-after': '7' }).end()
        : res.writeHead(301, { location: 'https://example.com/' }).end(),
    );
    const s = timed(2000);
    const limited = await s.send(post(url));
    expect(limited.result).toEqual({ kind: 'response', statusCode: 429 });
    expect(limited.retryAfterMs).toBe(7000);
    const moved = await s.send(post(url));
    expect(moved).toMatchObject({ result: { kind: 'response', statusCode: 301 }, retryAfterMs: null });
  });

  it('reads a body past 64 KiB only so far: its status is the answer at once, and the next request still goes', async () => {
    const url = await serve((res, n) => {
      if (n > 1) return res.writeHead(200).end('ok');
      // 128 KiB and never the end: the sender stops reading at 64 KiB and closes this connection.
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write(Buffer.alloc(128 * 1024, 97));
    });
    const s = timed(1500);
    const endless = await s.send(post(url));
    expect(endless.result).toEqual({ kind: 'response', statusCode: 200 });
    expect(endless.durationMs).toBeLessThan(1000); // not held until the deadline
    expect((await s.send(post(url))).result).toEqual({ kind: 'response', statusCode: 200 });
  });

  it('a receiver that never answers times out within the deadline; one that stalls its body keeps its status', async () => {
    const silent = await serve(() => undefined);
    const s = timed(300);
    const hung = await s.send(post(silent));
    expect(hung.result).toEqual({ kind: 'error', error: 'timeout' });
    expect(hung.durationMs).toBeGreaterThanOrEqual(290);
    expect(hung.durationMs).toBeLessThan(2000);
    const stalled = await serve((res) => {
      res.writeHead(202, { 'content-type': 'text/plain' });
      res.write('partial'); // and never ends
    });
    const slow = await timed(300).send(post(stalled));
    expect(slow.result).toEqual({ kind: 'response', statusCode: 202 });
    expect(slow.durationMs).toBeLessThan(2000);
  });

  it('a request queued behind a hung one on the only connection ends at its own deadline, never sent late', async () => {
    let got = 0;
    let arrived: () => void = () => undefined;
    const aArrived = new Promise<void>((resolve) => (arrived = resolve));
    const url = await serve(() => {
      got++; // never answers
      arrived();
    });
    const s = timed(300);
    const sendingA = s.send(post(url, 'msg_a'));
    await aArrived; // msg_a holds the only connection
    const sendingB = s.send(post(url, 'msg_b')); // queued behind it
    // Both deadlines pass while the event loop is busy, as in a loaded process: their timers then
    // fire in one turn, with no I/O between, whatever the time between the two sends. Left to
    // itself, msg_b (started later) may still have time left when msg_a's deadline frees the
    // connection, and then leaving is right: that case says nothing about a late send.
    const busyUntil = Date.now() + 450;
    while (Date.now() < busyUntil);
    const [a, b] = await Promise.all([sendingA, sendingB]);
    expect(a.result).toEqual({ kind: 'error', error: 'timeout' });
    expect(b.result).toEqual({ kind: 'error', error: 'timeout' });
    expect(b.durationMs).toBeLessThan(1000);
    // msg_a's connection is closed by its deadline; msg_b, past its own, never leaves on a new one.
    await new Promise((r) => setTimeout(r, 200));
    expect(got).toBe(1);
  });
});
