/**
 * Webhook work shared, not repeated (issue 14): three service processes on one EventStoreDB
 * (the test server), each with its own DATA_DIR and the same SECRETS_KEY, driven round-robin.
 * Every instance runs the fan-out and the dispatcher off its own read models; a DeliveryClaimed
 * appended at the delivery stream's expected revision gives each attempt to exactly one of them,
 * and a claim whose instance died runs out (WEBHOOK_TIMEOUT_MS + 5 s) and is taken over.
 */
import type { RecordedEvent } from '@filing/event-store';
import { DISPATCHER_LIMITS, verifySignature } from '@filing/webhooks';
import { rmSync } from 'node:fs';
import { provisionAccount } from '../support/auth';
import { type Cluster, startCluster } from '../support/cluster';
import { makeTestPki, type TestPki } from '../support/tls-certs';
import { type ReceivedRequest, startReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { apiClient, eventually } from '../support/webhooks';
import type { TestService } from '../support/service';

const V1 = '/external-api/v1';
const ORDERS = 300;
/**
 * More than two instances can hold at once (each up to 16 sending and 16 waiting in its lane per
 * endpoint): the tests that stop one instance mid-attempt need it to hold claims, and with 60 the
 * other two could take them all before it claimed any (a hang of the rolling restart test under a
 * loaded machine).
 */
const ORDERS_UNDER_CRASH = 2 * (DISPATCHER_LIMITS.perEndpoint + DISPATCHER_LIMITS.queuedPerEndpoint) + 36;
const TIMEOUT_MS = 3_000;
/** What the dispatcher's claims hold for: WEBHOOK_TIMEOUT_MS + 5 s (dispatch/dispatcher-instance.ts). */
const LEASE_MS = TIMEOUT_MS + 5_000;
/** The bound for another instance to take over a dead one's deliveries. */
const TAKEOVER_BOUND_MS = 30_000;

interface Tenant {
  readonly token: string;
  readonly endpointId: string;
  readonly secret: string;
  readonly entityId: string;
}

/** An account whose one endpoint takes `order.submitted` to `receiver`, switched on, with an entity to order for. */
async function tenant(service: TestService, receiver: WebhookReceiver): Promise<Tenant> {
  const { token } = await provisionAccount(service);
  const api = apiClient(service.url, token);
  const endpoint = (
    await api('POST', `${V1}/webhook-endpoints`, { url: receiver.url, event_types: ['order.submitted'] })
  ).body;
  expect((await api('POST', `${V1}/webhook-endpoints/${endpoint.id}/enable`)).status).toBe(200);
  expect((await api('PUT', `${V1}/webhook-settings`, { notifications_enabled: true })).status).toBe(200);
  const entity = (await api('POST', `${V1}/entities`, { name: 'Cluster Co', entity_type: 'llc' })).body;
  return { token, endpointId: endpoint.id, secret: endpoint.secret, entityId: entity.id };
}

/** `count` orders, each POSTed to the next instance in turn, 12 at a time; their ids. */
async function submitOrders(cluster: Cluster<unknown>, who: Tenant, count: number): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 12 }, async () => {
      while (next < count) {
        next++;
        const res = await apiClient(cluster.next(), who.token)('POST', `${V1}/orders`, {
          entity_id: who.entityId,
          order_type: 'formation',
        });
        expect(res.status).toBe(201);
        ids.push(res.body.id);
      }
    }),
  );
  return ids;
}

/** The webhook deliveries in the store, by delivery id: their events in stream order. */
async function deliveryStreams(cluster: Cluster<unknown>, endpointId: string): Promise<Map<string, RecordedEvent[]>> {
  const streams = new Map<string, RecordedEvent[]>();
  for (const e of await cluster.store().readAll({ maxCount: 1_000_000 })) {
    if (!e.streamId.startsWith('webhookdelivery-')) continue;
    const events = streams.get(e.streamId) ?? [];
    events.push(e);
    streams.set(e.streamId, events);
  }
  for (const [id, events] of streams) if (events[0]?.data.endpoint_id !== endpointId) streams.delete(id);
  return streams;
}

