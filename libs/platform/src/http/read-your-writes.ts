import { comparePositions, type Position } from '@filing/event-store';
import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { servedPaths } from '../projections/projection';
import { ProjectionRunner } from '../projections/projection-runner';
import { PROBLEM_CONTENT_TYPE, problemDetails } from './problem-details.filter';

/** How long a request waits for this instance's read models to catch up with the store before it is answered anyway. */
export const HEAD_BARRIER_TIMEOUT_MS = 2_000;
/** Probes answer at once: a load balancer must see a slow store as such, not a slow probe. */
const UNWAITED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Read-your-writes over asynchronous projections: a write handler awaits the position its
 * command returned before answering, so the client's next read sees its write.
 */
@Injectable()
export class ReadYourWrites {
  private readonly logger = new Logger(ReadYourWrites.name);
  private readonly barrier: HeadBarrier;

  constructor(private readonly runner: ProjectionRunner) {
    this.barrier = new HeadBarrier(
      () => runner.headPosition(),
      (position, timeoutMs) => runner.waitFor(position, timeoutMs),
    );
  }

  /**
   * Resolves once every projection has reached `position` (at once for null: nothing written).
   * At the timeout it proceeds rather than fail the request: the write is already durable in
   * the event store, only its visibility in read models is delayed, and an error would invite
   * the client to retry a write that succeeded.
   */
  async await(position: Position | null, timeoutMs = 5000): Promise<void> {
    if (position === null) return;
    const reached = await this.runner.waitFor(position, timeoutMs);
    if (!reached) {
      this.logger.warn(
        `Read models did not reach ${position.commit}/${position.prepare} within ${timeoutMs} ms; answering anyway`,
      );
    }
  }

  /**
   * Resolves once this instance's read models hold everything the store held when the call was
   * made — whichever instance wrote it — or after `timeoutMs` (false). See {@link HeadBarrier}.
   */
  async awaitHead(timeoutMs = HEAD_BARRIER_TIMEOUT_MS): Promise<boolean> {
    return (await this.barrier.pass(timeoutMs)) === true;
  }

  /**
   * As `awaitHead`, telling apart a head that could not be read in time (false) from one that
   * was read but not reached by every read model in time (that head): the caller may then ask
   * whether the read models it depends on reached it ({@link ReadYourWrites.authenticationReached}).
   */
  awaitHeadOutcome(timeoutMs = HEAD_BARRIER_TIMEOUT_MS): Promise<true | false | Position> {
    return this.barrier.pass(timeoutMs);
  }

  /**
   * Whether every read model authentication depends on (`serves: 'authentication'`) and is in
   * service has reached `position`. A halted one counts as not reached: it fails closed.
   */
  authenticationReached(position: Position): boolean {
    const checkpoints = this.runner.projectionCheckpoints();
    const halted = new Set(this.runner.haltedProjections().map((h) => h.projection));
    return this.runner.registered
      .filter((p) => servedPaths(p) === 'authentication')
      .every((p) => {
        const checkpoint = checkpoints.get(p.name) ?? null;
        return !halted.has(p.name) && checkpoint !== null && comparePositions(checkpoint, position) >= 0;
      });
  }
}

/**
 * "The store's head as of now, reached locally", shared by concurrent callers: one head read at
 * a time, and a caller joins the next read that *starts* after it arrived — never one already in
 * flight, which may have been answered before the caller's predecessor wrote. Then it waits for
 * the local read models to reach that position. Bounded: at the timeout, or when the head cannot
 * be read, it gives up (false) and the caller decides (HeadBarrierHooks: 503 for a request that
 * could authenticate).
 */
export class HeadBarrier {
  private inFlight: Promise<Position | null> | null = null;
  private queued: Promise<Position | null> | null = null;

  constructor(
    private readonly readHead: () => Promise<Position | null>,
    private readonly waitFor: (position: Position, timeoutMs: number) => Promise<boolean>,
  ) {}

