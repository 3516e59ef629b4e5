import { Logger } from '@nestjs/common';
import { rmSync } from 'node:fs';
import { Worker as WorkerThread, type Worker } from 'node:worker_threads';
import { makeTestPki, type TestPki } from '../../../../test/support/tls-certs';
import { startReceiver, type WebhookReceiver } from '../../../../test/support/webhook-receiver';
import { generateSecret, verifySignature } from '../signing/signature';
import { SenderThread } from './sender-thread';
import { USER_AGENT, type WebhookRequest } from './webhook-sender';

/** The sender on its thread against a real HTTPS receiver on 127.0.0.1. */
describe('sender thread', () => {
  let pki: TestPki;
  let receiver: WebhookReceiver;
  let thread: SenderThread;
  const secret = generateSecret();
  let n = 0;
  const post = (path = '/hook'): WebhookRequest => ({
    url: receiver.url.replace('/hook', path),
    eventId: `msg_${++n}`,
    timestamp: 1_700_000_000 + n,
    body: JSON.stringify({ n }),
    secrets: [secret],
  });
  /** The running thread (private): what the adversarial cases kill. */
  const workerOf = (t: SenderThread) => (t as unknown as { worker: Worker | null }).worker!;

  beforeAll(async () => {
    pki = makeTestPki();
    receiver = await startReceiver(pki);
  });
  beforeEach(() => {
    receiver.fallback = { status: 200 };
    thread = new SenderThread({
      timeoutMs: 1_500,
      allowPrivateNetworks: true,
      extraCa: pki.caPem,
      connectionsPerOrigin: 4,
    });
  });
  afterEach(() => thread.close());
  afterAll(async () => {
    await receiver.close();
    rmSync(pki.dir, { recursive: true, force: true });
  });

  it('sends what the dispatcher prepared, signed on the thread: headers, body and a signature the receiver verifies', async () => {
    const request = post();
    const sent = await thread.send(request);
    expect(sent).toEqual({
      result: { kind: 'response', statusCode: 200 },
      durationMs: expect.any(Number),
      retryAfterMs: null,
    });
    const [got] = await receiver.waitFor(1, (r) => r.headers['webhook-id'] === request.eventId);
    expect(got.body).toBe(request.body);
    expect(got.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'webhook-timestamp': String(request.timestamp),
    });
    expect(
      verifySignature(secret, String(got.headers['webhook-signature']), request.eventId, request.timestamp, got.body),
    ).toBe(true);
  });

  it('answers each request of a burst with its own outcome: status, Retry-After, a redirect not followed, a timeout', async () => {
    receiver.script(
      { status: 503 },
      { status: 429, headers: { 'retry-after': '7' } },
      { status: 302, headers: { location: '/hook/elsewhere' } },
      'hang',
    );
    // In order, so each meets its scripted answer; then a burst sent in one turn of the loop.
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await thread.send(post()));
    const burst = await Promise.all(Array.from({ length: 20 }, () => thread.send(post())));
    expect(results.map((r) => [r.result, r.retryAfterMs])).toEqual([
      [{ kind: 'response', statusCode: 503 }, null],
      [{ kind: 'response', statusCode: 429 }, 7_000],
      [{ kind: 'response', statusCode: 302 }, null],
      [{ kind: 'error', error: 'timeout' }, null],
    ]);
    expect(receiver.requests.filter((r) => r.path === '/hook/elsewhere')).toEqual([]);
    expect(burst.map((r) => r.result)).toEqual(Array(20).fill({ kind: 'response', statusCode: 200 }));
  });

  it('refuses a private address on the thread when private networks are not allowed: nothing reaches the receiver', async () => {
    const strict = new SenderThread({
      timeoutMs: 1_500,
      allowPrivateNetworks: false,
      extraCa: pki.caPem,
      connectionsPerOrigin: 1,
    });
    try {
      const before = receiver.requests.length;
      const byName = await strict.send({ ...post(), url: `https://localhost:${receiver.port}/hook` });
      const byAddress = await strict.send(post());
      expect([byName.result, byAddress.result]).toEqual([
        { kind: 'error', error: 'address_refused' },
        { kind: 'error', error: 'address_refused' },
      ]);
      expect(receiver.requests.length).toBe(before);
    } finally {
      await strict.close();
    }
  });

  it('the thread killed mid-burst: each request it had fails as a connection error (loudly), and the next ones go out on a new thread', async () => {
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      receiver.fallback = { status: 200, delayMs: 300 };
      const burst = Array.from({ length: 12 }, () => post());
      const pending = burst.map((r) => thread.send(r));
      // Some requests have reached the receiver and wait for their answer.
      await receiver.waitFor(1, (r) => r.headers['webhook-id'] === burst[0].eventId);
      await workerOf(thread).terminate();
      const results = await Promise.all(pending);
      expect(results.map((r) => r.result)).toEqual(Array(12).fill({ kind: 'error', error: 'connection' }));
      expect(errors).toHaveBeenCalledWith(expect.stringContaining('The webhook sender thread stopped'));
      // Nothing of the secret in what was logged.
      expect(JSON.stringify(errors.mock.calls)).not.toContain(secret.slice(6));

      receiver.fallback = { status: 200 };
      const retried = await Promise.all(burst.map((r) => thread.send(r)));
      expect(retried.map((r) => r.result)).toEqual(Array(12).fill({ kind: 'response', statusCode: 200 }));
      // At least once: every request of the burst has arrived (some twice, with the same webhook-id).
      const arrived = new Set(receiver.requests.map((r) => r.headers['webhook-id']));
      expect(burst.filter((r) => !arrived.has(r.eventId))).toEqual([]);
    } finally {
      errors.mockRestore();
    }
  });

  it('a thread that stops answering is stopped once a request is long overdue, and the next request gets a new one', async () => {
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    // A thread that takes requests and never answers: what a stuck event loop looks like from here.
    const spawned: Worker[] = [];
    const stuck = () => {
      const w = new WorkerThread(`require('node:worker_threads').parentPort.on('message', () => {})`, { eval: true });
      spawned.push(w);
      return w;
    };
    const settings = { timeoutMs: 500, allowPrivateNetworks: true, extraCa: pki.caPem, connectionsPerOrigin: 4 };
    const hung = new SenderThread(settings, stuck);
    try {
      const sent = await hung.send(post());
      expect(sent.result).toEqual({ kind: 'error', error: 'connection' });
      expect(sent.durationMs).toBeGreaterThanOrEqual(2 * settings.timeoutMs);
      expect(errors).toHaveBeenCalledWith(expect.stringContaining('has not answered a request'));
      expect(errors).toHaveBeenCalledWith(expect.stringContaining('The webhook sender thread stopped'));
      void hung.send(post());
      // Handed over at the end of this turn, to a thread started for it.
      await new Promise((resolve) => setImmediate(resolve));
      expect(spawned).toHaveLength(2);
    } finally {
      errors.mockRestore();
      await Promise.all(spawned.map((w) => w.terminate()));
      await hung.close();
    }
  });

  it('close() with requests in flight: it waits for their answers, then the thread is gone', async () => {
    receiver.fallback = { status: 200, delayMs: 200 };
    const burst = Array.from({ length: 6 }, () => post());
    const pending = burst.map((r) => thread.send(r));
    await receiver.waitFor(1, (r) => r.headers['webhook-id'] === burst[0].eventId);
    const worker = workerOf(thread);
    let exited = false;
    worker.once('exit', () => (exited = true));
    await thread.close();
    expect(exited).toBe(true);
    expect((await Promise.all(pending)).map((r) => r.result)).toEqual(
      Array(6).fill({ kind: 'response', statusCode: 200 }),
    );
    // A request after close() is not sent.
    expect((await thread.send(post())).result).toEqual({ kind: 'error', error: 'connection' });
  });

  it('close() with a receiver that never answers: it ends when the request times out, answered as a timeout', async () => {
    receiver.fallback = 'hang';
    const request = post();
    const pending = thread.send(request);
    await receiver.waitFor(1, (r) => r.headers['webhook-id'] === request.eventId);
    await thread.close();
    expect((await pending).result).toEqual({ kind: 'error', error: 'timeout' });
  });
});
