import { ProjectionRunner } from '@filing/platform';
import { Injectable, Logger } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { DeliveryQueue } from '../read-model/delivery-queue.queries';
import { DeliverySignal, type NewWork } from '../read-model/delivery-signal';
import { DispatchPipeline } from './dispatch-pipeline';
import { DispatcherInstance } from './dispatcher-instance';
import { DueListing } from './due-listing';
import { DUE_WINDOW, DueWindows } from './due-windows';
import { EndpointPacer } from './endpoint-pacer';
import { EndpointStates, nextDelay } from './endpoint-states';
import { type LaunchHost, LaunchedDelivery } from './launched-delivery';
import { byAccount, roundRobin } from './round-robin';

/**
 * Requests in flight at once, overall and per endpoint: from the claim until the request is over.
 * Recording the outcome takes no slot (the delivery is still not picked again meanwhile). An
 * endpoint with no rate limit may have `queuedPerEndpoint` more claimed and handed to the sender
 * thread, where they wait in its lane and start as soon as one of its requests is answered
 * (SendLanes): the slot is refilled there, not after a round trip through this thread's turn.
 * They do not count against `overall` until they can be sending, and are handed over only while
 * sending slots are free overall (so a busy endpoint's lane never keeps another endpoint waiting).
 * `overall` is sixteen endpoints' whole shares: fifteen endpoints that never answer, each holding
 * its 16 for a whole timeout, still leave another endpoint room to send at once (the fairness
 * e2e holds five; at 64, four took every slot). Ten endpoints each at its share, measured: ~+35 %
 * deliveries/s and ~30 % less CPU per delivery than at 64, whose lanes were seldom filled.
 */
export const DISPATCHER_LIMITS = { overall: 256, perEndpoint: 16, queuedPerEndpoint: 16 } as const;
const MAX_IN_FLIGHT = DISPATCHER_LIMITS.overall;
const MAX_IN_FLIGHT_PER_ENDPOINT = DISPATCHER_LIMITS.perEndpoint;
/** The safety-net tick's period. */
const TICK_MS = 1000;

/**
 * Runs due deliveries from the deliveries read model through the DispatchPipeline (prepare →
 * send → record), within the in-flight bounds. One queue per endpoint with due work, served
 * round-robin from where the last round stopped: an endpoint's backlog (one that times out on
 * thousands of deliveries) takes at most its per-endpoint share and never delays another
 * endpoint's due deliveries. An endpoint's `rate_limit_per_second` and a 429's pause
 * (EndpointPacer, per instance) cap what it may take when it is picked: held-back deliveries stay
 * due and take no slot. Woken by the projection (new work), by a timer set to the next due retry
 * or the next opening of a held-back endpoint, and by a periodic tick (a `@nestjs/schedule`
 * interval). After an attempt, a delivery is "settling" until the read model
 * shows its outcome, so a stale row never sends it twice (its concurrency slot is free at once);
 * after a crash, whatever was in flight is still pending and is sent again (at least once, same
 * webhook-id).
 */
@Injectable()
export class DispatcherService {
  private readonly logger = new Logger('WebhookDispatcher');
  /** Each endpoint's launched, in-flight and settling deliveries (EndpointState). */
  private readonly endpoints = new EndpointStates();
  /**
   * Sending slots taken, overall: per endpoint, its launched (claimed, not yet answered) ones up
   * to MAX_IN_FLIGHT_PER_ENDPOINT; those beyond wait in its lane.
   */
  private slots = 0;
  private running = false;
  private pumpScheduled = false;
  private nextDue: NodeJS.Timeout | null = null;
  private readonly pacer = new EndpointPacer();
  private readonly listing: DueListing;
  private offSignal: (() => void) | null = null;
  private readonly active = new Set<Promise<void>>();

  constructor(
    private readonly runner: ProjectionRunner,
    private readonly queue: DeliveryQueue,
    private readonly pipeline: DispatchPipeline,
    private readonly signal: DeliverySignal,
    instance: DispatcherInstance,
    private readonly windows: DueWindows,
  ) {
    this.salt = fnv1a(instance.id);
    this.listing = new DueListing(queue);
    this.launchHost = {
      pacer: this.pacer,
      windows: this.windows,
      endpoints: this.endpoints,
      slotFreed: (state) => {
        state.launched--;
        // One of the endpoint's sending slots is free, unless one waiting in its lane takes it.
        if (state.launched < MAX_IN_FLIGHT_PER_ENDPOINT) this.slots--;
        this.schedulePump();
      },
      schedulePump: () => this.schedulePump(),
    };
  }