  /** True once reached; false when the head could not be read in time; else the head not reached in time. */
  async pass(timeoutMs: number): Promise<true | false | Position> {
    const deadline = Date.now() + timeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
    try {
      const head = await Promise.race([this.nextHead(), timeout]);
      if (head === 'timeout') return false;
      if (head === null) return true;
      return (await this.waitFor(head, Math.max(0, deadline - Date.now()))) || head;
    } catch {
      return false; // the store did not answer: the head is unconfirmed
    } finally {
      clearTimeout(timer);
    }
  }

  private nextHead(): Promise<Position | null> {
    if (this.queued) return this.queued;
    if (!this.inFlight) return this.start();
    const settled = this.inFlight.then(
      () => undefined,
      () => undefined,
    );
    this.queued = settled.then(() => {
      this.queued = null;
      return this.start();
    });
    return this.queued;
  }

  private start(): Promise<Position | null> {
    const read = this.readHead();
    this.inFlight = read;
    const clear = () => {
      if (this.inFlight === read) this.inFlight = null;
    };
    read.then(clear, clear);
    return read;
  }
}

/**
 * Every request first passes the HeadBarrier, before any guard looks a token, session or client
 * up, so whatever was acknowledged before it arrived is in force here: with EVENT_STORE=esdb a
 * write of another instance (a token issued there works on this one's very next request, a
 * revocation there is refused here), with sqlite a write of another process on the same DATA_DIR
 * (the CLI's `clients:revoke`, `orders:complete`). With sqlite the head is one indexed lookup.
 *
 * It fails closed where it matters: when the head cannot be confirmed in time, a request that
 * could authenticate — credentials in a header (Authorization, Cookie) or possibly in a body
 * (any method but GET/HEAD/OPTIONS) — gets 503 problem+json with Retry-After: this instance's
 * read models may still hold a token, client or session revoked elsewhere. Other requests (an
 * anonymous GET, which no guard lets through to data) go on from what the instance has.
 */
@Injectable()
export class HeadBarrierHooks implements OnModuleInit {
  private readonly logger = new Logger(ReadYourWrites.name);
  private lastWarning = 0;

  constructor(
    private readonly ryw: ReadYourWrites,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    if (!fastify?.addHook) return;
    fastify.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      if (UNWAITED_PATHS.has(request.url.split('?', 1)[0])) return;
      const outcome = await this.ryw.awaitHeadOutcome();
      if (outcome === true) return;
      // Only read models authentication does not depend on are behind (e.g. one retrying a bad
      // event before it halts): the wait was bounded, credentials are checked against current
      // rows, and what the request reads answers for itself (HaltedReadModelHooks once halted).
      const refuse = mayAuthenticate(request) && (outcome === false || !this.ryw.authenticationReached(outcome));
      this.warnLate(refuse);
      if (!refuse) return;
      return reply
        .code(503)
        .header('retry-after', '1')
        .type(PROBLEM_CONTENT_TYPE)
        .send(JSON.stringify(problemDetails(503, HEAD_UNCONFIRMED)));
    });
  }

  /** At most one line per 10 s: a lagging instance would otherwise log every request. */
  private warnLate(refused: boolean): void {
    const now = Date.now();
    if (now - this.lastWarning < 10_000) return;
    this.lastWarning = now;
    this.logger.warn(
      `The event store's head was not confirmed, or read models did not reach it, within ${HEAD_BARRIER_TIMEOUT_MS} ms; ` +
        (refused
          ? 'answering 503 to requests that authenticate (a revocation elsewhere may not show yet)'
          : 'answering an anonymous request from what this instance has'),
    );
  }
}

const HEAD_UNCONFIRMED =
  'The service could not confirm it holds the latest writes (the event store is slow or unreachable); retry the request shortly';

/** Credentials can only come in a header or a body. */
function mayAuthenticate(request: FastifyRequest): boolean {
  const { headers, method } = request;
  if (headers.authorization !== undefined || headers.cookie !== undefined) return true;
  return !['GET', 'HEAD', 'OPTIONS'].includes(method);
}
