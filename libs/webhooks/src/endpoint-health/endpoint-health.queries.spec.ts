import type { ProjectionRunner, RecordedEnvelope } from '@filing/platform';
import Database from 'better-sqlite3';
import type { DeliveryEvent } from '../deliveries/delivery.events';
import { recorded } from '@filing/platform/testing';
import type { EndpointEvent } from '../endpoints/endpoint.events';
import { DeliveryStates } from '../dispatch/delivery-states';
import { DueWindows } from '../dispatch/due-windows';
import { DeliveriesProjection } from '../read-model/deliveries.projection';
import { DeliverySignal } from '../read-model/delivery-signal';
import { EndpointsProjection } from '../read-model/endpoints.projection';
import { EndpointHealthQueries } from './endpoint-health.queries';

const NOW = new Date('2026-11-22T12:00:00.000Z');
const hoursAgo = (h: number, ms = 0) => new Date(NOW.getTime() - h * 3_600_000 + ms).toISOString();

/** Delivery events applied straight to the projection, each at the time given (its occurred_at). */
function healthOf() {
  const db = new Database(':memory:');
  const projection = new DeliveriesProjection(new DeliverySignal(), new DeliveryStates(), new DueWindows());
  projection.setup(db);
  let position = 0n;
  const apply = (at: string, type: DeliveryEvent['type'], data: Record<string, unknown>) => {
    position++;
    projection.apply(db, {
      id: `e${position}`,
      type,
      data,
      streamId: `webhookdelivery-${String(data.delivery_id)}`,
      revision: 0n,
      position: { commit: position, prepare: position },
      metadata: {
        account_id: 'A',
        actor: 'system:webhooks',
        correlation_id: 'c',
        causation_id: null,
        occurred_at: at,
        schema_version: 1,
      },
    } as RecordedEnvelope);
  };
  const attempts = new Map<string, number>();
  const api = {
    schedule(id: string, at: string, endpoint = 'EP') {
      apply(at, 'webhooks.DeliveryScheduled', {
        delivery_id: id,
        endpoint_id: endpoint,
        account_id: 'A',
        event_id: `ev-${id}`,
        event_type: 'entity.created',
        source_position: '1/1',
        payload: {},
        due_at: at,
      });
    },
    /** An attempt at `at` answered `status` (null: no answer), taking `ms`, and its outcome. */
    attempt(id: string, at: string, status: number | null, ms: number, outcome: 'delivered' | 'failed' | 'retry') {
      const attempt = (attempts.get(id) ?? 0) + 1;
      attempts.set(id, attempt);
      apply(at, 'webhooks.DeliveryAttempted', {
        delivery_id: id,
        attempt,
        attempted_at: at,
        status_code: status,
        error: status === null ? 'timeout' : null,
        duration_ms: ms,
      });
      const done = new Date(Date.parse(at) + ms).toISOString();
      if (outcome === 'delivered') apply(done, 'webhooks.DeliverySucceeded', { delivery_id: id, attempt });
      else if (outcome === 'failed') apply(done, 'webhooks.DeliveryFailed', { delivery_id: id, reason: 'x' });
      else apply(done, 'webhooks.DeliveryRetryScheduled', { delivery_id: id, next_attempt_at: done });
    },
    apply,
    db,
    queries: new EndpointHealthQueries({ db } as unknown as ProjectionRunner, { webhookFailingAfterMs: 3_600_000 }),
  };
  return api;
}