  /** What a launched delivery updates as its attempt goes (LaunchedDelivery). */
  private readonly launchHost: LaunchHost;

  /** Seeds this instance's own pseudo-random order of delivery ids (`inInstanceOrder`), the same on every pump. */
  private readonly salt: number;

  start(): void {
    if (this.running) return;
    this.running = true;
    this.offSignal = this.signal.on((work) => this.newWork(work));
    this.schedulePump();
  }

  /** The deliveries read model gained work (the signal). */
  private newWork(work: NewWork): void {
    if (work.other) {
      // A retry or a redelivery: where and when it goes, only fresh reads tell.
      this.listing.forget();
      this.windows.renew();
    } else {
      // Deliveries due now leave the next future due time as it was.
      const now = Date.now();
      for (const { id, endpointId, dueAt, replay } of work.scheduled) {
        if (Date.parse(dueAt) > now) {
          // Due later (another instance's clock ahead): it may be the next due time.
          this.listing.dueLater();
          continue;
        }
        this.windows.scheduled(id, endpointId, replay);
        // The endpoints listed as having due work still are; one not among them is listed again.
        this.listing.newlyDue(endpointId);
      }
    }
    this.schedulePump();
  }

  /** The safety net: due retries are found even if no signal rang (e.g. after a restart). Idle until started. */
  @Interval('webhooks.dispatcher-tick', TICK_MS)
  tick(): void {
    this.listing.forget();
    this.windows.clear();
    this.schedulePump();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.offSignal?.();
    if (this.nextDue) clearTimeout(this.nextDue);
    await Promise.allSettled([...this.active]);
  }

