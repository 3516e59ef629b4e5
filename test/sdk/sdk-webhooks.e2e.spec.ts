/**
 * The SDK's webhook side against the real service: the endpoints API through the typed client,
 * and the verifier on the service's real HTTPS deliveries (receivers on 127.0.0.1 with a CA made
 * for the test, trusted through WEBHOOK_CA_FILE). Tampered body, wrong secret, stale and future
 * timestamps are refused; rotation's two signatures both verify; the example receiver
 * deduplicates one event delivered to two endpoints and processes a retried one once.
 */
import {
  ApiError,
  collect,
  FilingClient,
  type Clock,
  type EntityCreatedEvent,
  verify,
  verifyWebhook,
  WEBHOOK_EVENT_TYPE_NAMES,
  OPERATIONAL_EVENT_TYPE_NAMES,
  type WebhookDelivery,
  type WebhookDeliveryAttempt,
  type WebhookDeliveryDetail,
  type WebhookEndpoint,
  type WebhookEndpointWithSecret,
  type WebhookEvent,
  type WebhookEventMap,
  WebhookVerificationError,
} from '@filing/client';
import { SqliteDedupeStore } from '@filing/client/dedupe-sqlite';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import type { Server } from 'node:https';
import { join } from 'node:path';
import { createReceiver } from '../../apps/example-receiver/src/receiver';
import { provisionAccount, provisionOperator } from '../support/auth';
import { startService, type TestService } from '../support/service';
import { makeTestPki, type TestPki } from '../support/tls-certs';
import { type ReceivedRequest, startReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { eventually } from '../support/webhooks';
import { keysOf, shape } from './sdk-support';

const ENDPOINT_FIELDS = {
  id: 1,
  url: 1,
  description: 1,
  event_types: 1,
  enabled: 1,
  disabled_reason: 1,
  rate_limit_per_second: 1,
  created_at: 1,
  updated_at: 1,
  version: 1,
} as const;
const ENDPOINT = shape<WebhookEndpoint>()(ENDPOINT_FIELDS);
const ENDPOINT_WITH_SECRET = shape<WebhookEndpointWithSecret>()({ ...ENDPOINT_FIELDS, secret: 1 });
const DELIVERY = shape<WebhookDelivery>()({
  id: 1,
  event_id: 1,
  event_type: 1,
  endpoint_id: 1,
  status: 1,
  attempt_count: 1,
  last_attempt_at: 1,
  next_attempt_at: 1,
  created_at: 1,
});
const DELIVERY_DETAIL = [...DELIVERY, 'attempts'].sort();
const ATTEMPT = shape<WebhookDeliveryAttempt>()({ attempted_at: 1, status_code: 1, error: 1, duration_ms: 1 });
const ENTITY_CREATED = shape<EntityCreatedEvent>()({
  event_id: 1,
  event_type: 1,
  timestamp: 1,
  entity_id: 1,
  status: 1,
  resource_version: 1,
});

const ON_ENTITY = { event_id: 1, event_type: 1, timestamp: 1, entity_id: 1, status: 1, resource_version: 1 } as const;
const ON_DOCUMENT = { ...ON_ENTITY, document_id: 1, order_id: 1 } as const;
const ON_ORDER = { ...ON_ENTITY, order_id: 1 } as const;
/** Each notification's exact key set, checked against its SDK type by the compiler. */
const PAYLOAD_SHAPES: { [T in keyof WebhookEventMap]: string[] } = {
  'entity.created': shape<WebhookEventMap['entity.created']>()(ON_ENTITY),
  'entity.updated': shape<WebhookEventMap['entity.updated']>()(ON_ENTITY),
  'document.created': shape<WebhookEventMap['document.created']>()(ON_DOCUMENT),
  'document.updated': shape<WebhookEventMap['document.updated']>()(ON_DOCUMENT),
  'document.deleted': shape<WebhookEventMap['document.deleted']>()(ON_DOCUMENT),
  'jurisdiction.created': shape<WebhookEventMap['jurisdiction.created']>()({ ...ON_ENTITY, jurisdiction_id: 1 }),
  'jurisdiction.updated': shape<WebhookEventMap['jurisdiction.updated']>()({ ...ON_ENTITY, jurisdiction_id: 1 }),
  'task.created': shape<WebhookEventMap['task.created']>()({ ...ON_ENTITY, task_id: 1 }),
  'order.submitted': shape<WebhookEventMap['order.submitted']>()(ON_ORDER),
  'order.cancelled': shape<WebhookEventMap['order.cancelled']>()(ON_ORDER),
  'order.completed': shape<WebhookEventMap['order.completed']>()(ON_ORDER),
  'webhook_endpoint.disabled': shape<WebhookEventMap['webhook_endpoint.disabled']>()({
    event_id: 1,
    event_type: 1,
    timestamp: 1,
    endpoint_id: 1,
    reason: 1,
    status: 1,
    resource_version: 1,
  }),
  'webhook_endpoint.failing': shape<WebhookEventMap['webhook_endpoint.failing']>()({
    event_id: 1,
    event_type: 1,
    timestamp: 1,
    endpoint_id: 1,
    failing_since: 1,
    resource_version: 1,
  }),
  'webhook_delivery.failed': shape<WebhookEventMap['webhook_delivery.failed']>()({
    event_id: 1,
    event_type: 1,
    timestamp: 1,
    delivery_id: 1,
    endpoint_id: 1,
    failed_event_id: 1,
    failed_event_type: 1,
    resource_version: 1,
  }),
};

const at = (seconds: number): Clock => ({ now: () => seconds * 1000 });

describe('SDK webhooks against the service', () => {
  let pki: TestPki;
  let service: TestService;
  const cleanups: Array<() => Promise<void> | void> = [];

  beforeAll(async () => {
    pki = makeTestPki('SDK');
    service = await startService({
      env: {
        WEBHOOK_CA_FILE: pki.caFile,
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        WEBHOOK_RETRY_DELAYS: '50ms,100ms,200ms,400ms',
        WEBHOOK_TIMEOUT_MS: '2000',
      },
    });
  });
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
    await service?.destroy();
    rmSync(pki.dir, { recursive: true, force: true });
  });

  async function sdk(): Promise<FilingClient> {
    const creds = await provisionAccount(service);
    return new FilingClient({ baseUrl: service.url, clientId: creds.clientId, clientSecret: creds.clientSecret });
  }

  async function recorder(): Promise<WebhookReceiver> {
    const r = await startReceiver(pki);
    cleanups.push(() => r.close());
    return r;
  }

  /** An account with the switch on and one enabled endpoint to `url`. */
  async function subscribed(url: string, client?: FilingClient) {
    const c = client ?? (await sdk());
    const endpoint = await c.webhookEndpoints.create({ url, description: 'SDK test' });
    await c.webhookEndpoints.enable(endpoint.id);
    await c.webhookSettings.update({ notifications_enabled: true });
    return { client: c, endpoint };
  }

  it('manages endpoints, settings and the catalog through typed calls', async () => {
    const client = await sdk();
    const catalog = await client.webhookEventTypes.list();
    expect(catalog.map((t) => t.name)).toEqual(WEBHOOK_EVENT_TYPE_NAMES);
    expect(catalog[0]).toMatchObject({
      name: 'entity.created',
      label: 'New Entity',
      category: 'Entities',
      description: 'An entity was created',
      schema_version: 1,
    });
    expect(Object.keys(catalog[0].schema.properties as object).sort()).toEqual(PAYLOAD_SHAPES['entity.created']);
    await expect(client.webhookSettings.get()).resolves.toEqual({ notifications_enabled: false });
    await expect(client.webhookSettings.update({ notifications_enabled: true })).resolves.toEqual({
      notifications_enabled: true,
    });

    const created = await client.webhookEndpoints.create({
      url: 'https://127.0.0.1:9/sdk',
      event_types: ['order.submitted', 'order.completed'],
    });
    expect(keysOf(created)).toEqual(ENDPOINT_WITH_SECRET);
    expect(created).toMatchObject({
      enabled: false,
      disabled_reason: 'manual',
      description: null,
      event_types: ['order.submitted', 'order.completed'],
      version: 0,
    });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    const got = await client.webhookEndpoints.get(created.id);
    expect(keysOf(got)).toEqual(ENDPOINT);
    await expect(client.webhookEndpoints.secret(created.id)).resolves.toEqual({ secret: created.secret });

    const patched = await client.webhookEndpoints.update(
      created.id,
      { description: 'Orders', event_types: [] },
      { ifMatch: got.version },
    );
    expect(keysOf(patched)).toEqual(ENDPOINT);
    expect(patched).toMatchObject({ description: 'Orders', event_types: [] });
    await expect(
      client.webhookEndpoints.update(created.id, { description: 'late' }, { ifMatch: got.version }),
    ).rejects.toMatchObject({ status: 412 });

    await expect(client.webhookEndpoints.enable(created.id)).resolves.toMatchObject({
      enabled: true,
      disabled_reason: null,
    });
    await expect(client.webhookEndpoints.disable(created.id)).resolves.toMatchObject({
      enabled: false,
      disabled_reason: 'manual',
    });
    const rotated = await client.webhookEndpoints.rotateSecret(created.id);
    expect(keysOf(rotated)).toEqual(ENDPOINT_WITH_SECRET);
    expect(rotated.secret).not.toBe(created.secret);
    await expect(client.webhookEndpoints.secret(created.id)).resolves.toEqual({ secret: rotated.secret });

    const second = await client.webhookEndpoints.create({ url: 'https://127.0.0.1:9/other' });
    const page = await client.webhookEndpoints.list({ limit: 1 });
    expect(page.data.map((e) => e.id)).toEqual([created.id]);
    expect(page.next_cursor).toEqual(expect.any(String));
    expect((await collect(client.webhookEndpoints.listAll({ limit: 1 }))).map((e) => e.id)).toEqual([
      created.id,
      second.id,
    ]);
    await expect(client.webhookEndpoints.deliveries(created.id)).resolves.toEqual({ data: [], next_cursor: null });

    await expect(client.webhookEndpoints.delete(second.id)).resolves.toBeUndefined();
    await expect(client.webhookEndpoints.get(second.id)).rejects.toMatchObject({ name: 'ApiError', status: 404 });

    const http = (await client.webhookEndpoints.create({ url: 'http://example.com/hook' }).catch((e) => e)) as ApiError;
    expect(http).toBeInstanceOf(ApiError);
    expect(http.status).toBe(400);
    expect(http.fieldError('url')).toMatch(/HTTPS/);
    const unknownType = (await client.webhookEndpoints
      .create({ url: 'https://127.0.0.1:9/x', event_types: ['task.updated' as never] })
      .catch((e) => e)) as ApiError;
    expect(unknownType.errors.map((e) => e.field)).toEqual([expect.stringMatching(/^event_types/)]);
  });

  it('verifies the service’s real deliveries and refuses tampered body, wrong secret, stale and future timestamps', async () => {
    const r = await recorder();
    const { client, endpoint } = await subscribed(r.url);
    const entity = await client.entities.create({ name: 'Webhook LLC', entity_type: 'llc' });
    await client.entities.update(entity.id, { status: 'inactive' });
    const got = await r.waitForEvents(2);

    const events = got.map((req) => {
      const verified = verifyWebhook(req.body, req.headers, endpoint.secret);
      expect(verified.id).toBe(req.headers['webhook-id']);
      expect(verified.payload.event_id).toBe(verified.id);
      return verified.payload;
    });
    const created = events.find((e): e is EntityCreatedEvent => e.event_type === 'entity.created')!;
    expect(keysOf(created)).toEqual(ENTITY_CREATED);
    expect(created).toMatchObject({ entity_id: entity.id, status: 'active' });
    const updated = events.find((e) => e.event_type === 'entity.updated');
    expect(updated).toMatchObject({ entity_id: entity.id, status: 'inactive' });

    const req = got[0];
    const reason = (body: string, headers: ReceivedRequest['headers'], secrets: string | string[], clock?: Clock) => {
      try {
        verify(body, headers, secrets, { clock });
        return 'passed';
      } catch (err) {
        expect(err).toBeInstanceOf(WebhookVerificationError);
        return (err as WebhookVerificationError).reason;
      }
    };
    const sentAt = Number(req.headers['webhook-timestamp']);
    expect(reason(req.body, req.headers, endpoint.secret)).toBe('passed');
    expect(reason(req.body.replace('"active"', '"dissolved"'), req.headers, endpoint.secret)).toBe(
      'no_matching_signature',
    );
    expect(reason(JSON.stringify(JSON.parse(req.body)), req.headers, endpoint.secret)).toBe(
      req.body === JSON.stringify(JSON.parse(req.body)) ? 'passed' : 'no_matching_signature',
    );
    expect(reason(`${req.body} `, req.headers, endpoint.secret)).toBe('no_matching_signature');
    const other = await client.webhookEndpoints.create({ url: 'https://127.0.0.1:9/other' });
    expect(reason(req.body, req.headers, other.secret)).toBe('no_matching_signature');
    expect(reason(req.body, { ...req.headers, 'webhook-id': got[1].headers['webhook-id'] }, endpoint.secret)).toBe(
      'no_matching_signature',
    );
    expect(reason(req.body, req.headers, endpoint.secret, at(sentAt + 300))).toBe('passed');
    expect(reason(req.body, req.headers, endpoint.secret, at(sentAt + 301))).toBe('timestamp_too_old');
    expect(reason(req.body, req.headers, endpoint.secret, at(sentAt - 301))).toBe('timestamp_too_new');
    const { 'webhook-signature': _sig, ...unsigned } = req.headers;
    expect(reason(req.body, unsigned, endpoint.secret)).toBe('missing_header');

    // The delivery log through the SDK, typed.
    const deliveries = await eventually(async () => {
      const page = await client.webhookEndpoints.deliveries(endpoint.id, { status: 'delivered' });
      return page.data.length === 2 ? page.data : undefined;
    });
    deliveries.forEach((d) => expect(keysOf(d)).toEqual(DELIVERY));
    expect(new Set(deliveries.map((d) => d.event_id))).toEqual(new Set(events.map((e) => e.event_id)));
    const detail: WebhookDeliveryDetail = await client.webhookDeliveries.get(deliveries[0].id);
    expect(keysOf(detail)).toEqual(DELIVERY_DETAIL);
    expect(detail.attempts).toHaveLength(1);
    expect(keysOf(detail.attempts[0])).toEqual(ATTEMPT);
    expect(detail.attempts[0].status_code).toBe(200);
  });

  it('all eleven notifications verify and match their SDK payload types exactly', async () => {
    const r = await recorder();
    const { client, endpoint } = await subscribed(r.url);
    const entity = await client.entities.create({ name: 'Eleven LLC', entity_type: 'llc' });
    await client.entities.update(entity.id, { status: 'inactive' });
    const jurisdiction = await client.jurisdictions.create({
      entity_id: entity.id,
      code: 'US-DE',
      registration_type: 'domestic',
    });
    await client.jurisdictions.update(jurisdiction.id, { status: 'active' });
    const task = await client.tasks.create({ entity_id: entity.id, title: 'Sign' });
    const cancelled = await client.orders.create({ entity_id: entity.id, order_type: 'amendment' });
    await client.orders.cancel(cancelled.id, { reason: 'changed our mind' });
    const completed = await client.orders.create({ entity_id: entity.id, order_type: 'formation' });
    const operator = await provisionOperator(service);
    const res = await fetch(`${service.url}/internal-api/v1/orders/${completed.id}/complete`, {
      method: 'POST',
      headers: { authorization: `Bearer ${operator.token}` },
    });
    expect(res.status).toBe(200);
    const doc = await client.documents.create({
      entity_id: entity.id,
      order_id: completed.id,
      title: 'Certificate',
      document_type: 'certificate',
      content_type: 'text/plain',
      content_base64: Buffer.from('certified').toString('base64'),
    });
    await client.documents.update(doc.id, { title: 'Certificate (final)' });
    await client.documents.delete(doc.id);

    const got = await r.waitForEvents(12); // two orders: two order.submitted
    const events = new Map<string, WebhookEvent>();
    for (const req of got) {
      const event = verify(req.body, req.headers, endpoint.secret);
      expect(event.event_id).toBe(req.headers['webhook-id']);
      events.set(event.event_type, event);
    }
    // Everything but the operational notification, which an endpoint gets only by naming it.
    expect([...events.keys()].sort()).toEqual(
      WEBHOOK_EVENT_TYPE_NAMES.filter((t) => !OPERATIONAL_EVENT_TYPE_NAMES.includes(t)).sort(),
    );
    for (const [type, event] of events)
      expect([type, keysOf(event)]).toEqual([type, PAYLOAD_SHAPES[type as keyof typeof PAYLOAD_SHAPES]]);

    const base = { entity_id: entity.id };
    expect(events.get('entity.created')).toMatchObject({ ...base, status: 'active' });
    expect(events.get('entity.updated')).toMatchObject({ ...base, status: 'inactive' });
    expect(events.get('jurisdiction.created')).toMatchObject({
      ...base,
      jurisdiction_id: jurisdiction.id,
      status: 'pending',
    });
    expect(events.get('jurisdiction.updated')).toMatchObject({
      ...base,
      jurisdiction_id: jurisdiction.id,
      status: 'active',
    });
    expect(events.get('task.created')).toMatchObject({ ...base, task_id: task.id, status: 'open' });
    expect(events.get('order.submitted')).toMatchObject({
      ...base,
      order_id: expect.stringMatching(new RegExp(`^(${cancelled.id}|${completed.id})$`)),
      status: 'submitted',
    });
    expect(events.get('order.cancelled')).toMatchObject({ ...base, order_id: cancelled.id, status: 'cancelled' });
    expect(events.get('order.completed')).toMatchObject({ ...base, order_id: completed.id, status: 'completed' });
    expect(events.get('document.created')).toMatchObject({
      ...base,
      document_id: doc.id,
      order_id: completed.id,
      status: 'available',
    });
    expect(events.get('document.updated')).toMatchObject({
      ...base,
      document_id: doc.id,
      order_id: completed.id,
      status: 'available',
    });
    expect(events.get('document.deleted')).toMatchObject({
      ...base,
      document_id: doc.id,
      order_id: completed.id,
      status: 'deleted',
    });
  });

  it('during a rotation both signatures verify, with the old secret or the new one', async () => {
    const r = await recorder();
    const { client, endpoint } = await subscribed(r.url);
    const rotated = await client.webhookEndpoints.rotateSecret(endpoint.id);
    await client.entities.create({ name: 'Rotation LLC', entity_type: 'llc' });
    const [req] = await r.waitFor(1);
    expect(String(req.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verify(req.body, req.headers, endpoint.secret)).toMatchObject({ event_type: 'entity.created' });
    expect(verify(req.body, req.headers, rotated.secret)).toMatchObject({ event_type: 'entity.created' });
    expect(verify(req.body, req.headers, [rotated.secret, endpoint.secret])).toMatchObject({
      event_type: 'entity.created',
    });
  });

  it('redelivers a failed delivery with the same webhook-id', async () => {
    const r = await recorder();
    r.script({ status: 404 });
    const { client, endpoint } = await subscribed(r.url);
    await client.entities.create({ name: 'Redeliver LLC', entity_type: 'llc' });
    const [failed] = await eventually(async () => {
      const page = await client.webhookEndpoints.deliveries(endpoint.id, { status: 'failed' });
      return page.data.length === 1 ? page.data : undefined;
    });
    const again: WebhookDeliveryDetail = await client.webhookDeliveries.redeliver(failed.id);
    expect(keysOf(again)).toEqual(DELIVERY_DETAIL);
    expect(again.id).toBe(failed.id);
    const [first, second] = await r.waitFor(2);
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(verify(second.body, second.headers, endpoint.secret)).toMatchObject({ event_id: failed.event_id });
    await eventually(async () =>
      (await client.webhookDeliveries.get(failed.id)).status === 'delivered' ? true : undefined,
    );
  });

  it('the example receiver verifies, deduplicates one event sent to two endpoints, and processes a retried one once', async () => {
    const store = new SqliteDedupeStore({ database: join(pki.dir, 'dedupe.db') });
    const lines: string[] = [];
    const processed: WebhookEvent[] = [];
    let failNext = 0;
    // The receiver holds the secrets of both endpoints; they are set once the endpoints exist.
    const secrets: string[] = [];
    const server = createReceiver({
      secrets,
      store,
      tls: { cert: pki.cert, key: pki.key },
      log: (line) => lines.push(line),
      onEvent: (event) => {
        if (failNext > 0) {
          failNext -= 1;
          throw new Error('downstream unavailable');
        }
        processed.push(event);
      },
    }) as Server;
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanups.push(() => {
      server.closeAllConnections();
      server.close();
      store.close();
    });
    const url = `https://127.0.0.1:${(server.address() as { port: number }).port}/webhooks`;

    const client = await sdk();
    const a = await client.webhookEndpoints.create({ url });
    const b = await client.webhookEndpoints.create({ url: `${url}?copy=2` });
    secrets.push(a.secret, b.secret);
    await client.webhookEndpoints.enable(a.id);
    await client.webhookEndpoints.enable(b.id);
    await client.webhookSettings.update({ notifications_enabled: true });

    // One event, two endpoints, one webhook-id: processed once, both deliveries succeed.
    const first = await client.entities.create({ name: 'Twice LLC', entity_type: 'llc' });
    const delivered = (endpointId: string) =>
      eventually(async () => {
        const page = await client.webhookEndpoints.deliveries(endpointId, { status: 'delivered' });
        return page.data.length >= processed.length && page.data.length > 0 ? page.data : undefined;
      });
    await delivered(a.id);
    await delivered(b.id);
    expect(processed.map((e) => e.event_type)).toEqual(['entity.created']);
    expect(processed[0]).toMatchObject({ entity_id: first.id });
    expect(lines).toEqual(
      expect.arrayContaining([
        `processed ${processed[0].event_id} entity.created`,
        expect.stringMatching(/^duplicate /),
      ]),
    );

    // The handler fails once: 500, the service retries, the retry is processed (once).
    await client.webhookEndpoints.disable(b.id);
    failNext = 1;
    const second = await client.entities.create({ name: 'Retry LLC', entity_type: 'llc' });
    const retried = await eventually(async () => {
      const [d] = (await client.webhookEndpoints.deliveries(a.id, { status: 'delivered' })).data.filter(
        (x) => x.attempt_count > 1,
      );
      return d;
    });
    const detail = await client.webhookDeliveries.get(retried.id);
    expect(detail.attempts.map((x) => x.status_code)).toEqual([500, 200]);
    expect(
      processed.filter((e) => e.event_type === 'entity.created' && 'entity_id' in e && e.entity_id === second.id),
    ).toHaveLength(1);
    expect(lines).toEqual(
      expect.arrayContaining([
        `failed ${retried.event_id}: downstream unavailable`,
        `processed ${retried.event_id} entity.created`,
      ]),
    );
    expect(lines.some((l) => l.startsWith('rejected'))).toBe(false);
  });
});
