import {
  comparePositions,
  EventStoreUnavailableError,
  WrongExpectedVersionError,
  type EventStore,
  type Position,
} from '@filing/event-store';
import { buildMetadata, fromRecorded, streamName, toEventData } from '@filing/platform';
import type { Logger } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { decideDelivery, evolveDelivery, initialDelivery } from '../deliveries/delivery';
import { DELIVERY_STREAM, type DeliveryEvent, DeliveryEvents } from '../deliveries/delivery.events';
import { describeJob, type OpenDeliveries } from './open-deliveries';

/**
 * How fast a backlog is cancelled: `chunk` deliveries (each a stream read and an append),
 * `inFlight` at a time, then a rest twice as long as the chunk took (at least `pauseMs`): the
 * work takes at most about a third of what the store and the event loop give it, and slows down
 * by itself when they are busy. Each cancellation also costs the projections and the fan-out an
 * event. At half (a rest as long as the chunk), on a loaded 2-core machine, 30,000 took ~20 s
 * and another account's notifications once waited ~2 s; the noisy-neighbour e2e holds the pace.
 */
export const CANCELLATION_PACE: CancellationPace = {
  chunk: 100,
  inFlight: 4,
  pauseMs: 20,
  restPerWork: 2,
  retryMs: 1_000,
};

export interface CancellationPace {
  readonly chunk: number;
  readonly inFlight: number;
  readonly pauseMs: number;
  /** The rest after a chunk, as a multiple of the time the chunk took (2: the work has a third of the time). */
  readonly restPerWork: number;
  /** After a store outage, before the same chunk again. */
  readonly retryMs: number;
}

/**
 * Ends as cancelled the deliveries pending at a disable's (or a switch-off's) position, as
 * background work beside the fan-out, never inside its batch: the fan-out only records the job
 * (with its checkpoint), so one account's backlog never holds up another account's
 * notifications. Decided as of that position, so a replay decides the same: a delivery no longer
 * pending (the cancellation a first run made, an outcome) or redelivered after it is left alone. Until a delivery's turn comes the dispatcher's own check at send time stops it.
 * Progress is saved after every chunk: a restart goes on where it stopped.
 */
export class PendingCancellations {
  private running = false;
  private loop: Promise<void> | null = null;
  private wakeUp: (() => void) | null = null;
  /** A wake that came while a step ran: look again before waiting. */
  private woken = false;
  private readonly stopping = new AbortController();

  constructor(
    private readonly rows: OpenDeliveries,
    private readonly store: EventStore,
    private readonly logger: Logger,
    private readonly pace: CancellationPace = CANCELLATION_PACE,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** New jobs were saved. */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.stopping.abort();
    this.wake();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        if (!(await this.step())) await this.idle();
      } catch (err) {
        if (!this.running) return;
        // The store or the file is unavailable: the same chunk again later, nothing skipped.
        this.logger.warn(`Cancelling pending deliveries: ${(err as Error).message}; retrying`);
        await this.rest(this.pace.retryMs);
      }
    }
  }

  /** One chunk of the oldest job; false when there is none. */
  private async step(): Promise<boolean> {
    this.woken = false;
    const job = this.rows.nextCancellation();
    if (!job) return false;
    const ids = this.rows.openOf(job.endpointId, job.at, job.afterId, this.pace.chunk);
    if (ids.length === 0) {
      this.rows.done(job.seq);
      return true;
    }
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(this.pace.inFlight, ids.length) }, async () => {
        while (next < ids.length && this.running)
          await this.cancelOne(ids[next++], job.reason, job.at, describeJob(job));
      }),
    );
    if (!this.running) return true;
    this.rows.progress(job.seq, ids[ids.length - 1]);
    await this.rest(Math.max(this.pace.pauseMs, this.pace.restPerWork * (performance.now() - started)));
    return true;
  }

  /** A store outage is thrown (the chunk is retried); anything else about one delivery is logged and left to the dispatcher. */
  private async cancelOne(deliveryId: string, reason: string, at: Position, job: string): Promise<void> {
    try {
      await this.cancelAsOf(deliveryId, reason, at);
    } catch (err) {
      if (err instanceof EventStoreUnavailableError) throw err;
      this.logger.error(
        `Delivery ${deliveryId} (${job}) could not be cancelled: ${(err as Error).message}; its send-time check stops it`,
      );
    }
  }

  private async cancelAsOf(deliveryId: string, reason: string, at: Position): Promise<void> {
    const streamId = streamName(DELIVERY_STREAM, deliveryId);
    for (let attempt = 0; attempt < 5; attempt++) {
      const events = await this.store.readStream(streamId);
      // Asked for again since (the endpoint or switch back on): a replay must not cancel it.
      // An attempt recorded since (it was in flight at the disable) leaves it pending at `at`:
      // cancelled all the same, or it would wait for its retry time to be cancelled at send time.
      const redeliveredSince = events.some(
        (e) => e.type === DeliveryEvents.DeliveryRedeliveryRequested && comparePositions(e.position, at) > 0,
      );
      if (events.length === 0 || redeliveredSince) return;
      const state = events.reduce((s, e) => evolveDelivery(s, fromRecorded<DeliveryEvent>(e)), initialDelivery);
      const decided = decideDelivery(state, { kind: 'cancel', deliveryId, reason });
      if (decided.length === 0) return;
      const metadata = buildMetadata({
        actor: 'system:webhooks',
        causation_id: null,
        account_id: state.accountId,
        correlation_id: deliveryId,
      });
      try {
        await this.store.appendToStream(
          streamId,
          decided.map((e) => toEventData(e, metadata)),
          { expectedRevision: events[events.length - 1].revision },
        );
        return;
      } catch (err) {
        // Someone wrote meanwhile (an attempt): read again, it is now "changed since".
        if (!(err instanceof WrongExpectedVersionError)) throw err;
      }
    }
  }

  private async idle(): Promise<void> {
    if (!this.woken && this.running) {
      await new Promise<void>((resolve) => {
        this.wakeUp = resolve;
      });
    }
    this.wakeUp = null;
    this.woken = false;
  }

  private async rest(ms: number): Promise<void> {
    await sleep(ms, undefined, { signal: this.stopping.signal }).catch(() => undefined);
  }
}
