import type { Position } from '@filing/event-store';
import type { ProjectionRunner, RecordedEnvelope } from '@filing/platform';
import Database from 'better-sqlite3';
import type { DeliveryEvent } from '../deliveries/delivery.events';
import { DeliveriesProjection } from '../read-model/deliveries.projection';
import { DeliveryQueue } from '../read-model/delivery-queue.queries';
import { DeliverySignal } from '../read-model/delivery-signal';
import { EndpointsProjection } from '../read-model/endpoints.projection';
import { DeliveryStates } from './delivery-states';
import type { AttemptHooks, DispatchPipeline } from './dispatch-pipeline';
import { DispatcherInstance } from './dispatcher-instance';
import { DISPATCHER_LIMITS, DispatcherService } from './dispatcher.service';
import { DUE_WINDOW, DueWindows } from './due-windows';

const T0 = Date.now() - 60_000;
const iso = (ms: number) => new Date(ms).toISOString();
const later = () => iso(Date.now() + 3_600_000);

/**
 * The dispatcher over a real deliveries read model (in-memory SQLite, fed event by event through
 * the deliveries projection, as the projection runner would) with a pipeline that only records
 * what it was asked to attempt: what an endpoint's window of due ids may and may not hand out.
 * No tick runs (nothing registers the interval), so whatever is sent is found by the signal and
 * the dispatcher's own timer.
 */