/** An instance's claims with no attempt recorded after them (its attempts in flight), by delivery stream. */
async function inFlight(
  cluster: Cluster<unknown>,
  endpointId: string,
  instance: string,
): Promise<Map<string, RecordedEvent>> {
  const claims = new Map<string, RecordedEvent>();
  for (const [id, events] of await deliveryStreams(cluster, endpointId)) {
    const last = events
      .filter((e) => e.type === 'webhooks.DeliveryClaimed' || e.type === 'webhooks.DeliveryAttempted')
      .at(-1);
    if (last?.type === 'webhooks.DeliveryClaimed' && last.data.instance === instance) claims.set(id, last);
  }
  return claims;
}

/** A successful attempt is one event that says so (older versions appended a DeliverySucceeded after it). */
const delivers = (e: RecordedEvent) => e.type === 'webhooks.DeliveryAttempted' && e.data.outcome === 'succeeded';
const ENDED_BY = new Set(['webhooks.DeliverySucceeded', 'webhooks.DeliveryFailed', 'webhooks.DeliveryCancelled']);
const ends = (e: RecordedEvent) => delivers(e) || ENDED_BY.has(e.type);
const answeredOk = (requests: readonly ReceivedRequest[]) => requests.filter((r) => r.answered === 200);
const countBy = <T>(items: readonly T[], key: (t: T) => string) => {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
};

