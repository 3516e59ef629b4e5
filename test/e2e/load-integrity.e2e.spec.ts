/**
 * Nothing lost under load: 20,000 entity creates from ~96 concurrent writers in bursts of random
 * size, while the projections and the webhook fan-out consume the stream and pause on their own
 * I/O. Every acknowledged entity is listed, every one is delivered to the subscribed endpoint
 * exactly once, and the audit (at teardown) finds the read models equal to a rebuild.
 */
import { rmSync } from 'node:fs';
import { Agent, request } from 'undici';
import { provisionAccount } from '../support/auth';
import { startService, type TestService } from '../support/service';
import { makeTestPki, type TestPki } from '../support/tls-certs';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { apiClient, eventually } from '../support/webhooks';

const V1 = '/external-api/v1';
const CREATES = 20_000;
const WRITERS = 96;

describe.each(['sqlite', 'esdb'] as const)('20,000 creates under concurrent load on the %s store', (eventStore) => {
  let service: TestService;
  let pki: TestPki;
  let receiver: WebhookReceiver;
  let token: string;

  beforeAll(async () => {
    pki = makeTestPki();
    receiver = await startReceiver(pki);
    service = await startService({
      eventStore,
      env: { WEBHOOK_CA_FILE: pki.caFile, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_TIMEOUT_MS: '30000' },
    });
    ({ token } = await provisionAccount(service));
    const api = apiClient(service.url, token);
    const endpoint = (
      await api('POST', `${V1}/webhook-endpoints`, { url: receiver.url, event_types: ['entity.created'] })
    ).body;
    expect((await api('POST', `${V1}/webhook-endpoints/${endpoint.id}/enable`)).status).toBe(200);
    expect((await api('PUT', `${V1}/webhook-settings`, { notifications_enabled: true })).status).toBe(200);
  }, 60_000);

  afterAll(async () => {
    await service?.destroy();
    await receiver?.close();
    if (pki) rmSync(pki.dir, { recursive: true, force: true });
    // The teardown audit rebuilds every read model from ~140k events: minutes on a loaded machine.
  }, 300_000);

  it('every acknowledged entity is listed and delivered exactly once', async () => {
    const dispatcher = new Agent({ connections: WRITERS, pipelining: 1 });
    const created: string[] = [];
    let next = 0;
    const post = async (i: number): Promise<void> => {
      const res = await request(`${service.url}${V1}/entities`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `Load ${i}`, entity_type: 'llc' }),
        dispatcher,
      });
      expect(res.statusCode).toBe(201);
      created.push(((await res.body.json()) as { id: string }).id);
    };
    // Each writer fires a burst of 1–12 creates at once, waits for them, pauses 0–5 ms, again.
    await Promise.all(
      Array.from({ length: WRITERS }, async () => {
        while (next < CREATES) {
          const burst = Math.min(CREATES - next, 1 + Math.floor(Math.random() * 12));
          const indexes = Array.from({ length: burst }, () => next++);
          await Promise.all(indexes.map(post));
          await new Promise((r) => setTimeout(r, Math.random() * 5));
        }
      }),
    );
    await dispatcher.close();
    expect(created).toHaveLength(CREATES);

    // Listed: every entity, once, paging through the whole collection.
    const listed: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Response = await fetch(`${service.url}${V1}/entities?limit=200${cursor ? `&cursor=${cursor}` : ''}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const body = (await page.json()) as { data: Array<{ id: string }>; next_cursor: string | null };
      listed.push(...body.data.map((e) => e.id));
      cursor = body.next_cursor;
    } while (cursor);
    expect(listed).toHaveLength(CREATES);
    expect(new Set(listed)).toEqual(new Set(created));

    // Delivered: one request per entity, each answered 200, none twice.
    await eventually(() => (receiver.requests.length >= CREATES ? true : undefined), 200);
    await new Promise((r) => setTimeout(r, 500)); // a duplicate would show itself here
    const perEntity = new Map<string, number>();
    for (const r of receiver.requests) {
      expect(r.json.event_type).toBe('entity.created');
      perEntity.set(String(r.json.entity_id), (perEntity.get(String(r.json.entity_id)) ?? 0) + 1);
    }
    expect(perEntity.size).toBe(CREATES);
    expect([...perEntity.values()].filter((n) => n !== 1)).toEqual([]);
    expect(new Set(perEntity.keys())).toEqual(new Set(created));
  }, 600_000);
});