describe('the dispatcher reads due deliveries in windows, and a window never hands out a changed row', () => {
  let db: Database.Database;
  let projection: DeliveriesProjection;
  let dispatcher: DispatcherService;
  let commit = 0n;
  const revisions = new Map<string, bigint>();
  /** Every attempt the dispatcher started, in order, and when the last of each began. */
  let attempted: string[];
  const startedAt = new Map<string, number>();
  /** Attempts in flight: finish one to record its outcome (as the pipeline would) and free its slot. */
  let inFlight: Map<string, (outcome: 'delivered' | { retryAt: string }) => void>;
  /** Ids whose next request the sender thread drops unsent from its endpoint's lane (a 429 ahead of it). */
  let dropNext: Set<string>;

  /** Events applied and committed in one transaction, as the projection runner applies a batch. */
  const applyBatch = (events: readonly DeliveryEvent[]) => {
    db.transaction(() => events.forEach(applyOne))();
    projection.afterCommit();
  };
  const apply = (event: DeliveryEvent) => applyBatch([event]);
  const applyOne = (event: DeliveryEvent) => {
    const id = event.data.delivery_id;
    const revision = revisions.has(id) ? revisions.get(id)! + 1n : 0n;
    revisions.set(id, revision);
    commit++;
    const envelope = {
      id: `e${commit}`,
      ...event,
      metadata: {
        account_id: 'A',
        actor: 'test',
        correlation_id: 'c',
        causation_id: null,
        occurred_at: iso(Date.now()),
        schema_version: 1,
      },
      streamId: `webhookdelivery-${id}`,
      revision,
      position: { commit, prepare: commit },
    } as unknown as RecordedEnvelope;
    projection.apply(db, envelope);
  };
  const scheduled = (id: string, endpointId: string, dueAt: number): DeliveryEvent => ({
    type: 'webhooks.DeliveryScheduled',
    data: {
      delivery_id: id,
      endpoint_id: endpointId,
      account_id: 'A',
      event_id: `ev-${id}`,
      event_type: 'entity.created',
      source_position: '1/1',
      payload: {},
      due_at: iso(dueAt),
    },
  });
  const schedule = (id: string, endpointId: string, dueAt: number) => apply(scheduled(id, endpointId, dueAt));
  const attempt = (id: string) =>
    apply({
      type: 'webhooks.DeliveryAttempted',
      data: {
        delivery_id: id,
        attempt: 1,
        attempted_at: iso(Date.now()),
        status_code: 200,
        error: null,
        duration_ms: 1,
      },
    });

  /** Lets the dispatcher's immediate pumps (and the attempts' settling) run. */
  const settle = async () => {
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
  };
  /** Finishes every attempt in flight as delivered, round after round, until none is left. */
  const drain = async () => {
    for (let round = 0; round < 1000 && inFlight.size > 0; round++) {
      for (const finish of [...inFlight.values()]) finish('delivered');
      await settle();
    }
  };
  const count = (ids: readonly string[], id: string) => ids.filter((x) => x === id).length;

  beforeEach(() => {
    db = new Database(':memory:');
    commit = 0n;
    revisions.clear();
    attempted = [];
    startedAt.clear();
    inFlight = new Map();
    dropNext = new Set();
    const signal = new DeliverySignal();
    const windows = new DueWindows();
    projection = new DeliveriesProjection(signal, new DeliveryStates(), windows);
    projection.setup(db);
    // The endpoints' rate limits are read from there (none set here).
    new EndpointsProjection().setup(db);
    const runner = {
      db,
      // Every outcome is in the read model as soon as it is recorded here.
      position: (): Position => ({ commit, prepare: commit }),
    } as unknown as ProjectionRunner;
    const pipeline = {
      run: (id: string, hooks: AttemptHooks) => {
        attempted.push(id);
        startedAt.set(id, Date.now());
        hooks.sending?.();
        if (dropNext.delete(id)) {
          hooks.notSent?.();
          hooks.answered?.();
          return Promise.resolve(null);
        }
        return new Promise<Position | null>((resolve) => {
          inFlight.set(id, (outcome) => {
            inFlight.delete(id);
            attempt(id);
            if (outcome === 'delivered')
              apply({ type: 'webhooks.DeliverySucceeded', data: { delivery_id: id, attempt: 1 } });
            else
              apply({
                type: 'webhooks.DeliveryRetryScheduled',
                data: { delivery_id: id, next_attempt_at: outcome.retryAt },
              });
            hooks.answered?.();
            resolve({ commit, prepare: commit });
          });
        });
      },
    } as unknown as DispatchPipeline;
    dispatcher = new DispatcherService(
      runner,
      new DeliveryQueue(runner),
      pipeline,
      signal,
      new DispatcherInstance(),
      windows,
    );
  });
  afterEach(async () => {
    for (const finish of [...inFlight.values()]) finish('delivered');
    await dispatcher.stop();
    db.close();
  });

  it('never attempts a delivery cancelled, claimed elsewhere or rescheduled while its id sat in a window; sends a redelivery once', async () => {
    const ids = Array.from({ length: 100 }, (_, i) => `d${String(i).padStart(3, '0')}`);
    ids.forEach((id, i) => schedule(id, 'E', T0 + i));
    dispatcher.start();
    await settle();
    // The first slots are taken and E's lane on the sender thread filled; the rest of the backlog sits in E's window.
    expect(attempted).toHaveLength(DISPATCHER_LIMITS.perEndpoint + DISPATCHER_LIMITS.queuedPerEndpoint);
    const waiting = ids.filter((id) => !attempted.includes(id));
    // The next ones it would hand out (the rest of the first 2 × 16 it looked at; each pump picks among those).
    const next = waiting.slice(0, DISPATCHER_LIMITS.perEndpoint);
    const cancelled = next.slice(0, -3);
    const [claimed, rescheduled, redelivered] = next.slice(-3);
    for (const id of cancelled) {
      apply({ type: 'webhooks.DeliveryCancelled', data: { delivery_id: id, reason: 'endpoint disabled' } });
    }
    // Another instance took one (its lease runs an hour), and attempted another, to retry in an hour.
    apply({
      type: 'webhooks.DeliveryClaimed',
      data: { delivery_id: claimed, attempt: 1, instance: 'other', lease_until: later() },
    });
    attempt(rescheduled);
    apply({ type: 'webhooks.DeliveryRetryScheduled', data: { delivery_id: rescheduled, next_attempt_at: later() } });
    // And one failed elsewhere, then was redelivered by hand: due again, once.
    attempt(redelivered);
    apply({ type: 'webhooks.DeliveryFailed', data: { delivery_id: redelivered, reason: 'gone' } });
    apply({
      type: 'webhooks.DeliveryRedeliveryRequested',
      data: { delivery_id: redelivered, due_at: iso(Date.now()) },
    });

    await drain();

    const dropped = [...cancelled, claimed, rescheduled];
    expect(attempted.filter((id) => dropped.includes(id))).toEqual([]);
    expect(count(attempted, redelivered)).toBe(1);
    expect(new Set(attempted).size).toBe(attempted.length);
    expect([...attempted].sort()).toEqual(ids.filter((id) => !dropped.includes(id)));
  });

  it('sends a new delivery for a quiet endpoint at the next pump while the busy endpoints hold full windows', async () => {
    // As many busy endpoints as take every slot overall, 16 each.
    const busy = Array.from({ length: DISPATCHER_LIMITS.overall / DISPATCHER_LIMITS.perEndpoint }, (_, e) => `E${e}`);
    for (const endpointId of busy) {
      for (let i = 0; i < 2 * DUE_WINDOW; i++) schedule(`${endpointId}:${i}`, endpointId, T0 + i);
    }
    dispatcher.start();
    await settle();
    // Every slot is taken, 16 per endpoint; no lane is filled with every slot taken.
    expect(attempted).toHaveLength(DISPATCHER_LIMITS.overall);
    schedule('quiet-1', 'Q', Date.now());
    // Four of E0's attempts end: four slots for E0's window and Q's new delivery alike.
    for (const id of attempted.filter((x) => x.startsWith('E0:')).slice(0, 4)) inFlight.get(id)!('delivered');
    await settle();
    expect(attempted).toContain('quiet-1');
    expect(attempted).toHaveLength(DISPATCHER_LIMITS.overall + 4);
  });

  it('sends again a delivery whose request was dropped unsent from its lane, once, and the rest of the backlog', async () => {
    const ids = Array.from({ length: 40 }, (_, i) => `q${String(i).padStart(2, '0')}`);
    ids.forEach((id) => dropNext.add(id));
    dropNext.delete('q00');
    ids.forEach((id, i) => schedule(id, 'E', T0 + i));
    dispatcher.start();
    await settle();
    await drain();
    for (let i = 0; i < 200 && attempted.length < 2 * ids.length - 1; i++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      await drain();
    }
    // Each dropped one was handed over again and then sent; none twice beyond that.
    expect(ids.filter((id) => count(attempted, id) !== (id === 'q00' ? 1 : 2))).toEqual([]);
    expect(inFlight.size).toBe(0);
  });

  it('sends a retry at its time though its endpoint listed every due delivery since, with no tick', async () => {
    schedule('r1', 'E', T0);
    dispatcher.start();
    await settle();
    inFlight.get('r1')!({ retryAt: iso(Date.now() + 100) });
    await settle();
    // New work read since the retry was scheduled: E's window lists all that is due (r2 alone) and r2 stays in flight.
    schedule('r2', 'E', Date.now());
    await settle();
    expect(attempted).toEqual(['r1', 'r2']);
    // Only the dispatcher's timer for the next retry can start it again.
    for (let i = 0; i < 500 && count(attempted, 'r1') < 2; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(attempted).toEqual(['r1', 'r2', 'r1']);
  }, 15_000);

  it('sends a delivery scheduled while its endpoint listed every due one, not one cancelled in the same commit, nor one due later before its time', async () => {
    schedule('s1', 'E', T0);
    dispatcher.start();
    await settle();
    expect(attempted).toEqual(['s1']);
    applyBatch([
      scheduled('s2', 'E', Date.now()),
      scheduled('gone', 'E', Date.now()),
      { type: 'webhooks.DeliveryCancelled', data: { delivery_id: 'gone', reason: 'endpoint disabled' } },
    ]);
    await settle();
    expect(attempted).toEqual(['s1', 's2']);
    // Stamped by another instance whose clock is ahead.
    const dueLater = Date.now() + 200;
    schedule('ahead', 'E', dueLater);
    await settle();
    expect(attempted).toEqual(['s1', 's2']);
    await drain();
    for (let i = 0; i < 500 && !attempted.includes('ahead'); i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(attempted).toEqual(['s1', 's2', 'ahead']);
    expect(startedAt.get('ahead')).toBeGreaterThanOrEqual(dueLater);
  }, 15_000);
});
