import { Logger } from '@nestjs/common';
import { rmSync } from 'node:fs';
import { Worker as WorkerThread, type Worker } from 'node:worker_threads';
import { makeTestPki, type TestPki } from '../../../../test/support/tls-certs';
import { threadNames } from '../../../../test/support/thread-names';
import { startReceiver, type WebhookReceiver } from '../../../../test/support/webhook-receiver';
import { generateSecret, verifySignature } from '../signing/signature';
import { QUEUED_REQUEST_MAX_WAIT_MS } from './dispatcher-instance';
import { SenderThread } from './sender-thread';
import { USER_AGENT, type WebhookRequest } from './webhook-sender';

/** The sender on its thread against a real HTTPS receiver on 127.0.0.1. */
describe('sender thread', () => {
  let pki: TestPki;
  let receiver: WebhookReceiver;
  let thread: SenderThread;
  const secret = generateSecret();
  let n = 0;
  const post = (path = '/hook', endpointId?: string): WebhookRequest => ({
    url: receiver.url.replace('/hook', path),
    eventId: `msg_${++n}`,
    timestamp: 1_700_000_000 + n,
    body: JSON.stringify({ n }),
    secrets: [secret],
    ...(endpointId === undefined ? {} : { endpointId }),
  });
  /** A send the test expects to have been sent (not dropped from a lane). */
  const sent = async (request: WebhookRequest, through = thread) => {
    const result = await through.send(request);
    if (result === null) throw new Error(`${request.eventId} was not sent`);
    return result;
  };
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
      requestsPerEndpoint: 4,
    });
  });
  afterEach(() => thread.close());
  afterAll(async () => {
    await receiver.close();
    rmSync(pki.dir, { recursive: true, force: true });
  });

  it('sends what the dispatcher prepared, signed on the thread when it leaves: headers, body and a signature the receiver verifies', async () => {
    const request = post();
    const before = Date.now();
    const answer = await sent(request);
    expect(answer).toEqual({
      result: { kind: 'response', statusCode: 200 },
      durationMs: expect.any(Number),
      retryAfterMs: null,
      sentAt: expect.any(Number),
    });
    expect(answer.sentAt).toBeGreaterThanOrEqual(before);
    const [got] = await receiver.waitFor(1, (r) => r.headers['webhook-id'] === request.eventId);
    expect(got.body).toBe(request.body);
    // Signed with the time it left (the prepared request's time is older), the same second the attempt records.
    const timestamp = Math.floor(answer.sentAt! / 1000);
    expect(timestamp).toBeGreaterThan(request.timestamp);
    expect(got.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'webhook-timestamp': String(timestamp),
    });
    expect(
      verifySignature(secret, String(got.headers['webhook-signature']), request.eventId, timestamp, got.body),
    ).toBe(true);
    // Named for `top -H` and perf (Linux).
    expect(threadNames() ?? ['webhook-sender']).toContain('webhook-sender');
  });

  /** Lanes of four over a pool with room for every request, so only the lanes hold any back. */
  const laned = () =>
    new SenderThread({
      timeoutMs: 1_500,
      allowPrivateNetworks: true,
      extraCa: pki.caPem,
      connectionsPerOrigin: 32,
      requestsPerEndpoint: 4,
    });

  it("keeps an endpoint's requests beyond its limit waiting on the thread, starting each as one is answered", async () => {
    const lanes = laned();
    receiver.fallback = { status: 200, delayMs: 150 };
    const burst = Array.from({ length: 10 }, () => post('/hook', 'ep_lane'));
    const other = post('/hook', 'ep_other');
    const answers = await Promise.all([...burst, other].map((r) => sent(r, lanes))).finally(() => lanes.close());
    const arrived = receiver.requests.filter((r) => burst.some((b) => b.eventId === r.headers['webhook-id']));
    expect(arrived).toHaveLength(10);
    // Four at a time, in order: each from the fifth on leaves once one before it is answered (1 ms of clock slack).
    const lane = answers.slice(0, 10).map((a) => ({ from: a.sentAt!, to: a.sentAt! + a.durationMs }));
    for (let i = 4; i < 10; i++) {
      const answeredBefore = lane.slice(0, i).filter((r) => r.to <= lane[i].from + 1).length;
      expect(answeredBefore).toBeGreaterThanOrEqual(i - 3);
    }
    expect(lane.map((r) => r.from)).toEqual([...lane.map((r) => r.from)].sort((x, y) => x - y));
    // The other endpoint's request did not wait behind them.
    expect(answers[10].sentAt!).toBeLessThan(lane[4].from);
    expect(answers.map((a) => a.result)).toEqual(Array(11).fill({ kind: 'response', statusCode: 200 }));
  });

  it('drops what waits behind a 429 with Retry-After or a 410 of the same endpoint, unsent; other endpoints go on', async () => {
    for (const [status, headers] of [
      [429, { 'retry-after': '30' }],
      [410, {}],
    ] as const) {
      const lanes = laned();
      receiver.script({ status, headers, delayMs: 100 });
      receiver.fallback = { status: 200, delayMs: 100 };
      // In order: the first meets the script, three more sending, six waiting.
      const first = lanes.send(post('/hook', `ep_${status}`));
      await receiver.waitFor(1, (r) => r.headers['webhook-id'] === `msg_${n}`);
      const rest = Array.from({ length: 9 }, () => post('/hook', `ep_${status}`));
      const others = Array.from({ length: 3 }, () => post('/hook', 'ep_fine'));
      const results = await Promise.all([
        first,
        ...rest.map((r) => lanes.send(r)),
        ...others.map((r) => sent(r, lanes)),
      ]).finally(() => lanes.close());
      expect(results[0]!.result).toEqual({ kind: 'response', statusCode: status });
      expect(results.slice(1, 4).map((r) => r!.result)).toEqual(Array(3).fill({ kind: 'response', statusCode: 200 }));
      expect(results.slice(4, 10)).toEqual(Array(6).fill(null));
      expect(results.slice(10).map((r) => r!.result)).toEqual(Array(3).fill({ kind: 'response', statusCode: 200 }));
      const ids = new Set(receiver.requests.map((r) => r.headers['webhook-id']));
      expect(rest.slice(3).filter((r) => ids.has(r.eventId))).toEqual([]);
    }
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
    for (let i = 0; i < 4; i++) results.push(await sent(post()));
    const burst = await Promise.all(Array.from({ length: 20 }, () => sent(post())));
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
      requestsPerEndpoint: 1,
    });
    try {
      const before = receiver.requests.length;
      const byName = await strict.send({ ...post(), url: `https://localhost:${receiver.port}/hook` });
      const byAddress = await strict.send(post());
      expect([byName?.result, byAddress?.result]).toEqual([
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
      expect(results.map((r) => r?.result)).toEqual(Array(12).fill({ kind: 'error', error: 'connection' }));
      expect(errors).toHaveBeenCalledWith(expect.stringContaining('The webhook sender thread stopped'));
      // Nothing of the secret in what was logged.
      expect(JSON.stringify(errors.mock.calls)).not.toContain(secret.slice(6));

      receiver.fallback = { status: 200 };
      const retried = await Promise.all(burst.map((r) => sent(r)));
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
    const settings = {
      timeoutMs: 500,
      allowPrivateNetworks: true,
      extraCa: pki.caPem,
      connectionsPerOrigin: 4,
      requestsPerEndpoint: 4,
    };
    const hung = new SenderThread(settings, stuck);
    try {
      const answer = await hung.send(post());
      expect(answer?.result).toEqual({ kind: 'error', error: 'connection' });
      // Past the timeout twice over and the longest a request may wait in its lane.
      expect(answer?.durationMs).toBeGreaterThanOrEqual(2 * settings.timeoutMs + QUEUED_REQUEST_MAX_WAIT_MS);
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
    expect((await Promise.all(pending)).map((r) => r?.result)).toEqual(
      Array(6).fill({ kind: 'response', statusCode: 200 }),
    );
    // A request after close() is not sent.
    expect(await thread.send(post())).toBeNull();
  });

  it('close() with requests waiting in a lane: those are answered unsent at once, those sending end', async () => {
    receiver.fallback = { status: 200, delayMs: 400 };
    const burst = Array.from({ length: 6 }, () => post('/hook', 'ep_closing'));
    const pending = burst.map((r) => thread.send(r));
    let sendingAnswered = false;
    void Promise.all(pending.slice(0, 4)).then(() => (sendingAnswered = true));
    await receiver.waitFor(1, (r) => r.headers['webhook-id'] === burst[0].eventId);
    const closed = thread.close();
    expect(await Promise.all(pending.slice(4))).toEqual([null, null]);
    expect(sendingAnswered).toBe(false);
    await closed;
    const results = await Promise.all(pending.slice(0, 4));
    expect(results.map((r) => r?.result)).toEqual(Array(4).fill({ kind: 'response', statusCode: 200 }));
  });

  it('close() with a receiver that never answers: it ends when the request times out, answered as a timeout', async () => {
    receiver.fallback = 'hang';
    const request = post();
    const pending = thread.send(request);
    await receiver.waitFor(1, (r) => r.headers['webhook-id'] === request.eventId);
    await thread.close();
    expect((await pending)?.result).toEqual({ kind: 'error', error: 'timeout' });
  });
});