  private schedulePump(): void {
    if (!this.running || this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      try {
        this.pump();
      } catch (err) {
        // The read model may not exist yet at the very start; the tick tries again.
        this.logger.debug?.(`Dispatcher pump: ${(err as Error).message}`);
      }
    });
  }

  private pump(): void {
    if (!this.running || !this.runner.db.open) return;
    const free = MAX_IN_FLIGHT - this.slots;
    // Lanes are filled only while sending slots are free too (below).
    if (free <= 0) return;
    this.endpoints.pruneSettled(this.runner.position());
    const now = new Date();
    const nowMs = now.getTime();
    const limits = this.queue.rateLimits();
    // Endpoints sending all they may, paused or at their rate limit are listed too but take no
    // sending slot: list enough beyond them to fill every free one.
    const sending = this.endpoints.sendingAtLimit(MAX_IN_FLIGHT_PER_ENDPOINT);
    const endpoints = this.endpointsInTurn(now, free + sending + this.pacer.held(nowMs));
    const picks = endpoints.map((endpointId) => {
      const limit = limits.get(endpointId) ?? null;
      const launched = this.endpoints.launched(endpointId);
      // A rate-limited endpoint's requests are counted as they leave (EndpointPacer): none waits in a lane.
      const cap = MAX_IN_FLIGHT_PER_ENDPOINT + (limit === null ? DISPATCHER_LIMITS.queuedPerEndpoint : 0);
      const spare = Math.min(cap - launched, this.pacer.available(endpointId, limit, nowMs));
      if (spare <= 0) return { endpointId, toSend: [], toQueue: [] };
      // Of the longest due (twice what it takes), each instance takes its own share first
      // (instanceOrder), so instances on one backlog seldom reach for the same delivery.
      const held = this.endpoints.held(endpointId);
      const ids = this.inInstanceOrder(this.longestDue(endpointId, now, 2 * spare, held)).slice(0, spare);
      const sendable = Math.max(0, MAX_IN_FLIGHT_PER_ENDPOINT - launched);
      return { endpointId, toSend: ids.slice(0, sendable), toQueue: ids.slice(sendable) };
    });
    // Account by account, then endpoint by endpoint: one account's many busy endpoints take one turn a round.
    const accounts = this.queue.accounts();
    const sendQueues = byAccount(
      picks.map(({ endpointId, toSend }) => ({ endpointId, items: toSend.map((id) => ({ id, endpointId })) })),
      (endpointId) => accounts.get(endpointId),
    );
    for (const { id, endpointId } of roundRobin(sendQueues, free)) this.launch(id, endpointId);
    // Then each endpoint now sending all it may fills its lane, while sending slots are left over:
    // with every slot taken, lanes run dry, so an endpoint with nothing in flight gets the next free one.
    if (this.slots < MAX_IN_FLIGHT) {
      for (const { endpointId, toQueue } of picks) {
        if (this.endpoints.launched(endpointId) < MAX_IN_FLIGHT_PER_ENDPOINT) continue;
        for (const id of toQueue) this.launch(id, endpointId);
      }
    }
    this.listing.served(endpoints);
    this.armNextDue(this.pacer.nextOpening(nowMs));
  }

  /**
   * The endpoint's `wanted` longest-due deliveries not in flight or settling here, from its
   * window (DueWindows), read again when that cannot answer. A row of those `held` may still
   * read as due (until the read model shows its claim or outcome; on a store with no claims, all
   * the time it is in flight), so the queue is asked for that many more than a window's worth:
   * one query, and the first of the others are among them.
   */
  private longestDue(endpointId: string, now: Date, wanted: number, held: number): string[] {
    let window = this.windows.get(endpointId, wanted);
    if (window === undefined) {
      const limit = Math.max(wanted, DUE_WINDOW) + held;
      const rows = this.queue.dueWithPriority(endpointId, now, limit);
      const free = rows.filter(({ id }) => !this.endpoints.holds(endpointId, id));
      window = this.windows.fill(
        endpointId,
        free.map((r) => r.id),
        rows.length < limit,
        free.filter((r) => r.replay).map((r) => r.id),
      );
    }
    const free: string[] = [];
    for (const id of window) {
      if (free.length === wanted) break;
      if (!this.endpoints.holds(endpointId, id)) free.push(id);
    }
    return free;
  }

  /** The ids in this instance's order: each id's hash once, not once per comparison. */
  private inInstanceOrder(ids: string[]): string[] {
    if (ids.length < 2) return ids;
    return (
      ids
        // A replay's deliveries after the live ones (issue 50), each group in this instance's order.
        .map((id) => ({ id, rank: fnv1a(id, this.salt) + (this.windows.isReplay(id) ? 2 ** 32 : 0) }))
        .sort((a, b) => a.rank - b.rank)
        .map(({ id }) => id)
    );
  }

  /** Up to `limit` endpoints with due work, in turn (DueListing); a retry come due renews the windows too. */
  private endpointsInTurn(now: Date, limit: number): string[] {
    // A retry that has come due may be another endpoint's: list again.
    if (this.listing.retryPassed(now.getTime())) this.windows.renew();
    return this.listing.inTurn(now, limit);
  }

  private launch(deliveryId: string, endpointId: string): void {
    this.windows.take(deliveryId);
    const state = this.endpoints.of(endpointId);
    state.inFlight.add(deliveryId);
    if (state.launched < MAX_IN_FLIGHT_PER_ENDPOINT) this.slots++;
    state.launched++;
    this.pacer.reserve(endpointId);
    const launched = new LaunchedDelivery(deliveryId, endpointId, state, this.launchHost);
    const task = this.pipeline
      .run(deliveryId, launched.hooks())
      .then((position) => launched.recorded(position))
      .catch((err: unknown) =>
        this.logger.error(`Delivery ${deliveryId}: ${(err as Error).message}`, (err as Error).stack),
      )
      .finally(() => {
        this.active.delete(task);
        launched.ended();
      });
    this.active.add(task);
  }

  /**
   * A timer for the earliest future retry or `opening` (a held-back endpoint may send again), so
   * short test delays and rate windows are not rounded up to the tick.
   */
  private armNextDue(opening: number | null): void {
    if (this.nextDue) clearTimeout(this.nextDue);
    this.nextDue = null;
    const delay = nextDelay(Date.now(), this.listing.nextRetry(Date.now()), opening, TICK_MS);
    if (delay !== null) this.nextDue = setTimeout(() => this.schedulePump(), delay);
  }
}

/** 32-bit FNV-1a of `text`, from `seed`: cheap, well spread, not cryptographic (only an order). */
function fnv1a(text: string, seed = 0x811c9dc5): number {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}
