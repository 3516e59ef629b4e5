/**
 * Issue 47's first acceptance line: one bad event's blast radius is what it touches. Two
 * instances on the EventStoreDB test server behind real Caddy running the shipped
 * deploy/Caddyfile (health-checked on /readyz). A writer that bypassed the platform appends two
 * malformed `orders.OrderSubmitted` events with a raw store client — and, earlier, rewrote one
 * account's webhook endpoint with a selection that is not a list (the fan-out cannot match that
 * account's notifications against it: a cause an operator can fix). For 30 s every token
 * request, entity write and read through Caddy succeeds, an order write answers 201 or a 503
 * problem+json within 5 s, and later notifications are delivered; every instance shows the halted
 * projection and the parked event; once the endpoint is fixed, `processors:retry-parked` delivers
 * the parked event, and `processors:skip` lets the halted projection go on.
 */
import { EventStoreDBClient, jsonEvent } from '@eventstore/db-client';
import { buildMetadata } from '@filing/platform';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fetch, type Agent } from 'undici';
import { PROBLEM } from '../support/api';
import { provisionAccount } from '../support/auth';
import { type CaddyEdge, startCaddy } from '../support/caddy';
import { runCli } from '../support/cli';
import { type Cluster, startCluster } from '../support/cluster';
import { TEST_SECRETS_KEY, type TestService } from '../support/service';
import { makeTestPki, type TestPki } from '../support/tls-certs';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { apiClient, eventually } from '../support/webhooks';

const V1 = '/external-api/v1';
const WINDOW_MS = 30_000;
/** The contract's bound for an order write while its read model is halted. */
const ORDER_BOUND_MS = 5_000;

interface Tenant {
  readonly accountId: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly token: string;
  readonly endpointId: string;
  readonly entityId: string;
}

/** An account with one enabled endpoint (to `receiver`, for `eventTypes`), notifications on, and an entity. */
async function tenant(service: TestService, receiver: WebhookReceiver, eventTypes: string[]): Promise<Tenant> {
  const client = await provisionAccount(service);
  const api = apiClient(service.url, client.token);
  const endpoint = (await api('POST', `${V1}/webhook-endpoints`, { url: receiver.url, event_types: eventTypes })).body;
  expect((await api('POST', `${V1}/webhook-endpoints/${endpoint.id}/enable`)).status).toBe(200);
  expect((await api('PUT', `${V1}/webhook-settings`, { notifications_enabled: true })).status).toBe(200);
  const entity = (await api('POST', `${V1}/entities`, { name: 'Steady Co', entity_type: 'llc' })).body;
  return { ...client, endpointId: endpoint.id, entityId: entity.id };
}