describe('endpoint health read model', () => {
  it("counts the last 24 h of outcomes, every pending delivery, and the answered attempts' percentiles", () => {
    const h = healthOf();
    h.schedule('old', hoursAgo(30));
    h.attempt('old', hoursAgo(30), 200, 900, 'delivered');
    h.schedule('d1', hoursAgo(2));
    h.attempt('d1', hoursAgo(2), 204, 10, 'delivered');
    h.schedule('d2', hoursAgo(1));
    h.attempt('d2', hoursAgo(1), 200, 30, 'delivered');
    h.schedule('f1', hoursAgo(1, 1));
    h.attempt('f1', hoursAgo(1, 1), 400, 20, 'failed');
    h.schedule('p1', hoursAgo(0.5));
    h.attempt('p1', hoursAgo(0.5), null, 5000, 'retry');
    h.schedule('p-old', hoursAgo(40));
    h.schedule('other', hoursAgo(1), 'EP2');
    h.attempt('other', hoursAgo(1), 200, 1, 'delivered');

    expect(h.queries.stats('EP', NOW)).toEqual({
      delivered: 2,
      failed: 1,
      pending: 2,
      p50_ms: 20,
      p99_ms: 30,
      last_success_at: hoursAgo(1),
      failing_since: hoursAgo(1, 1),
    });
    // A day later only what is pending remains; the last success is remembered.
    expect(h.queries.stats('EP', new Date(NOW.getTime() + 86_400_000))).toEqual({
      delivered: 0,
      failed: 0,
      pending: 2,
      p50_ms: null,
      p99_ms: null,
      last_success_at: hoursAgo(1),
      failing_since: hoursAgo(1, 1),
    });
    expect(h.queries.stats('nothing', NOW)).toEqual({
      delivered: 0,
      failed: 0,
      pending: 0,
      p50_ms: null,
      p99_ms: null,
      last_success_at: null,
      failing_since: null,
    });
  });

  it('says failing since the first failure after the last success, by attempt time, and null once one succeeds again', () => {
    const h = healthOf();
    h.schedule('a', hoursAgo(5));
    h.attempt('a', hoursAgo(5), 500, 5, 'retry');
    expect(h.queries.stats('EP', NOW).failing_since).toBe(hoursAgo(5));
    h.attempt('a', hoursAgo(4), 200, 5, 'delivered');
    expect(h.queries.stats('EP', NOW)).toMatchObject({ last_success_at: hoursAgo(4), failing_since: null });
    h.schedule('b', hoursAgo(3));
    h.attempt('b', hoursAgo(3), 503, 5, 'retry');
    h.attempt('b', hoursAgo(2), null, 5, 'retry');
    expect(h.queries.stats('EP', NOW)).toMatchObject({ last_success_at: hoursAgo(4), failing_since: hoursAgo(3) });
    // An attempt that began before the last success but was recorded after it does not count.
    h.schedule('c', hoursAgo(6));
    h.attempt('c', hoursAgo(4.5), 500, 5, 'failed');
    expect(h.queries.stats('EP', NOW).failing_since).toBe(hoursAgo(3));
  });

  it("finds failed deliveries by their event's time for a recovery, and follows redelivery and cancellation", () => {
    const h = healthOf();
    for (const [i, id] of ['x1', 'x2', 'x3', 'x4'].entries()) {
      h.schedule(id, hoursAgo(10 - i));
      h.attempt(id, hoursAgo(1, i), 410, 5, 'failed');
    }
    h.schedule('ok', hoursAgo(8));
    h.attempt('ok', hoursAgo(8), 200, 5, 'delivered');
    expect(h.queries.failedSince('EP', new Date(hoursAgo(8)))).toEqual(['x3', 'x4']);
    expect(h.queries.failedSince('EP', new Date(hoursAgo(11)))).toEqual(['x1', 'x2', 'x3', 'x4']);
    h.apply(hoursAgo(0.1), 'webhooks.DeliveryRedeliveryRequested', { delivery_id: 'x3', due_at: hoursAgo(0.1) });
    h.apply(hoursAgo(0.1), 'webhooks.DeliveryCancelled', { delivery_id: 'x4', reason: 'endpoint disabled or deleted' });
    expect(h.queries.failedSince('EP', new Date(hoursAgo(8)))).toEqual([]);
    expect(h.queries.stats('EP', NOW)).toMatchObject({ failed: 2, pending: 1 });
  });

  it("finds each enabled endpoint's failing streak: its failed attempts after its last success and its last enable", () => {
    const h = healthOf();
    const endpoints = new EndpointsProjection();
    const db = h.db;
    endpoints.setup(db);
    let revision = 0;
    const endpoint = (at: string, event: EndpointEvent) =>
      endpoints.apply(
        db,
        recorded(event, {
          streamId: `webhookendpoint-${event.data.endpoint_id}`,
          revision: revision++,
          occurredAt: at,
          accountId: 'A',
        }),
      );
    for (const id of ['EP', 'OFF']) {
      endpoint(hoursAgo(20), {
        type: 'webhooks.EndpointCreated',
        data: {
          endpoint_id: id,
          url: 'https://x.example',
          description: null,
          event_types: [],
          secret_generation: 1,
          secret_fingerprint: 'f',
        },
      });
      endpoint(hoursAgo(20), { type: 'webhooks.EndpointEnabled', data: { endpoint_id: id } });
    }
    endpoint(hoursAgo(1), { type: 'webhooks.EndpointDisabled', data: { endpoint_id: 'OFF', reason: 'manual' } });
    expect(h.queries.failingStreaks()).toEqual([]);
    h.schedule('a', hoursAgo(10));
    h.attempt('a', hoursAgo(10), 500, 5, 'retry');
    h.attempt('a', hoursAgo(9), 200, 5, 'delivered');
    h.schedule('b', hoursAgo(8));
    h.attempt('b', hoursAgo(8), null, 5, 'retry');
    h.attempt('b', hoursAgo(5), 503, 5, 'retry');
    h.schedule('off', hoursAgo(8), 'OFF');
    h.attempt('off', hoursAgo(8), 500, 5, 'failed');
    expect(h.queries.failingStreaks()).toEqual([
      { endpointId: 'EP', accountId: 'A', since: hoursAgo(8), lastFailureAt: hoursAgo(5) },
    ]);
    // Enabled again (after a disable): the count starts over.
    endpoint(hoursAgo(4), { type: 'webhooks.EndpointDisabled', data: { endpoint_id: 'EP', reason: 'failing' } });
    endpoint(hoursAgo(4), { type: 'webhooks.EndpointEnabled', data: { endpoint_id: 'EP' } });
    expect(h.queries.failingStreaks()).toEqual([]);
    h.attempt('b', hoursAgo(3), 500, 5, 'retry');
    expect(h.queries.failingStreaks()).toEqual([
      { endpointId: 'EP', accountId: 'A', since: hoursAgo(3), lastFailureAt: hoursAgo(3) },
    ]);
  });

  it("shows each endpoint's newest delivery: its status and its last attempt, or when it was scheduled", () => {
    const h = healthOf();
    expect(h.queries.health(['EP'], NOW).get('EP')?.lastDelivery).toBeNull();
    h.schedule('first', hoursAgo(4));
    expect(h.queries.health(['EP'], NOW).get('EP')?.lastDelivery).toEqual({ status: 'pending', at: hoursAgo(4) });
    h.schedule('a', hoursAgo(3));
    h.attempt('a', hoursAgo(3), 200, 7, 'delivered');
    h.schedule('b', hoursAgo(2));
    h.attempt('b', hoursAgo(1), 503, 5, 'retry');
    const health = h.queries.health(['EP'], NOW).get('EP')!;
    expect(health.lastDelivery).toEqual({ status: 'pending', at: hoursAgo(1) });
    expect(health).toMatchObject({ delivered: 1, failed: 0, failingSince: hoursAgo(1) });
  });

  it('counts pending deliveries through every change of status, and an event applied twice once', () => {
    const h = healthOf();
    const pending = () => h.queries.stats('EP', NOW).pending;
    h.schedule('a', hoursAgo(3));
    h.schedule('a', hoursAgo(3));
    h.schedule('b', hoursAgo(2));
    h.schedule('c', hoursAgo(2));
    expect(pending()).toBe(3);
    h.attempt('a', hoursAgo(2), 500, 5, 'retry');
    expect(pending()).toBe(3);
    h.attempt('a', hoursAgo(1), 200, 5, 'delivered');
    h.apply(hoursAgo(1), 'webhooks.DeliverySucceeded', { delivery_id: 'a', attempt: 2 });
    h.attempt('b', hoursAgo(1), 400, 5, 'failed');
    h.apply(hoursAgo(1), 'webhooks.DeliveryCancelled', { delivery_id: 'c', reason: 'endpoint disabled or deleted' });
    expect(pending()).toBe(0);
    h.apply(hoursAgo(0.5), 'webhooks.DeliveryRedeliveryRequested', { delivery_id: 'b', due_at: hoursAgo(0.5) });
    h.apply(hoursAgo(0.5), 'webhooks.DeliveryRedeliveryRequested', { delivery_id: 'b', due_at: hoursAgo(0.5) });
    expect(pending()).toBe(1);
    expect(h.queries.stats('EP', NOW)).toMatchObject({ delivered: 1, failed: 0 });
  });

  it('remembers the latest success by attempt time, whatever order the attempts were recorded in', () => {
    const h = healthOf();
    h.schedule('late', hoursAgo(3));
    h.schedule('early', hoursAgo(3));
    h.attempt('late', hoursAgo(1), 200, 5, 'delivered');
    // Began before the other's success, answered after it.
    h.attempt('early', hoursAgo(2), 200, 5, 'delivered');
    expect(h.queries.stats('EP', NOW)).toMatchObject({ last_success_at: hoursAgo(1), failing_since: null });
    expect(h.queries.health(['EP'], NOW).get('EP')?.lastDelivery).toEqual({ status: 'delivered', at: hoursAgo(2) });
  });
});
