import { Logger } from '@nestjs/common';
import { extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { QUEUED_REQUEST_MAX_WAIT_MS } from './dispatcher-instance';
import type { Sender, SenderSettings, SendResult, WebhookRequest } from './webhook-sender';
import { extend } from '@filing/platform';

/**
 * The sender the dispatcher uses (a token, so a test module can put another in its place). Here,
 * not beside WebhookSender: the main thread then never loads undici.
 */
export const WEBHOOK_SENDER = Symbol('WEBHOOK_SENDER');

/** Main → sender thread: the requests of one turn of the event loop (or 'close'). */
export interface SenderCall extends WebhookRequest {
  readonly id: number;
}
/** Sender thread → main: the results of one turn of its event loop (`notSent`: dropped from its lane). */
export type SenderAnswer = { readonly id: number } & (SendResult | { readonly notSent: true });

export interface SenderThreadSettings extends SenderSettings {
  /** Requests to one endpoint sending at once; the endpoint's others wait in its lane (SendLanes). */
  readonly requestsPerEndpoint: number;
}

interface Waiting {
  readonly call: SenderCall;
  readonly resolve: (sent: SendResult | null) => void;
  readonly queuedAt: number;
}

/**
 * The webhook requests on a thread of their own (sender.worker.ts), so TLS, undici and the HMACs
 * leave the event loop: a fifth of it in the deliveries benchmark. Requests go in one message per
 * turn of the loop, results come back the same way; an endpoint's requests beyond
 * `requestsPerEndpoint` wait on the thread and start as soon as one of it is answered (SendLanes).
 * If the thread dies, each request it had is
 * answered as a connection failure (retried, so delivered at least once; it may have reached the
 * receiver) and the next request starts a new thread.
 */
export class SenderThread implements Sender {
  private readonly logger = new Logger('WebhookSender');
  private worker: Worker | null = null;
  /** The requests handed to the running thread, by id. */
  private inFlight = new Map<number, Waiting>();
  private outbox: Waiting[] = [];
  private nextId = 0;
  private closed = false;

  /** Checks that the thread answers (see `watch`). */
  private readonly watchdog: NodeJS.Timeout;

  /** `spawn` starts the thread's program (sender.worker.ts; another in a test). */
  constructor(
    private readonly settings: SenderThreadSettings,
    private readonly spawn: (settings: SenderThreadSettings) => Worker = spawnSender,
  ) {
    // Started now, not at the first delivery: booting a thread (from the sources, longer) takes a while.
    this.worker = this.start();
    this.watchdog = setInterval(this.watch, WATCH_INTERVAL_MS).unref();
  }

  send(request: WebhookRequest): Promise<SendResult | null> {
    // Closed: nothing is sent (the delivery stays due).
    if (this.closed) return Promise.resolve(null);
    return new Promise((resolve) => {
      if (this.outbox.length === 0) setImmediate(this.flush);
      // `id` first, not `{ ...request, id }`: see extend in @filing/platform.
      this.outbox.push({ call: { id: this.nextId++, ...request }, resolve, queuedAt: performance.now() });
    });
  }

  /** Lets the requests in flight end (each within the timeout), then stops the thread. */
  async close(): Promise<void> {
    this.flush();
    this.closed = true;
    clearInterval(this.watchdog);
    const worker = this.worker;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.ref();
    worker.postMessage('close');
    // A thread that does not finish in time is stopped: what it still had fails as a connection error.
    const stop = setTimeout(() => void worker.terminate(), this.settings.timeoutMs + 1_000);
    await exited;
    clearTimeout(stop);
  }

  private readonly flush = (): void => {
    if (this.outbox.length === 0) return;
    const worker = (this.worker ??= this.start());
    const batch = this.outbox;
    this.outbox = [];
    for (const waiting of batch) this.inFlight.set(waiting.call.id, waiting);
    // Requests in flight keep the process alive; an idle thread does not.
    worker.ref();
    worker.postMessage(batch.map((w) => w.call));
  };

  /**
   * A thread that has not answered a request for well past its timeout is stuck (a request
   * always ends by its deadline, after waiting in its lane at most QUEUED_REQUEST_MAX_WAIT_MS):
   * stopped, so what it had fails as a connection error and is retried, and the next request
   * starts a new thread.
   */
  private readonly watch = (): void => {
    const worker = this.worker;
    // The map keeps insertion order: its first request is the oldest waiting.
    const oldest = this.inFlight.values().next().value;
    if (!worker || !oldest) return;
    const waited = performance.now() - oldest.queuedAt;
    if (waited < 2 * this.settings.timeoutMs + QUEUED_REQUEST_MAX_WAIT_MS + STUCK_GRACE_MS) return;
    this.logger.error(
      `The webhook sender thread has not answered a request for ${Math.round(waited)} ms (timeout ${this.settings.timeoutMs} ms): stopping it`,
    );
    void worker.terminate();
  };

  private start(): Worker {
    const worker = this.spawn(this.settings);
    const inFlight = (this.inFlight = new Map<number, Waiting>());
    worker.on('message', (answers: readonly SenderAnswer[]) => {
      for (const answer of answers) {
        const { id, ...sent } = answer;
        inFlight.get(id)?.resolve('notSent' in sent ? null : sent);
        inFlight.delete(id);
      }
      if (inFlight.size === 0 && !this.closed) worker.unref();
    });
    let failure = '';
    // Name and code only: a message could quote a URL.
    worker.on('error', (err: Error & { code?: unknown }) => {
      failure = ` (${err.name}${typeof err.code === 'string' ? ` ${err.code}` : ''})`;
    });
    worker.on('exit', (code) => {
      if (this.worker === worker) this.worker = null;
      if (!this.closed)
        this.logger.error(
          `The webhook sender thread stopped (exit code ${code})${failure}: its ${inFlight.size} requests in flight fail as connection errors and are retried; the next request starts a new thread`,
        );
      const now = performance.now();
      for (const waiting of inFlight.values()) waiting.resolve(connectionLost(now - waiting.queuedAt));
      inFlight.clear();
    });
    worker.unref();
    return worker;
  }
}

function connectionLost(durationMs: number): SendResult {
  return { result: { kind: 'error', error: 'connection' }, durationMs, retryAfterMs: null };
}

/**
 * Built, the thread runs `sender.worker.js` next to this file. From the TypeScript sources (jest,
 * the benchmarks) a thread does not inherit the parent's compile hook: it registers
 * @swc-node/register first, then loads the `.ts` entry.
 */
function spawnSender(settings: SenderThreadSettings): Worker {
  const ext = extname(__filename);
  const entry = join(__dirname, `sender.worker${ext}`);
  const options = { workerData: settings, resourceLimits: SENDER_LIMITS };
  if (ext === '.ts') {
    const program = [require.resolve('@swc-node/register'), entry].map((m) => `require(${JSON.stringify(m)});`);
    return new Worker(program.join(' '), extend(options, { eval: true }));
  }
  return new Worker(entry, options);
}

const WATCH_INTERVAL_MS = 1_000;
/** Beyond twice the request timeout: a thread this late is not merely busy. */
const STUCK_GRACE_MS = 1_000;

/**
 * A young generation of 8 MB at most: each request's garbage dies young, and V8's default lets
 * every isolate's semi-spaces grow to 16 MB in a burst (resident memory, issue #16).
 */
const SENDER_LIMITS = { maxYoungGenerationSizeMb: 8 };
