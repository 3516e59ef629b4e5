/**
 * Webhook delivery end to end: real HTTPS receivers on 127.0.0.1 with a CA made for the test
 * (trusted through WEBHOOK_CA_FILE), notifications triggered through the API. Retry delays are
 * compressed to milliseconds; assertions wait for outcomes, never for a time.
 */
import { Logger } from '@nestjs/common';
import { rmSync } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { verifySignature } from '@filing/webhooks';
import { createServer } from 'node:net';
import { provisionAccount, provisionOperator } from '../support/auth';
import { UUID_V7 } from '../support/api';
import { startService, type TestService } from '../support/service';
import { makeTestPki, type TestPki } from '../support/tls-certs';
import { startReceiver, type ReceivedRequest, type WebhookReceiver } from '../support/webhook-receiver';
import { apiClient, eventually, type Api } from '../support/webhooks';
import { SenderThread } from '../../libs/webhooks/src/dispatch/sender-thread';

const V1 = '/external-api/v1';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface Delivery {
  id: string;
  event_id: string;
  event_type: string;
  endpoint_id: string;
  status: string;
  attempt_count: number;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  created_at: string;
  attempts?: Array<{ attempted_at: string; status_code: number | null; error: string | null; duration_ms: number }>;
}

describe('webhook delivery over HTTPS', () => {
  let pki: TestPki;
  let strangerPki: TestPki;
  let service: TestService;
  let store: EventStore;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    pki = makeTestPki('Trusted');
    strangerPki = makeTestPki('Unknown');
    service = await startService({
      env: {
        WEBHOOK_CA_FILE: pki.caFile,
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        WEBHOOK_RETRY_DELAYS: '100ms,400ms,800ms',
        WEBHOOK_TIMEOUT_MS: '2000',
      },
    });
    store = service.app.get<EventStore>(EVENT_STORE);
  });
  afterAll(async () => {
    await service?.destroy();
    await Promise.all(receivers.map((r) => r.close()));
    for (const made of [pki, strangerPki]) if (made) rmSync(made.dir, { recursive: true, force: true });
  });

  async function receiver(which: TestPki = pki): Promise<WebhookReceiver> {
    const r = await startReceiver(which);
    receivers.push(r);
    return r;
  }

  /** A new account with the switch on and one enabled endpoint per URL. */
  async function account(urls: string[], eventTypes: string[][] = []) {
    const acc = await provisionAccount(service);
    const api = apiClient(service.url, acc.token);
    const endpoints: Array<{ id: string; secret: string }> = [];
    for (const [i, url] of urls.entries()) {
      const res = await api('POST', `${V1}/webhook-endpoints`, {
        url,
        ...(eventTypes[i] ? { event_types: eventTypes[i] } : {}),
      });
      expect(res.status).toBe(201);
      expect((await api('POST', `${V1}/webhook-endpoints/${res.body.id}/enable`)).status).toBe(200);
      endpoints.push(res.body);
    }
    expect((await api('PUT', `${V1}/webhook-settings`, { notifications_enabled: true })).status).toBe(200);
    return { api, accountId: acc.accountId, endpoints };
  }

  const createEntity = async (api: Api, name = 'Acme LLC') => {
    const res = await api('POST', `${V1}/entities`, { name, entity_type: 'llc' });
    expect(res.status).toBe(201);
    return res.body as { id: string };
  };

  const deliveries = async (api: Api, endpointId: string, status?: string): Promise<Delivery[]> =>
    (await api('GET', `${V1}/webhook-endpoints/${endpointId}/deliveries${status ? `?status=${status}` : ''}`)).body
      .data;

  const delivery = async (api: Api, id: string): Promise<Delivery> =>
    (await api('GET', `${V1}/webhook-deliveries/${id}`)).body;

  /** Waits until the endpoint's only delivery satisfies `until`. */
  const onlyDelivery = (api: Api, endpointId: string, until: (d: Delivery) => boolean) =>
    eventually(async () => {
      const list = await deliveries(api, endpointId);
      if (list.length !== 1) return undefined;
      const d = await delivery(api, list[0].id);
      return until(d) ? d : undefined;
    });

  /** One endpoint whose receiver answers `reply` first (a final failure), one entity: its failed delivery. */
  async function failedAtOnce(reply: Parameters<WebhookReceiver['script']>[0]) {
    const r = await receiver();
    r.script(reply);
    const { api, endpoints } = await account([r.url]);
    await createEntity(api);
    const failed = await onlyDelivery(api, endpoints[0].id, (x) => x.status === 'failed');
    return { r, api, endpoints, failed };
  }

  function expectSigned(req: ReceivedRequest, secret: string) {
    const id = String(req.headers['webhook-id']);
    const ts = Number(req.headers['webhook-timestamp']);
    expect(verifySignature(secret, String(req.headers['webhook-signature']), id, ts, req.body)).toBe(true);
  }

  it('delivers entity.created and entity.updated with every payload field, header and signature', async () => {
    const r = await receiver();
    const { api, endpoints } = await account([r.url]);
    const before = Math.floor(Date.now() / 1000);
    const entity = await createEntity(api);
    expect((await api('PATCH', `${V1}/entities/${entity.id}`, { status: 'dissolved' })).status).toBe(200);
    const got = await r.waitForEvents(2);
    const after = Math.ceil(Date.now() / 1000);
    const events = await store.readStream(`entity-${entity.id}`);
    const byType = (t: string) => got.find((g) => g.json.event_type === t)!;

    const created = byType('entity.created');
    expect(created.json).toEqual({
      event_id: events[0].id,
      event_type: 'entity.created',
      timestamp: events[0].metadata.occurred_at,
      entity_id: entity.id,
      status: 'active',
      resource_version: 0,
    });
    const updated = byType('entity.updated');
    expect(updated.json).toEqual({
      event_id: events[1].id,
      event_type: 'entity.updated',
      timestamp: events[1].metadata.occurred_at,
      entity_id: entity.id,
      status: 'dissolved',
      resource_version: 1,
    });
    for (const req of got) {
      expect(req.path).toBe('/hook');
      expect(req.headers['content-type']).toBe('application/json');
      expect(req.headers['user-agent']).toMatch(/^FilingService-Webhooks\//);
      expect(req.headers['webhook-id']).toBe(req.json.event_id);
      expect(req.headers['webhook-id']).toMatch(UUID);
      expect(String(req.headers['webhook-timestamp'])).toMatch(/^\d+$/);
      expect(Number(req.headers['webhook-timestamp'])).toBeGreaterThanOrEqual(before);
      expect(Number(req.headers['webhook-timestamp'])).toBeLessThanOrEqual(after);
      expect(String(req.headers['webhook-signature'])).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
      expectSigned(req, endpoints[0].secret);
      expect(req.json.timestamp).toMatch(ISO_MS);
    }
    const log = await eventually(async () => {
      const list = await deliveries(api, endpoints[0].id, 'delivered');
      return list.length === 2 ? list : undefined;
    });
    expect(log[0]).toEqual({
      id: expect.stringMatching(UUID),
      event_id: events[0].id,
      event_type: 'entity.created',
      endpoint_id: endpoints[0].id,
      status: 'delivered',
      attempt_count: 1,
      last_attempt_at: expect.stringMatching(ISO_MS),
      next_attempt_at: null,
      created_at: expect.stringMatching(ISO_MS),
    });
    const one = await delivery(api, log[0].id);
    expect(one.attempts).toEqual([
      { attempted_at: expect.stringMatching(ISO_MS), status_code: 200, error: null, duration_ms: expect.any(Number) },
    ]);
    const metrics = await (await fetch(`${service.url}/metrics`)).text();
    expect(metrics).toMatch(/^webhook_delivery_attempts_total\{outcome="delivered"\} [1-9]/m);
  });

  it('delivers order.submitted, order.cancelled and order.completed with their fields', async () => {
    const r = await receiver();
    const { api, endpoints } = await account([r.url], [['order.submitted', 'order.cancelled', 'order.completed']]);
    const entity = await createEntity(api);
    const submit = async () => {
      const res = await api('POST', `${V1}/orders`, { entity_id: entity.id, order_type: 'annual_report' });
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    const [cancelled, completed] = [await submit(), await submit()];
    expect((await api('POST', `${V1}/orders/${cancelled}/cancel`, { reason: 'changed our mind' })).status).toBe(200);
    const operator = apiClient(service.url, (await provisionOperator(service)).token);
    expect((await operator('POST', `/internal-api/v1/orders/${completed}/complete`)).status).toBe(200);
    const got = await r.waitForEvents(4);
    const events = [
      ...(await store.readStream(`order-${cancelled}`)),
      ...(await store.readStream(`order-${completed}`)),
    ];
    const expected = events.map((e) => ({
      event_id: e.id,
      event_type: e.type.replace('orders.Order', 'order.').toLowerCase(),
      timestamp: e.metadata.occurred_at,
      order_id: e.data.order_id,
      entity_id: entity.id,
      status: e.type.replace('orders.Order', '').toLowerCase(),
      resource_version: Number(e.revision),
    }));
    expect(got.map((g) => g.json).sort(byEventId)).toEqual(expected.sort(byEventId));
    expect(expected.map((e) => e.event_type).sort()).toEqual([
      'order.cancelled',
      'order.completed',
      'order.submitted',
      'order.submitted',
    ]);
    for (const req of got) expectSigned(req, endpoints[0].secret);
  });

  it('delivers jurisdiction.created and jurisdiction.updated with their fields', async () => {
    const r = await receiver();
    const { api, endpoints } = await account([r.url], [['jurisdiction.created', 'jurisdiction.updated']]);
    const entity = await createEntity(api);
    const added = await api('POST', `${V1}/jurisdictions`, {
      entity_id: entity.id,
      code: 'US-DE',
      registration_type: 'domestic',
    });
    expect(added.status).toBe(201);
    expect((await api('PATCH', `${V1}/jurisdictions/${added.body.id}`, { status: 'active' })).status).toBe(200);
    const got = await r.waitForEvents(2);
    const events = await store.readStream(`jurisdiction-${added.body.id}`);
    expect(got.map((g) => g.json).sort(byEventId)).toEqual(
      [
        {
          event_id: events[0].id,
          event_type: 'jurisdiction.created',
          timestamp: events[0].metadata.occurred_at,
          jurisdiction_id: added.body.id,
          entity_id: entity.id,
          status: added.body.status,
          resource_version: 0,
        },
        {
          event_id: events[1].id,
          event_type: 'jurisdiction.updated',
          timestamp: events[1].metadata.occurred_at,
          jurisdiction_id: added.body.id,
          entity_id: entity.id,
          status: 'active',
          resource_version: 1,
        },
      ].sort(byEventId),
    );
    for (const req of got) expectSigned(req, endpoints[0].secret);
  });

  it('delivers task.created (and nothing for a task update) with its fields', async () => {
    const r = await receiver();
    const { api, endpoints } = await account([r.url]);
    const entity = await createEntity(api);
    const task = await api('POST', `${V1}/tasks`, { entity_id: entity.id, title: 'File annual report' });
    expect(task.status).toBe(201);
    expect((await api('PATCH', `${V1}/tasks/${task.body.id}`, { status: 'completed' })).status).toBe(200);
    // The entity.created, the task.created, and (sent after the update, so proof it was skipped) one more entity.
    const last = await createEntity(api, 'After the task update');
    const got = await r.waitForEvents(3);
    const events = await store.readStream(`task-${task.body.id}`);
    expect(events.map((e) => e.type)).toEqual(['tasks.TaskCreated', 'tasks.TaskUpdated']);
    const log = await eventually(async () => {
      const list = await deliveries(api, endpoints[0].id);
      return list.length === 3 ? list : undefined;
    });
    expect(log.map((d) => d.event_type)).toEqual(['entity.created', 'task.created', 'entity.created']);
    expect(got.find((g) => g.json.event_type === 'task.created')!.json).toEqual({
      event_id: events[0].id,
      event_type: 'task.created',
      timestamp: events[0].metadata.occurred_at,
      task_id: task.body.id,
      entity_id: entity.id,
      status: 'open',
      resource_version: 0,
    });
    expect(got.some((g) => g.json.entity_id === last.id)).toBe(true);
  });

  it('delivers document.created, document.updated and document.deleted with order_id (or null)', async () => {
    const r = await receiver();
    const { api } = await account([r.url], [['document.created', 'document.updated', 'document.deleted']]);
    const entity = await createEntity(api);
    const order = (await api('POST', `${V1}/orders`, { entity_id: entity.id, order_type: 'formation' })).body;
    const content = { content_type: 'text/plain', content_base64: Buffer.from('hello').toString('base64') };
    const loose = await api('POST', `${V1}/documents`, {
      entity_id: entity.id,
      title: 'Charter',
      document_type: 'charter',
      ...content,
    });
    expect(loose.status).toBe(201);
    const forOrder = await api('POST', `${V1}/documents`, {
      entity_id: entity.id,
      order_id: order.id,
      title: 'Receipt',
      document_type: 'receipt',
      ...content,
    });
    expect(forOrder.status).toBe(201);
    expect((await api('PATCH', `${V1}/documents/${loose.body.id}`, { title: 'Charter (signed)' })).status).toBe(200);
    expect((await api('DELETE', `${V1}/documents/${loose.body.id}`)).status).toBe(204);
    const got = await r.waitForEvents(4);
    const events = [
      ...(await store.readStream(`document-${loose.body.id}`)),
      ...(await store.readStream(`document-${forOrder.body.id}`)),
    ];
    const typeOf: Record<string, string> = {
      'documents.DocumentAdded': 'document.created',
      'documents.DocumentUpdated': 'document.updated',
      'documents.DocumentDeleted': 'document.deleted',
    };
    const expected = events.map((e) => ({
      event_id: e.id,
      event_type: typeOf[e.type],
      timestamp: e.metadata.occurred_at,
      document_id: e.data.document_id,
      entity_id: entity.id,
      order_id: e.data.document_id === forOrder.body.id ? order.id : null,
      status: e.type === 'documents.DocumentDeleted' ? 'deleted' : 'available',
      resource_version: Number(e.revision),
    }));
    expect(expected.map((e) => e.event_type).sort()).toEqual([
      'document.created',
      'document.created',
      'document.deleted',
      'document.updated',
    ]);
    expect(got.map((g) => g.json).sort(byEventId)).toEqual(expected.sort(byEventId));
  });

  it('follows each endpoint’s event-type selection; event_id is the same on every endpoint', async () => {
    const [onlyUpdates, all] = [await receiver(), await receiver()];
    const { api } = await account([onlyUpdates.url, all.url], [['entity.updated'], []]);
    const entity = await createEntity(api);
    await api('PATCH', `${V1}/entities/${entity.id}`, { name: 'Renamed' });
    const fromAll = await all.waitForEvents(2);
    const [update] = await onlyUpdates.waitForEvents(1);
    expect(update.json.event_type).toBe('entity.updated');
    expect(fromAll.map((g) => g.json.event_type).sort()).toEqual(['entity.created', 'entity.updated']);
    expect(fromAll.find((g) => g.json.event_type === 'entity.updated')!.headers['webhook-id']).toBe(
      update.headers['webhook-id'],
    );
  });

  it('delivers nothing while the endpoint is disabled or the switch is off, and not later either', async () => {
    const r = await receiver();
    const { api, endpoints } = await account([r.url]);
    const ep = endpoints[0].id;
    await api('POST', `${V1}/webhook-endpoints/${ep}/disable`);
    await createEntity(api, 'While disabled');
    await api('POST', `${V1}/webhook-endpoints/${ep}/enable`);
    await api('PUT', `${V1}/webhook-settings`, { notifications_enabled: false });
    await createEntity(api, 'While switched off');
    await api('PUT', `${V1}/webhook-settings`, { notifications_enabled: true });
    const third = await createEntity(api, 'Now');
    const d = await onlyDelivery(api, ep, (x) => x.status === 'delivered');
    expect(r.requests).toHaveLength(1);
    expect(r.requests[0].json.entity_id).toBe(third.id);
    expect(d.attempt_count).toBe(1);
  });

  it('retries 503, 503 then 200 with growing gaps and one webhook-id', async () => {
    const r = await receiver();
    r.script({ status: 503 }, { status: 503 });
    const { api, endpoints } = await account([r.url]);
    await createEntity(api);
    const got = await r.waitFor(3);
    expect(new Set(got.map((g) => g.headers['webhook-id'])).size).toBe(1);
    const gap1 = got[1].receivedAt - got[0].receivedAt;
    const gap2 = got[2].receivedAt - got[1].receivedAt;
    expect(gap2).toBeGreaterThan(gap1);
    const d = await onlyDelivery(api, endpoints[0].id, (x) => x.status === 'delivered');
    expect(d.attempts!.map((a) => a.status_code)).toEqual([503, 503, 200]);
    // Ids are UUID v7 everywhere, the delivery's too (deterministic, from its event and endpoint).
    expect([d.id, d.event_id]).toEqual([expect.stringMatching(UUID_V7), got[0].headers['webhook-id']]);
  });

  it('does not retry a 404: the delivery fails at once', async () => {
    const { r, api, endpoints, failed: d } = await failedAtOnce({ status: 404 });
    expect(d.attempt_count).toBe(1);
    expect(d.attempts!.map((a) => a.status_code)).toEqual([404]);
    expect(r.requests).toHaveLength(1);
    expect(await deliveries(api, endpoints[0].id, 'failed')).toHaveLength(1);
    expect(await deliveries(api, endpoints[0].id, 'pending')).toHaveLength(0);
  });

  it('does not follow a redirect: a 3xx fails at once', async () => {
    const { failed: d } = await failedAtOnce({ status: 302, headers: { location: 'https://127.0.0.1:1/elsewhere' } });
    expect(d.attempts!.map((a) => a.status_code)).toEqual([302]);
  });

  it('honours Retry-After on a 429', async () => {
    const r = await receiver();
    r.script({ status: 429, headers: { 'retry-after': '1' } });
    const { api, endpoints } = await account([r.url]);
    await createEntity(api);
    const got = await r.waitFor(2);
    expect(got[1].receivedAt - got[0].receivedAt).toBeGreaterThanOrEqual(1000);
    const d = await onlyDelivery(api, endpoints[0].id, (x) => x.status === 'delivered');
    expect(d.attempts!.map((a) => a.status_code)).toEqual([429, 200]);
  });

  it('retries after a timeout', async () => {
    const r = await receiver();
    r.script('hang');
    const { api, endpoints } = await account([r.url]);
    await createEntity(api);
    const d = await onlyDelivery(api, endpoints[0].id, (x) => x.status === 'delivered');
    expect(d.attempts!.map((a) => [a.status_code, a.error?.split(':')[0] ?? null])).toEqual([
      [null, 'timeout'],
      [200, null],
    ]);
    expect(new Set(r.requests.map((q) => q.headers['webhook-id'])).size).toBe(1);
  });

  it('retries a refused connection until the schedule is exhausted, then fails', async () => {
    const port = await closedPort();
    const { api, endpoints } = await account([`https://127.0.0.1:${port}/hook`]);
    await createEntity(api);
    const d = await onlyDelivery(api, endpoints[0].id, (x) => x.status === 'failed');
    expect(d.attempts).toHaveLength(4);
    for (const a of d.attempts!)
      expect(a).toEqual(expect.objectContaining({ status_code: null, error: expect.stringMatching(/^connection:/) }));
  });

  it('refuses a certificate from an unknown CA (a TLS failure, retried)', async () => {
    const r = await receiver(strangerPki);
    const { api, endpoints } = await account([r.url]);
    await createEntity(api);
    const d = await onlyDelivery(api, endpoints[0].id, (x) => x.attempt_count >= 1);
    expect(d.attempts![0]).toEqual(
      expect.objectContaining({ status_code: null, error: expect.stringMatching(/^tls:/) }),
    );
    expect(r.requests).toHaveLength(0);
  });

  it('cancels a pending retry when the endpoint is disabled', async () => {
    const r = await receiver();
    r.script({ status: 429, headers: { 'retry-after': '3600' } });
    const { api, endpoints } = await account([r.url]);
    await createEntity(api);
    const pending = await onlyDelivery(
      api,
      endpoints[0].id,
      (x) => x.attempt_count === 1 && x.next_attempt_at !== null,
    );
    expect(pending.status).toBe('pending');
    await api('POST', `${V1}/webhook-endpoints/${endpoints[0].id}/disable`);
    const d = await onlyDelivery(api, endpoints[0].id, (x) => x.status === 'cancelled');
    expect(d.next_attempt_at).toBeNull();
    expect(r.requests).toHaveLength(1);
  });

  it('cancels pending retries when the account switch goes off', async () => {
    const r = await receiver();
    r.script({ status: 503, headers: { 'retry-after': '3600' } });
    const { api, endpoints } = await account([r.url]);
    await createEntity(api);
    await onlyDelivery(api, endpoints[0].id, (x) => x.attempt_count === 1 && x.next_attempt_at !== null);
    await api('PUT', `${V1}/webhook-settings`, { notifications_enabled: false });
    await onlyDelivery(api, endpoints[0].id, (x) => x.status === 'cancelled');
  });

  it('cancels a pending retry when the endpoint is deleted; the delivery stays readable', async () => {
    const r = await receiver();
    r.script({ status: 503, headers: { 'retry-after': '3600' } });
    const { api, endpoints } = await account([r.url]);
    await createEntity(api);
    const pending = await onlyDelivery(
      api,
      endpoints[0].id,
      (x) => x.attempt_count === 1 && x.next_attempt_at !== null,
    );
    expect((await api('DELETE', `${V1}/webhook-endpoints/${endpoints[0].id}`)).status).toBe(204);
    const d = await eventually(async () => {
      const res = await api('GET', `${V1}/webhook-deliveries/${pending.id}`);
      return res.body.status === 'cancelled' ? (res.body as Delivery) : undefined;
    });
    expect(d.next_attempt_at).toBeNull();
    expect(d.attempts!.map((a) => a.status_code)).toEqual([503]);
    expect(r.requests).toHaveLength(1);
  });

  it('redelivers a failed delivery by hand, with the same webhook-id', async () => {
    const { r, api, endpoints, failed } = await failedAtOnce({ status: 400 });
    const res = await api('POST', `${V1}/webhook-deliveries/${failed.id}/redeliver`);
    expect(res.status).toBe(202);
    const d = await onlyDelivery(api, endpoints[0].id, (x) => x.status === 'delivered');
    expect(d.attempts!.map((a) => a.status_code)).toEqual([400, 200]);
    expect(r.requests.map((q) => q.headers['webhook-id'])).toEqual([failed.event_id, failed.event_id]);
    expect((await api('POST', `${V1}/webhook-deliveries/${failed.id}/redeliver`)).status).toBe(409);
    const stranger = apiClient(service.url, (await provisionAccount(service)).token);
    expect((await stranger('GET', `${V1}/webhook-deliveries/${failed.id}`)).status).toBe(404);
    expect((await stranger('POST', `${V1}/webhook-deliveries/${failed.id}/redeliver`)).status).toBe(404);
  });

  it('refuses a redelivery that could not go out (endpoint disabled or deleted, switch off) with a 409 saying why; nothing is sent', async () => {
    const { r, api, endpoints, failed } = await failedAtOnce({ status: 400 });
    const redeliver = () => api('POST', `${V1}/webhook-deliveries/${failed.id}/redeliver`);
    const refused = async (detail: RegExp) => {
      const res = await redeliver();
      expect([res.status, res.body.detail]).toEqual([409, expect.stringMatching(detail)]);
    };
    expect((await api('POST', `${V1}/webhook-endpoints/${endpoints[0].id}/disable`)).status).toBe(200);
    await refused(/endpoint is disabled: enable it first/);
    expect((await api('POST', `${V1}/webhook-endpoints/${endpoints[0].id}/enable`)).status).toBe(200);
    expect((await api('PUT', `${V1}/webhook-settings`, { notifications_enabled: false })).status).toBe(200);
    await refused(/Webhook Notifications are off/);
    expect((await api('PUT', `${V1}/webhook-settings`, { notifications_enabled: true })).status).toBe(200);
    expect((await api('DELETE', `${V1}/webhook-endpoints/${endpoints[0].id}`)).status).toBe(204);
    await refused(/endpoint is deleted/);
    expect((await delivery(api, failed.id)).status).toBe('failed');
    expect(r.requests).toHaveLength(1);
  });

  it('disables the endpoint on a 410 Gone (reason gone, an event by the service): its pending retry is cancelled; enabling clears the reason', async () => {
    const r = await receiver();
    // The first event waits for a retry in an hour; the second is answered 410.
    r.script({ status: 503, headers: { 'retry-after': '3600' } }, { status: 410 });
    const { api, endpoints } = await account([r.url]);
    const ep = endpoints[0].id;
    await createEntity(api, 'Before');
    await onlyDelivery(api, ep, (x) => x.attempt_count === 1 && x.next_attempt_at !== null);
    await createEntity(api, 'Gone');

    const disabled = await eventually(async () => {
      const res = await api('GET', `${V1}/webhook-endpoints/${ep}`);
      return res.body.enabled === false ? res.body : undefined;
    });
    expect(disabled.disabled_reason).toBe('gone');
    const log = await eventually(async () => {
      const list = await deliveries(api, ep);
      return list.length === 2 && list.every((d) => d.status !== 'pending') ? list : undefined;
    });
    expect(log.map((d) => [d.status, d.next_attempt_at])).toEqual([
      ['cancelled', null],
      ['failed', null],
    ]);
    expect((await delivery(api, log[1].id)).attempts!.map((a) => a.status_code)).toEqual([410]);
    const events = await store.readStream(`webhookendpoint-${ep}`);
    expect(events.at(-1)).toMatchObject({
      type: 'webhooks.EndpointDisabled',
      data: { endpoint_id: ep, reason: 'gone' },
      metadata: { actor: 'system:webhooks', schema_version: 2 },
    });
    expect(r.requests.map((q) => q.answered)).toEqual([503, 410]);

    const enabled = await api('POST', `${V1}/webhook-endpoints/${ep}/enable`);
    expect(enabled.body).toMatchObject({ enabled: true, disabled_reason: null });
    const again = await api('POST', `${V1}/webhook-endpoints/${ep}/disable`);
    expect(again.body).toMatchObject({ enabled: false, disabled_reason: 'manual' });
  });

  it('signs with both the old and the new secret after a rotation', async () => {
    const r = await receiver();
    const { api, endpoints } = await account([r.url]);
    const rotated = await api('POST', `${V1}/webhook-endpoints/${endpoints[0].id}/rotate-secret`);
    await createEntity(api);
    const [req] = await r.waitFor(1);
    expect(String(req.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expectSigned(req, endpoints[0].secret);
    expectSigned(req, rotated.body.secret);
  });

  it('the sender thread killed mid-burst: every delivery still arrives and ends delivered; the death is logged, the secret never', async () => {
    const errors = jest.spyOn(Logger.prototype, 'error');
    try {
      const r = await receiver();
      // Slow answers: the requests the receiver holds are in flight on the thread when it dies.
      r.fallback = { status: 200, delayMs: 150 };
      const { api, endpoints } = await account([r.url]);
      const created = await Promise.all(Array.from({ length: 40 }, (_, i) => createEntity(api, `Burst ${i}`)));
      await r.waitFor(5);
      const thread = service.app.get(SenderThread);
      await (thread as unknown as { worker: Worker }).worker.terminate();

      await eventually(() => {
        const ok = new Set(r.requests.filter((q) => q.answered === 200).map((q) => q.json.entity_id));
        return created.every((e) => ok.has(e.id)) || undefined;
      });
      const all = await eventually(async () => {
        const list = (await api('GET', `${V1}/webhook-endpoints/${endpoints[0].id}/deliveries?limit=100`)).body
          .data as Delivery[];
        return list.length === 40 && list.every((d) => d.status === 'delivered') ? list : undefined;
      });
      // The five the receiver was holding when the thread died went out again.
      expect(all.filter((d) => d.attempt_count > 1).length).toBeGreaterThanOrEqual(5);
      const logged = JSON.stringify(errors.mock.calls);
      expect(logged).toContain('The webhook sender thread stopped');
      expect(logged).not.toContain(endpoints[0].secret.slice('whsec_'.length));
    } finally {
      errors.mockRestore();
    }
  });
});

const byEventId = (a: Record<string, unknown>, b: Record<string, unknown>) =>
  String(a.event_id).localeCompare(String(b.event_id));

/** A port nobody listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
