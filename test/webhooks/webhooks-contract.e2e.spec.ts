/**
 * Issue 50 items 3–4 end to end (sqlite): every payload of the eleven types, as a real receiver
 * gets it, validates against the JSON Schema `GET /webhook-event-types` publishes (ajv, 2020-12),
 * and its `resource_version` is the resource's `version` as the API answered right after the
 * write; a replay brings an endpoint created after 300 notifications exactly the window's
 * matching ones, with their original ids, while its live deliveries keep flowing first.
 */
import { provisionAccount, provisionOperator } from '../support/auth';
import { notificationRound } from '../support/notifications';
import { expectValid, publishedValidators } from '../support/payload-schemas';
import type { TestService } from '../support/service';
import { webhookHarness } from '../support/webhook-harness';
import type { ReceivedRequest } from '../support/webhook-receiver';
import { apiClient, type Api, eventually } from '../support/webhooks';

const V1 = '/external-api/v1';

describe('the published payload contract and replay (sqlite)', () => {
  const h = webhookHarness({});
  let service: TestService;
  let operator: Api;
  const receiver = () => h.receiver();

  beforeAll(async () => {
    service = h.service;
    operator = apiClient(service.url, (await provisionOperator(service)).token);
  });

  async function ok(api: Api, method: string, path: string, body?: unknown) {
    const res = await api(method, path, body);
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { id: string; version: number };
  }

  async function endpoint(api: Api, body: object): Promise<string> {
    const created = await ok(api, 'POST', `${V1}/webhook-endpoints`, body);
    await ok(api, 'POST', `${V1}/webhook-endpoints/${created.id}/enable`);
    return created.id;
  }

  it('delivers each of the eleven types valid against its published schema, resource_version = the version right after', async () => {
    const r = await receiver();
    const acc = await provisionAccount(service);
    const api = apiClient(service.url, acc.token);
    await endpoint(api, { url: r.url });
    await ok(api, 'PUT', `${V1}/webhook-settings`, { notifications_enabled: true });
    const validators = await publishedValidators(api);

    // Each write's answer is the resource right after its event: `${type} ${id}` → that version.
    const expected = new Map<string, number>();
    const note = (type: string, resource: { id: string; version: number }) =>
      expected.set(`${type} ${resource.id}`, resource.version);
    const entity = await ok(api, 'POST', `${V1}/entities`, { name: 'Contract LLC', entity_type: 'llc' });
    note('entity.created', entity);
    note('entity.updated', await ok(api, 'PATCH', `${V1}/entities/${entity.id}`, { status: 'inactive' }));
    const j = await ok(api, 'POST', `${V1}/jurisdictions`, {
      entity_id: entity.id,
      code: 'US-DE',
      registration_type: 'domestic',
    });
    note('jurisdiction.created', j);
    note('jurisdiction.updated', await ok(api, 'PATCH', `${V1}/jurisdictions/${j.id}`, { status: 'active' }));
    note('task.created', await ok(api, 'POST', `${V1}/tasks`, { entity_id: entity.id, title: 'File it' }));
    const doc = await ok(api, 'POST', `${V1}/documents`, {
      entity_id: entity.id,
      title: 'Certificate',
      document_type: 'certificate',
      content_type: 'text/plain',
      content_base64: Buffer.from('certificate').toString('base64'),
    });
    note('document.created', doc);
    const updatedDoc = await ok(api, 'PATCH', `${V1}/documents/${doc.id}`, { title: 'Certificate (signed)' });
    note('document.updated', updatedDoc);
    expect((await api('DELETE', `${V1}/documents/${doc.id}`)).status).toBe(204);
    // Deleted: no GET answers it any more; its delete is the stream's next revision.
    expected.set(`document.deleted ${doc.id}`, updatedDoc.version + 1);
    const cancelled = await ok(api, 'POST', `${V1}/orders`, { entity_id: entity.id, order_type: 'annual_report' });
    note('order.submitted', cancelled);
    note('order.cancelled', await ok(api, 'POST', `${V1}/orders/${cancelled.id}/cancel`, { reason: 'no' }));
    const completed = await ok(api, 'POST', `${V1}/orders`, { entity_id: entity.id, order_type: 'formation' });
    note('order.submitted', completed);
    note('order.completed', await ok(operator, 'POST', `/internal-api/v1/orders/${completed.id}/complete`));

    const got = await r.waitForEvents(12);
    const types = new Set<string>();
    for (const req of got) {
      expectValid(validators, req.json);
      const type = String(req.json.event_type);
      types.add(type);
      const id = Object.entries(req.json).find(([k]) => k === `${type.split('.')[0]}_id`)![1];
      expect([type, req.json.resource_version]).toEqual([type, expected.get(`${type} ${String(id)}`)]);
    }
    expect(types.size).toBe(11);
  });

  it('replays the matching notifications of a window to an endpoint made after them, with their original ids, live ones first', async () => {
    const acc = await provisionAccount(service);
    const api = apiClient(service.url, acc.token);
    await ok(api, 'PUT', `${V1}/webhook-settings`, { notifications_enabled: true });
    // 25 rounds of the twelve notifications: 300. The window: rounds 5–19.
    let since = '';
    let until = '';
    for (let n = 0; n < 25; n++) {
      if (n === 5) since = new Date().toISOString();
      if (n === 20) until = new Date().toISOString();
      await notificationRound(api, operator, n);
    }
    const selection = ['entity.created', 'order.submitted'];
    const history: Array<{ event_id: string; event_type: string; occurred_at: string }> = [];
    for (let cursor = ''; ;) {
      const page = await api('GET', `${V1}/events?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
      history.push(...page.body.data);
      if (!page.body.next_cursor) break;
      cursor = encodeURIComponent(page.body.next_cursor);
    }
    expect(history).toHaveLength(300);
    const expected = history
      .filter((e) => selection.includes(e.event_type) && e.occurred_at >= since && e.occurred_at < until)
      .map((e) => e.event_id);
    expect(expected).toHaveLength(45);

    const r = await receiver();
    const id = await endpoint(api, { url: r.url, event_types: selection, rate_limit_per_second: 20 });
    const key = { 'idempotency-key': `replay-${id}` };
    const replay = await api('POST', `${V1}/webhook-endpoints/${id}/replay`, { since, until }, key);
    expect([replay.status, replay.body]).toEqual([202, { deliveries: 45 }]);
    // The same key answers the same, and schedules nothing more.
    const again = await api('POST', `${V1}/webhook-endpoints/${id}/replay`, { since, until }, key);
    expect([again.status, again.body]).toEqual([202, { deliveries: 45 }]);
    // A live one while the replay drains (20/s: over 2 s): it goes before the replay's remaining ones.
    const live = await ok(api, 'POST', `${V1}/entities`, { name: 'Live LLC', entity_type: 'llc' });

    const got = await r.waitForEvents(46);
    const ids = (reqs: ReceivedRequest[]) => reqs.map((q) => String(q.headers['webhook-id']));
    for (const q of got) expect(q.headers['webhook-id']).toBe(q.json.event_id);
    const liveAt = got.findIndex((q) => q.json.entity_id === live.id && q.json.event_type === 'entity.created');
    expect(liveAt).toBeGreaterThanOrEqual(0);
    expect(liveAt).toBeLessThan(got.length - 1);
    const replayed = got.filter((_, i) => i !== liveAt);
    expect(ids(replayed).sort()).toEqual([...expected].sort());
    // Exactly these: the deliveries log holds 45 of the replay and one live, nothing else comes.
    const log = await eventually(async () => {
      const list = (await api('GET', `${V1}/webhook-endpoints/${id}/deliveries?limit=100`)).body.data;
      return list.every((d: { status: string }) => d.status === 'delivered') ? list : undefined;
    });
    expect(log).toHaveLength(46);
  }, 120_000);

  it('refuses a window that ends before it starts, naming until', async () => {
    const acc = await provisionAccount(service);
    const api = apiClient(service.url, acc.token);
    const r = await receiver();
    const id = await endpoint(api, { url: r.url });
    const res = await api('POST', `${V1}/webhook-endpoints/${id}/replay`, {
      since: '2026-11-22T10:00:00.000Z',
      until: '2026-11-22T09:00:00.000Z',
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toMatch(/until/);
  });
});
