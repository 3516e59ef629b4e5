import { comparePositions, type Position } from '@filing/event-store';
import { ProjectionRunner } from '@filing/platform';
import { Injectable, Logger } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { DeliveryQueue } from '../read-model/delivery-queue.queries';
import { DeliverySignal, type NewWork } from '../read-model/delivery-signal';
import { DispatchPipeline } from './dispatch-pipeline';
import { DispatcherInstance } from './dispatcher-instance';
import { DUE_WINDOW, DueWindows } from './due-windows';
import { EndpointPacer } from './endpoint-pacer';
import { roundRobin } from './round-robin';

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
  /** Delivery id → its endpoint, from launch until its attempt is recorded. */
  private readonly inFlight = new Map<string, string>();
  /**
   * Sending slots taken, overall: per endpoint, its launched (claimed, not yet answered) ones up
   * to MAX_IN_FLIGHT_PER_ENDPOINT; those beyond wait in its lane. Per endpoint, all launched ones
   * in `perEndpoint`.
   */
  private slots = 0;
  /** Attempted deliveries whose outcome the read model does not show yet, with the position to reach. */
  private readonly settling = new Map<string, { endpointId: string; position: Position }>();
  private readonly perEndpoint = new Map<string, number>();
  /** The last endpoint listed: the next round starts after it. */
  private cursor: string | null = null;
  /** The last listing held every endpoint with due work (fewer than its limit). */
  private fewWithDueWork = false;
  /**
   * That listing, kept while nothing can have added an endpoint to it: new work rings the signal
   * (which clears it unless it only brought deliveries to endpoints listed) and a retry time
   * passing is seen here (which clears it, as does the tick). An endpoint whose
   * due work ran out since only gets an empty turn, so the picks are those of a fresh listing.
   */
  private allWithDueWork: string[] | null = null;
  private running = false;
  private pumpScheduled = false;
  private nextDue: NodeJS.Timeout | null = null;
  /**
   * The earliest future retry time as last read (null: none), or undefined: read it again. Only
   * a projection commit that adds work can bring an earlier one, and those ring the signal, which
   * clears it unless they only brought deliveries due now (so does the tick); a retry leaving the
   * queue early only makes it too early, which costs one idle pump.
   */
  private nextRetry: number | null | undefined = undefined;
  private readonly pacer = new EndpointPacer();
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
  }

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
      this.nextRetry = undefined;
      this.allWithDueWork = null;
      this.windows.renew();
    } else {
      // Deliveries due now leave the next future due time as it was.
      const now = Date.now();
      for (const { id, endpointId, dueAt, replay } of work.scheduled) {
        if (Date.parse(dueAt) > now) {
          // Due later (another instance's clock ahead): it may be the next due time.
          this.nextRetry = undefined;
          continue;
        }
        this.windows.scheduled(id, endpointId, replay);
        // The endpoints listed as having due work still are; one not among them is listed again.
        if (this.allWithDueWork !== null && !this.allWithDueWork.includes(endpointId)) this.allWithDueWork = null;
      }
    }
    this.schedulePump();
  }

  /** The safety net: due retries are found even if no signal rang (e.g. after a restart). Idle until started. */
  @Interval('webhooks.dispatcher-tick', TICK_MS)
  tick(): void {
    this.nextRetry = undefined;
    this.allWithDueWork = null;
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
    this.pruneSettled();
    const now = new Date();
    const nowMs = now.getTime();
    const limits = this.queue.rateLimits();
    // Endpoints sending all they may, paused or at their rate limit are listed too but take no
    // sending slot: list enough beyond them to fill every free one.
    const sending = [...this.perEndpoint.values()].filter((n) => n >= MAX_IN_FLIGHT_PER_ENDPOINT).length;
    const endpoints = this.endpointsInTurn(now, free + sending + this.pacer.held(nowMs));
    const held = this.heldByEndpoint();
    const picks = endpoints.map((endpointId) => {
      const limit = limits.get(endpointId) ?? null;
      const launched = this.perEndpoint.get(endpointId) ?? 0;
      // A rate-limited endpoint's requests are counted as they leave (EndpointPacer): none waits in a lane.
      const cap = MAX_IN_FLIGHT_PER_ENDPOINT + (limit === null ? DISPATCHER_LIMITS.queuedPerEndpoint : 0);
      const spare = Math.min(cap - launched, this.pacer.available(endpointId, limit, nowMs));
      if (spare <= 0) return { endpointId, toSend: [], toQueue: [] };
      // Of the longest due (twice what it takes), each instance takes its own share first
      // (instanceOrder), so instances on one backlog seldom reach for the same delivery.
      const ids = this.inInstanceOrder(this.longestDue(endpointId, now, 2 * spare, held.get(endpointId) ?? 0)).slice(
        0,
        spare,
      );
      const sendable = Math.max(0, MAX_IN_FLIGHT_PER_ENDPOINT - launched);
      return { endpointId, toSend: ids.slice(0, sendable), toQueue: ids.slice(sendable) };
    });
    const sendQueues = picks.map(({ endpointId, toSend }) => toSend.map((id) => ({ id, endpointId })));
    for (const { id, endpointId } of roundRobin(sendQueues, free)) this.launch(id, endpointId);
    // Then each endpoint now sending all it may fills its lane, while sending slots are left over:
    // with every slot taken, lanes run dry, so an endpoint with nothing in flight gets the next free one.
    if (this.slots < MAX_IN_FLIGHT) {
      for (const { endpointId, toQueue } of picks) {
        if ((this.perEndpoint.get(endpointId) ?? 0) < MAX_IN_FLIGHT_PER_ENDPOINT) continue;
        for (const id of toQueue) this.launch(id, endpointId);
      }
    }
    if (endpoints.length > 0) this.cursor = endpoints[endpoints.length - 1];
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
      const free = rows.filter(({ id }) => !this.inFlight.has(id) && !this.settling.has(id));
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
      if (!this.inFlight.has(id) && !this.settling.has(id)) free.push(id);
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

  /** Up to `limit` endpoints with due work, starting after the cursor and wrapping around. */
  private endpointsInTurn(now: Date, limit: number): string[] {
    const cursor = this.cursor;
    // A retry that has come due may be another endpoint's: list again.
    if (this.nextRetry === undefined || (this.nextRetry !== null && this.nextRetry <= now.getTime())) {
      this.allWithDueWork = null;
      this.windows.renew();
    }
    if (cursor !== null && this.fewWithDueWork) {
      // All of them fitted last time (the usual case): one listing, turned to start after the cursor.
      const all = this.allWithDueWork ?? this.queue.endpointsWithDueWork(now, null, limit);
      if (all.length < limit) {
        this.allWithDueWork = all;
        const turn = all.findIndex((id) => id > cursor);
        return turn <= 0 ? all : [...all.slice(turn), ...all.slice(0, turn)];
      }
    }
    this.allWithDueWork = null;
    const after = this.queue.endpointsWithDueWork(now, cursor, limit);
    if (after.length >= limit || cursor === null) {
      this.fewWithDueWork = after.length < limit;
      return after;
    }
    const wrapped = this.queue.endpointsWithDueWork(now, null, limit - after.length).filter((id) => id <= cursor);
    this.fewWithDueWork = after.length + wrapped.length < limit;
    return [...after, ...wrapped];
  }

  private heldByEndpoint(): Map<string, number> {
    const held = new Map<string, number>();
    for (const endpointId of this.inFlight.values()) held.set(endpointId, (held.get(endpointId) ?? 0) + 1);
    for (const { endpointId } of this.settling.values()) held.set(endpointId, (held.get(endpointId) ?? 0) + 1);
    return held;
  }

  private launch(deliveryId: string, endpointId: string): void {
    this.windows.take(deliveryId);
    this.inFlight.set(deliveryId, endpointId);
    const launched = this.perEndpoint.get(endpointId) ?? 0;
    if (launched < MAX_IN_FLIGHT_PER_ENDPOINT) this.slots++;
    this.perEndpoint.set(endpointId, launched + 1);
    this.pacer.reserve(endpointId);
    let sent = false;
    let dropped = false;
    let slotHeld = true;
    const freeSlot = () => {
      if (!slotHeld) return;
      slotHeld = false;
      const n = (this.perEndpoint.get(endpointId) ?? 1) - 1;
      // One of the endpoint's sending slots is free, unless one waiting in its lane takes it.
      if (n < MAX_IN_FLIGHT_PER_ENDPOINT) this.slots--;
      if (n <= 0) this.perEndpoint.delete(endpointId);
      else this.perEndpoint.set(endpointId, n);
      this.schedulePump();
    };
    const task = this.pipeline
      .run(deliveryId, {
        mayStart: () => !this.pacer.paused(endpointId, Date.now()),
        sending: () => {
          sent = true;
          this.pacer.sent(endpointId, Date.now());
        },
        pause: (ms) => this.pacer.pause(endpointId, Date.now(), ms),
        answered: freeSlot,
        notSent: () => {
          sent = false;
          dropped = true;
        },
      })
      .then((position) => {
        if (position !== null) this.settling.set(deliveryId, { endpointId, position });
      })
      .catch((err: unknown) =>
        this.logger.error(`Delivery ${deliveryId}: ${(err as Error).message}`, (err as Error).stack),
      )
      .finally(() => {
        if (!sent) {
          // A request dropped from its lane was counted as sent already.
          if (!dropped) this.pacer.release(endpointId);
          // It may still be due (held back by a pause, its claim lost) and no window lists it.
          this.windows.renewOf(endpointId);
        }
        this.inFlight.delete(deliveryId);
        this.active.delete(task);
        // A slot freed when the request was answered has already pumped, and moving from in
        // flight to settling frees nothing: pump again only if this frees a slot or pacer room.
        if (slotHeld) freeSlot();
        else if (!sent) this.schedulePump();
      });
    this.active.add(task);
  }

  private pruneSettled(): void {
    if (this.settling.size === 0) return;
    const reached = this.runner.position();
    for (const [id, { position }] of this.settling) {
      if (reached !== null && comparePositions(reached, position) >= 0) this.settling.delete(id);
    }
  }

  /**
   * A timer for the earliest future retry or `opening` (a held-back endpoint may send again), so
   * short test delays and rate windows are not rounded up to the tick.
   */
  private armNextDue(opening: number | null): void {
    if (this.nextDue) clearTimeout(this.nextDue);
    this.nextDue = null;
    if (this.nextRetry === undefined || (this.nextRetry !== null && this.nextRetry <= Date.now())) {
      const retry = this.queue.nextDueAfter(new Date());
      this.nextRetry = retry === null ? null : Date.parse(retry);
    }
    const times = [this.nextRetry, opening].filter((t): t is number => t !== null);
    if (times.length === 0) return;
    const delay = Math.min(...times) - Date.now();
    if (delay > TICK_MS) return;
    this.nextDue = setTimeout(() => this.schedulePump(), Math.max(0, delay) + 1);
  }
}

/** 32-bit FNV-1a of `text`, from `seed`: cheap, well spread, not cryptographic (only an order). */
function fnv1a(text: string, seed = 0x811c9dc5): number {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}