describe('webhooks on a cluster of three instances (EventStoreDB test server)', () => {
  let pki: TestPki;
  let fast: WebhookReceiver;
  let crashy: WebhookReceiver;
  let gone: WebhookReceiver;
  let slow: WebhookReceiver;
  let cluster: Cluster<{ steady: Tenant; crash: Tenant; gone: Tenant; rolling: Tenant }>;

  beforeAll(async () => {
    pki = makeTestPki();
    fast = await startReceiver(pki);
    crashy = await startReceiver(pki);
    gone = await startReceiver(pki);
    gone.fallback = { status: 410 };
    slow = await startReceiver(pki);
    // Long enough that the rolling test's attempts are still in flight once its orders are all
    // submitted (a faster dispatcher could finish a 400 ms receiver's backlog before the first look),
    // short of WEBHOOK_TIMEOUT_MS so each attempt succeeds once.
    slow.fallback = { status: 200, delayMs: 1_500 };
    cluster = await startCluster({
      size: 3,
      env: {
        WEBHOOK_CA_FILE: pki.caFile,
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
        WEBHOOK_RETRY_DELAYS: '250ms,500ms,1s,2s,2s,2s,2s,2s,2s,2s,2s,2s',
      },
      setup: async (service) => ({
        steady: await tenant(service, fast),
        crash: await tenant(service, crashy),
        gone: await tenant(service, gone),
        rolling: await tenant(service, slow),
      }),
    });
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
    await fast?.close();
    await crashy?.close();
    await gone?.close();
    await slow?.close();
    if (pki) rmSync(pki.dir, { recursive: true, force: true });
  });

  it('300 orders created round-robin: each order.submitted delivered exactly once, signed with the secret another instance shows', async () => {
    const { steady } = cluster.setup;
    // The secret, fetched from an instance that did not create the endpoint (the setup instance did).
    const shown = await apiClient(cluster.instances[2].url, steady.token)(
      'GET',
      `${V1}/webhook-endpoints/${steady.endpointId}/secret`,
    );
    expect(shown.body).toEqual({ secret: steady.secret });

    const orders = await submitOrders(cluster, steady, ORDERS);
    expect(new Set(orders).size).toBe(ORDERS);
    await fast.waitForEvents(ORDERS);
    // Settled: every delivery's outcome is in the store, so no attempt is still under way.
    const streams = await eventually(async () => {
      const s = await deliveryStreams(cluster, steady.endpointId);
      const done = [...s.values()].filter((events) => events.some(delivers));
      return done.length === ORDERS ? s : undefined;
    }, 250);

    expect(new Set(fast.requests.map((r) => r.json.order_id)).size).toBe(ORDERS);
    expect(new Set(fast.requests.map((r) => r.json.order_id))).toEqual(new Set(orders));
    // Exactly once: one request per webhook-id, every one verified with the shown secret.
    const repeated = [...countBy(fast.requests, (r) => String(r.headers['webhook-id']))].filter(([, n]) => n > 1);
    expect(repeated).toEqual([]);
    expect(fast.requests).toHaveLength(ORDERS);
    for (const r of fast.requests) {
      const h = r.headers;
      expect(
        verifySignature(
          shown.body.secret,
          String(h['webhook-signature']),
          String(h['webhook-id']),
          Number(h['webhook-timestamp']),
          r.body,
        ),
      ).toBe(true);
    }
    // One claim and one attempt per delivery in the log; the work was shared between the instances.
    const claims = [...streams.values()].flatMap((events) =>
      events.filter((e) => e.type === 'webhooks.DeliveryClaimed'),
    );
    const attempts = [...streams.values()].flatMap((events) =>
      events.filter((e) => e.type === 'webhooks.DeliveryAttempted'),
    );
    expect([claims.length, attempts.length]).toEqual([ORDERS, ORDERS]);
    // Each attempt delivered its delivery by itself: no DeliverySucceeded is appended any more.
    expect(attempts.every(delivers)).toBe(true);
    expect([...streams.values()].flat().filter((e) => e.type === 'webhooks.DeliverySucceeded')).toEqual([]);
    const claimers = new Set(claims.map((c) => c.data.instance as string));
    const ids = new Set(cluster.instances.map((i) => i.dispatcherId));
    expect([...claimers].every((id) => ids.has(id))).toBe(true);
    expect(claimers.size).toBeGreaterThanOrEqual(2);
    // The fan-outs of three instances scheduled one delivery per order, each once.
    expect(streams.size).toBe(ORDERS);
    expect(
      [...streams.values()].every(
        (events) => events.filter((e) => e.type === 'webhooks.DeliveryScheduled').length === 1,
      ),
    ).toBe(true);
  }, 180_000);

  it('a 410 heard by several instances disables the endpoint once; each pending delivery ends once', async () => {
    const { gone: who } = cluster.setup;
    const orders = new Set((await submitOrders(cluster, who, 30)).map((id) => `order-${id}`));
    const disabledAt = await eventually(async () => {
      const events = await cluster.store().readStream(`webhookendpoint-${who.endpointId}`);
      return events.find((e) => e.type === 'webhooks.EndpointDisabled')?.position.commit;
    }, 100);
    // An order submitted after the disable (in the stream's order) is no longer sent to the endpoint.
    const before = (await cluster.store().readAll({ maxCount: 1_000_000 })).filter(
      (e) => orders.has(e.streamId) && e.position.commit < disabledAt,
    );
    expect(before.length).toBeGreaterThanOrEqual(1);
    const streams = await eventually(async () => {
      const s = await deliveryStreams(cluster, who.endpointId);
      const ended = [...s.values()].filter((events) => events.some(ends));
      return s.size === before.length && ended.length === before.length ? s : undefined;
    }, 250);
    const disables = (await cluster.store().readStream(`webhookendpoint-${who.endpointId}`)).filter(
      (e) => e.type === 'webhooks.EndpointDisabled',
    );
    expect(disables.map((e) => e.data)).toEqual([{ endpoint_id: who.endpointId, reason: 'gone' }]);
    // The fan-outs of three instances cancel as of the disable's position, the dispatchers at send time: one ending each.
    for (const events of streams.values()) expect(events.filter(ends)).toHaveLength(1);
  }, 180_000);

  it('a rolling restart (SIGTERM, start again) mid-load: its attempts in flight finish and are recorded, nothing is sent twice', async () => {
    const { rolling } = cluster.setup;
    const stopping = cluster.instances[1];
    const before = stopping.dispatcherId;
    const orders = await submitOrders(cluster, rolling, ORDERS_UNDER_CRASH);
    await eventually(
      async () => ((await inFlight(cluster, rolling.endpointId, before)).size >= 3 ? true : undefined),
      50,
    );
    await stopping.kill('SIGTERM');
    await stopping.start();
    expect(stopping.dispatcherId).not.toBe(before);

    const streams = await eventually(async () => {
      const s = await deliveryStreams(cluster, rolling.endpointId);
      const done = [...s.values()].filter((events) => events.some(delivers));
      return done.length === ORDERS_UNDER_CRASH ? s : undefined;
    }, 250);
    expect(new Set(answeredOk(slow.requests).map((r) => r.json.order_id))).toEqual(new Set(orders));
    expect([...countBy(slow.requests, (r) => String(r.headers['webhook-id']))].filter(([, n]) => n > 1)).toEqual([]);
    // Every claim of the stopped process was followed by its own attempt: one claim and one attempt per delivery.
    for (const events of streams.values()) {
      expect(
        events
          .filter((e) => e.type === 'webhooks.DeliveryClaimed' || e.type === 'webhooks.DeliveryAttempted')
          .map((e) => e.type),
      ).toEqual(['webhooks.DeliveryClaimed', 'webhooks.DeliveryAttempted']);
    }
  }, 180_000);

  it('one instance SIGKILLed with attempts in flight: every delivery still arrives, the others take over its claims', async () => {
    const { crash } = cluster.setup;
    // Slow at first: every attempt hangs until WEBHOOK_TIMEOUT_MS, so each instance holds claims in flight.
    crashy.fallback = 'hang';
    const victim = cluster.instances[0];
    const orders = await submitOrders(cluster, crash, ORDERS_UNDER_CRASH);

    const victimInFlight = () => inFlight(cluster, crash.endpointId, victim.dispatcherId);
    await eventually(async () => ((await victimInFlight()).size >= 3 ? true : undefined), 100);
    await victim.kill('SIGKILL');
    const killedAt = Date.now();
    const orphaned = await victimInFlight();
    expect(orphaned.size).toBeGreaterThanOrEqual(3);
    crashy.fallback = { status: 200 };

    // At least once: every order's notification is answered 200 by the receiver.
    const webhookIdOf = new Map<string, string>();
    const streams = await eventually(async () => {
      const s = await deliveryStreams(cluster, crash.endpointId);
      const done = [...s.values()].filter((events) => events.some(delivers));
      return done.length === ORDERS_UNDER_CRASH ? s : undefined;
    }, 250);
    for (const [id, events] of streams) webhookIdOf.set(id, events[0].data.event_id as string);
    const ok = answeredOk(crashy.requests);
    expect(new Set(ok.map((r) => r.json.order_id))).toEqual(new Set(orders));

    // Twice only where the victim died mid-attempt: the survivors cannot know it had been sent.
    const orphanedWebhookIds = new Set([...orphaned.keys()].map((id) => webhookIdOf.get(id)!));
    const twice = [...countBy(ok, (r) => String(r.headers['webhook-id']))].filter(([, n]) => n > 1).map(([id]) => id);
    expect(twice.filter((id) => !orphanedWebhookIds.has(id))).toEqual([]);

    // Each orphaned delivery was claimed again by a survivor: not before the victim's lease ran out,
    // and within the takeover bound of the kill.
    const survivors = new Set(cluster.instances.filter((i) => i !== victim).map((i) => i.dispatcherId));
    for (const [id, claim] of orphaned) {
      const takeover = streams
        .get(id)!
        .find((e) => e.type === 'webhooks.DeliveryClaimed' && e.position.commit > claim.position.commit)!;
      expect(survivors.has(takeover.data.instance as string)).toBe(true);
      const claimedAt = Date.parse(takeover.metadata.occurred_at as string);
      expect(claimedAt).toBeGreaterThanOrEqual(Date.parse(claim.data.lease_until as string));
      expect(claimedAt - killedAt).toBeLessThanOrEqual(TAKEOVER_BOUND_MS);
      expect(Date.parse(claim.data.lease_until as string) - Date.parse(claim.metadata.occurred_at as string)).toBe(
        LEASE_MS,
      );
    }
  }, 180_000);
});