describe('one bad event on two instances behind Caddy (EventStoreDB test server)', () => {
  let pki: TestPki;
  let receiver: WebhookReceiver;
  let cluster: Cluster<{ steady: Tenant; broken: Tenant }>;
  let edge: CaddyEdge;
  let agent: Agent;
  let raw: EventStoreDBClient;
  let cliDir: string;

  beforeAll(async () => {
    pki = makeTestPki();
    receiver = await startReceiver(pki);
    cluster = await startCluster({
      size: 2,
      env: {
        WEBHOOK_CA_FILE: pki.caFile,
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        WEBHOOK_RETRY_DELAYS: '250ms,500ms,1s',
      },
      setup: async (service) => ({
        steady: await tenant(service, receiver, ['entity.created']),
        broken: await tenant(service, receiver, ['order.submitted']),
      }),
    });
    edge = await startCaddy({ upstreams: cluster.instances.map((i) => i.url) });
    agent = edge.agent();
    raw = EventStoreDBClient.connectionString(cluster.esdb.connectionString);
    cliDir = mkdtempSync(join(tmpdir(), 'filing-cli-'));
  }, 180_000);
  afterAll(async () => {
    await raw?.dispose();
    await edge?.stop();
    await cluster?.stop();
    await receiver?.close();
    if (cliDir) rmSync(cliDir, { recursive: true, force: true });
  });

  /** A call through the edge; JSON in and out. */
  const call = async (method: string, path: string, token: string, body?: unknown) => {
    const res = await fetch(`${edge.url}${path}`, {
      method,
      dispatcher: agent,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, type: res.headers.get('content-type'), body: text ? JSON.parse(text) : null };
  };
  const tokenFor = async (who: Tenant) => {
    const res = await fetch(`${edge.url}/o/token/`, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: who.clientId,
        client_secret: who.clientSecret,
      }).toString(),
    });
    return { status: res.status, body: (await res.json()) as { access_token?: string } };
  };
  const cli = (...args: string[]) =>
    runCli(cliDir, args, 90_000, '', {
      EVENT_STORE: 'esdb',
      EVENTSTORE_CONNECTION_STRING: cluster.esdb.connectionString,
      SECRETS_KEY: TEST_SECRETS_KEY,
    });
  const metric = async (url: string, line: RegExp) =>
    (await (await fetch(`${url}/metrics`)).text()).split('\n').find((l) => line.test(l));
  const degraded = async (url: string) =>
    ((await (await fetch(`${url}/readyz`)).json()) as { degraded?: any[] }).degraded ?? [];

  it('keeps serving what the bad events do not touch, parks the fan-out event, retries and skips on request', async () => {
    const { steady, broken } = cluster.setup;
    // The cause the fan-out will park on: the broken account's endpoint rewritten, its selection a number.
    const endpointEvents = await cluster.store().readStream(`webhookendpoint-${broken.endpointId}`);
    const rewritten = ['webhooks.EndpointCreated', 'webhooks.EndpointEnabled'].map((type) => {
      const e = endpointEvents.find((x) => x.type === type)!;
      const data = type === 'webhooks.EndpointCreated' ? { ...e.data, event_types: 42 } : e.data;
      return jsonEvent({ type, data, metadata: e.metadata });
    });
    await raw.appendToStream(`webhookendpoint-${broken.endpointId}`, rewritten);
    // The two malformed orders: one without metadata, one with entity_id null and order_type 42.
    const [id1, id2] = [randomUUID(), randomUUID()];
    const bad1 = jsonEvent({
      type: 'orders.OrderSubmitted',
      data: { order_id: id1, entity_id: broken.entityId, order_type: 'formation' },
    });
    const metadata = buildMetadata({
      account_id: broken.accountId,
      actor: 'script',
      correlation_id: id2,
      causation_id: null,
    });
    const bad2 = jsonEvent({
      type: 'orders.OrderSubmitted',
      data: { order_id: id2, entity_id: null, order_type: 42 },
      metadata: { ...metadata },
    });
    await raw.appendToStream(`order-${id1}`, [bad1]);
    await raw.appendToStream(`order-${id2}`, [bad2]);

    // 30 s of traffic through the edge: tokens, entity writes and reads all succeed; order writes are bounded.
    const created: string[] = [];
    const orderAnswers = new Set<number>();
    const start = Date.now();
    while (Date.now() - start < WINDOW_MS) {
      const token = await tokenFor(steady);
      expect(token.status).toBe(200);
      const entity = await call('POST', `${V1}/entities`, token.body.access_token!, {
        name: `Later ${created.length}`,
        entity_type: 'llc',
      });
      expect(entity.status).toBe(201);
      created.push(entity.body.id);
      expect((await call('GET', `${V1}/entities/${entity.body.id}`, token.body.access_token!)).status).toBe(200);
      const sent = performance.now();
      const order = await call('POST', `${V1}/orders`, token.body.access_token!, {
        entity_id: steady.entityId,
        order_type: 'formation',
      });
      const tookMs = performance.now() - sent;
      expect([201, 503]).toContain(order.status);
      if (order.status === 503) {
        expect(order.type).toBe(PROBLEM);
        expect(order.body).toMatchObject({ status: 503, read_model: 'orders', event_type: 'orders.OrderSubmitted' });
      }
      // The bound is part of the contract here: a halted read model answers, it does not hang.
      expect(tookMs).toBeLessThan(ORDER_BOUND_MS);
      orderAnswers.add(order.status);
    }
    expect(orderAnswers).toContain(503);

    // Notifications of later events are delivered.
    await eventually(() => {
      const got = new Set(receiver.requests.map((r) => r.json.entity_id));
      return created.every((id) => got.has(id)) ? true : undefined;
    }, 100);

    // Every instance shows the halted projection and the parked event (and is still in rotation).
    for (const instance of cluster.instances) {
      expect(
        await metric(instance.url, /^stream_processor_state\{processor="projection:orders",state="halted"\}/),
      ).toMatch(/ 1$/);
      expect(await metric(instance.url, /^stream_processor_parked_events\{processor="webhook-fanout"\}/)).toMatch(
        / 1$/,
      );
      expect((await fetch(`${instance.url}/readyz`)).status).toBe(200);
    }
    const parked = await cli('processors:parked');
    expect(parked).toMatchObject({ code: 0 });
    expect(
      parked.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([
      expect.objectContaining({
        processor: 'webhook-fanout',
        event_id: bad2.id,
        event_type: 'orders.OrderSubmitted',
        stream: `order-${id2}`,
      }),
    ]);

    // The cause removed (the account fixes its endpoint), the parked event is retried and delivered.
    expect(
      (
        await call('PATCH', `${V1}/webhook-endpoints/${broken.endpointId}`, broken.token, {
          event_types: ['order.submitted'],
        })
      ).status,
    ).toBe(200);
    const retried = await cli('processors:retry-parked');
    expect(retried).toMatchObject({ code: 0 });
    expect(JSON.parse(retried.stdout.trim())).toMatchObject({ event_id: bad2.id, outcome: 'handled' });
    const [delivered] = await receiver.waitFor(1, (r) => r.headers['webhook-id'] === bad2.id);
    expect(delivered.json).toMatchObject({ event_type: 'order.submitted', order_id: id2 });
    expect((await cli('processors:parked')).stdout.trim()).toBe('');

    // An operator skips the malformed orders for each projection halted on them; orders are served again.
    await eventually(async () => {
      const halted = (await Promise.all(cluster.instances.map((i) => degraded(i.url))))
        .flat()
        .filter((d) => d.state === 'halted');
      if (halted.length === 0) return true;
      for (const d of new Map(halted.map((h) => [`${h.processor} ${h.event_id}`, h])).values()) {
        expect(await cli('processors:skip', d.processor, d.event_id)).toMatchObject({ code: 0 });
      }
      return undefined;
    }, 500);
    const token = (await tokenFor(steady)).body.access_token!;
    expect(
      (await call('POST', `${V1}/orders`, token, { entity_id: steady.entityId, order_type: 'formation' })).status,
    ).toBe(201);
  }, 300_000);
});
