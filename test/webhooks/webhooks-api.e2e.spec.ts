/** The webhook management API (CONTRACT.md §4) over real HTTP, and the address guard at creation. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { provisionAccount, provisionOperator } from '../support/auth';
import { startService, type TestService } from '../support/service';
import { apiClient, type Api } from '../support/webhooks';

const V1 = '/external-api/v1';

describe('webhook endpoints API', () => {
  let service: TestService;
  let api: Api;
  let other: Api;

  beforeAll(async () => {
    service = await startService({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
    api = apiClient(service.url, (await provisionAccount(service)).token);
    other = apiClient(service.url, (await provisionAccount(service)).token);
  });
  afterAll(async () => {
    await service?.destroy();
  });

  it('lists the event-type catalog', async () => {
    const res = await api('GET', `${V1}/webhook-event-types`);
    expect(res.status).toBe(200);
    // The eleven, then the three operational ones; each with its payload's schema (issue 50).
    expect(res.body.data).toHaveLength(14);
    expect(res.body.data[0]).toMatchObject({ name: 'entity.created', label: 'New Entity', category: 'Entities' });
    expect(res.body.data[7]).toMatchObject({ name: 'task.created', label: 'New Task Instance', category: 'Tasks' });
    for (const t of res.body.data) {
      expect(Object.keys(t).sort()).toEqual(['category', 'description', 'label', 'name', 'schema', 'schema_version']);
      expect(t.schema).toMatchObject({ title: t.name, type: 'object', additionalProperties: false });
    }
  });

  it('creates an endpoint disabled, with a whsec_ secret shown again only via /secret', async () => {
    const res = await api('POST', `${V1}/webhook-endpoints`, {
      url: 'https://127.0.0.1:9/a',
      description: 'Orders',
      event_types: ['order.submitted'],
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      url: 'https://127.0.0.1:9/a',
      description: 'Orders',
      event_types: ['order.submitted'],
      enabled: false,
      // Created disabled: it waits for a user to enable it.
      disabled_reason: 'manual',
      rate_limit_per_second: null,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.any(String),
      version: 0,
    });
    expect(res.headers.get('location')).toBe(`${V1}/webhook-endpoints/${res.body.id}`);
    expect(res.headers.get('etag')).toBe('"0"');
    const got = await api('GET', `${V1}/webhook-endpoints/${res.body.id}`);
    expect(got.body).not.toHaveProperty('secret');
    const secret = await api('GET', `${V1}/webhook-endpoints/${res.body.id}/secret`);
    expect(secret.body).toEqual({ secret: res.body.secret });
    expect(secret.headers.get('cache-control')).toBe('no-store');
  });

  it('refuses http: with a message saying HTTPS is required, and other bad input, field by field', async () => {
    const http = await api('POST', `${V1}/webhook-endpoints`, { url: 'http://example.com/hook' });
    expect(http.status).toBe(400);
    expect(http.body.errors).toEqual([{ field: 'url', message: expect.stringMatching(/HTTPS/) }]);
    const bad = await api('POST', `${V1}/webhook-endpoints`, {
      url: '/relative',
      event_types: ['entity.created', 'task.updated'],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([
      { field: 'url', message: expect.stringMatching(/absolute https/) },
      { field: 'event_types', message: expect.stringMatching(/task\.updated/) },
    ]);
    expect((await api('POST', `${V1}/webhook-endpoints`, { url: 'https://a.example', extra: 1 })).status).toBe(400);
    for (const limit of [0, 1001, 2.5, '5', true, -1]) {
      const refused = await api('POST', `${V1}/webhook-endpoints`, {
        url: 'https://127.0.0.1:9/limit',
        rate_limit_per_second: limit,
      });
      expect([limit, refused.status, refused.body.errors]).toEqual([
        limit,
        400,
        [
          {
            field: 'rate_limit_per_second',
            message: 'rate_limit_per_second must be a whole number from 1 to 1000, or null for no limit',
          },
        ],
      ]);
    }
    expect((await api('POST', `${V1}/webhook-endpoints`, {})).status).toBe(400);
  });

  it('updates, enables, disables and deletes, with ETag and If-Match', async () => {
    const { body: ep } = await api('POST', `${V1}/webhook-endpoints`, { url: 'https://127.0.0.1:9/b' });
    const patched = await api(
      'PATCH',
      `${V1}/webhook-endpoints/${ep.id}`,
      { description: 'new', event_types: ['entity.updated'] },
      { 'if-match': '"0"' },
    );
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual(
      expect.objectContaining({ description: 'new', event_types: ['entity.updated'], version: 1 }),
    );
    expect(
      (await api('PATCH', `${V1}/webhook-endpoints/${ep.id}`, { description: 'x' }, { 'if-match': '"0"' })).status,
    ).toBe(412);
    expect((await api('PATCH', `${V1}/webhook-endpoints/${ep.id}`, { url: 'http://x.example' })).status).toBe(400);
    // null is not a way to say "every type" ([] is) nor "no URL": named, and nothing changes.
    for (const field of ['event_types', 'url']) {
      const refused = await api('PATCH', `${V1}/webhook-endpoints/${ep.id}`, { [field]: null });
      expect([refused.status, refused.body.errors.map((e: { field: string }) => e.field)]).toEqual([400, [field]]);
    }
    const nullTypes = await api('POST', `${V1}/webhook-endpoints`, { url: 'https://127.0.0.1:9/n', event_types: null });
    expect([nullTypes.status, nullTypes.body.errors.map((e: { field: string }) => e.field)]).toEqual([
      400,
      ['event_types'],
    ]);
    expect((await api('GET', `${V1}/webhook-endpoints/${ep.id}`)).body).toMatchObject({
      event_types: ['entity.updated'],
      version: 1,
    });
    const refused = await api('POST', `${V1}/webhook-endpoints/${ep.id}/enable`, { enabled: false });
    expect([refused.status, refused.body.errors]).toEqual([
      400,
      [{ field: 'enabled', message: 'enabled is not accepted: this operation takes no body' }],
    ]);
    const enabled = await api('POST', `${V1}/webhook-endpoints/${ep.id}/enable`, {});
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ enabled: true, disabled_reason: null });
    expect(enabled.headers.get('etag')).toBe('"2"');
    const disabled = await api('POST', `${V1}/webhook-endpoints/${ep.id}/disable`);
    expect(disabled.body).toMatchObject({ enabled: false, disabled_reason: 'manual' });
    expect((await api('DELETE', `${V1}/webhook-endpoints/${ep.id}`)).status).toBe(204);
    expect((await api('GET', `${V1}/webhook-endpoints/${ep.id}`)).status).toBe(404);
    expect((await api('POST', `${V1}/webhook-endpoints/${ep.id}/enable`)).status).toBe(404);
  });

  it('sets rate_limit_per_second on create and PATCH (null: none), and names it when it is not 1–1,000', async () => {
    const { body: ep } = await api('POST', `${V1}/webhook-endpoints`, {
      url: 'https://127.0.0.1:9/rate',
      rate_limit_per_second: 5,
    });
    expect(ep).toMatchObject({ rate_limit_per_second: 5, version: 0 });
    const patched = await api('PATCH', `${V1}/webhook-endpoints/${ep.id}`, { rate_limit_per_second: 1000 });
    expect(patched.body).toMatchObject({ rate_limit_per_second: 1000, version: 1 });
    expect((await api('PATCH', `${V1}/webhook-endpoints/${ep.id}`, { description: 'kept' })).body).toMatchObject({
      rate_limit_per_second: 1000,
    });
    expect(
      (await api('PATCH', `${V1}/webhook-endpoints/${ep.id}`, { rate_limit_per_second: null })).body,
    ).toMatchObject({ rate_limit_per_second: null, version: 3 });
    const tooFast = await api('PATCH', `${V1}/webhook-endpoints/${ep.id}`, { rate_limit_per_second: 1001 });
    expect([tooFast.status, tooFast.body.errors.map((e: { field: string }) => e.field)]).toEqual([
      400,
      ['rate_limit_per_second'],
    ]);
    expect((await api('GET', `${V1}/webhook-endpoints/${ep.id}`)).body).toMatchObject({
      rate_limit_per_second: null,
      version: 3,
    });
  });

  it('rotates the secret', async () => {
    const { body: ep } = await api('POST', `${V1}/webhook-endpoints`, { url: 'https://127.0.0.1:9/c' });
    const rotated = await api('POST', `${V1}/webhook-endpoints/${ep.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(ep.secret);
    expect((await api('GET', `${V1}/webhook-endpoints/${ep.id}/secret`)).body.secret).toBe(rotated.body.secret);
  });

  it('replays a create or rotation sent again with its Idempotency-Key without the secret, which stays out of the key store', async () => {
    const create = () =>
      api('POST', `${V1}/webhook-endpoints`, { url: 'https://127.0.0.1:9/i' }, { 'idempotency-key': 'create-i' });
    const first = await create();
    const again = await create();
    expect([again.status, again.headers.get('idempotent-replayed')]).toEqual([201, 'true']);
    const { secret, ...rest } = first.body;
    expect(again.body).toEqual(rest);
    const rotate = () =>
      api('POST', `${V1}/webhook-endpoints/${rest.id}/rotate-secret`, undefined, { 'idempotency-key': 'rotate-i' });
    const { secret: newSecret, ...rotatedRest } = (await rotate()).body;
    expect((await rotate()).body).toEqual(rotatedRest);
    // The secret is read where it lives; the key store holds neither.
    expect((await api('GET', `${V1}/webhook-endpoints/${rest.id}/secret`)).body.secret).toBe(newSecret);
    const records = (await service.app.get<EventStore>(EVENT_STORE).readAll()).filter((e) =>
      e.type.startsWith('idempotency.'),
    );
    expect(records.filter((e) => e.type === 'idempotency.ResponseRecorded')).toHaveLength(2);
    const text = JSON.stringify(records.map((e) => [e.data, e.metadata]));
    expect([text.includes(secret), text.includes(newSecret)]).toEqual([false, false]);
  });

  it('a rotation refused with a stale If-Match changes nothing: no new secret in the stream', async () => {
    const { body: ep } = await api('POST', `${V1}/webhook-endpoints`, { url: 'https://127.0.0.1:9/r' });
    const store = service.app.get<EventStore>(EVENT_STORE);
    const rotations = async () =>
      (await store.readStream(`webhookendpoint-${ep.id}`)).filter((e) => e.type === 'webhooks.EndpointSecretRotated');
    const refused = await api('POST', `${V1}/webhook-endpoints/${ep.id}/rotate-secret`, undefined, {
      'if-match': '"7"',
    });
    expect(refused.status).toBe(412);
    expect(await rotations()).toEqual([]);
    expect((await api('GET', `${V1}/webhook-endpoints/${ep.id}/secret`)).body.secret).toBe(ep.secret);
    expect(
      (await api('POST', `${V1}/webhook-endpoints/${ep.id}/rotate-secret`, undefined, { 'if-match': '"0"' })).status,
    ).toBe(200);
    expect(await rotations()).toHaveLength(1);
  });

  it('keeps each signing secret only sealed in its key stream: never in its own events, in plaintext, or in a file in DATA_DIR', async () => {
    const { body: ep } = await api('POST', `${V1}/webhook-endpoints`, { url: 'https://127.0.0.1:9/s' });
    const rotated = (await api('POST', `${V1}/webhook-endpoints/${ep.id}/rotate-secret`)).body.secret as string;
    const store = service.app.get<EventStore>(EVENT_STORE);
    const events = await store.readStream(`webhookendpoint-${ep.id}`);
    expect(events.map((e) => [e.type, e.data.secret_sealed])).toEqual([
      ['webhooks.EndpointCreated', undefined],
      ['webhooks.EndpointSecretRotated', undefined],
    ]);
    const keys = await store.readStream(`webhookendpointkey-${ep.id}`);
    expect(keys.map((e) => [e.type, e.data.secret_fingerprint, e.data.secret_sealed])).toEqual([
      ['webhooks.EndpointSecretStored', events[0].data.secret_fingerprint, expect.stringMatching(/^v1\.[0-9a-f]{8}\./)],
      ['webhooks.EndpointSecretStored', events[1].data.secret_fingerprint, expect.stringMatching(/^v1\.[0-9a-f]{8}\./)],
    ]);
    const everything = JSON.stringify(
      (await service.app.get<EventStore>(EVENT_STORE).readAll({ maxCount: 100_000 })).map((e) => [e.data, e.metadata]),
    );
    for (const secret of [ep.secret, rotated]) {
      expect(everything.includes(secret)).toBe(false);
      expect(everything.includes(secret.slice('whsec_'.length))).toBe(false);
    }
    expect(readdirSync(service.dataDir)).not.toContain('webhook-secrets.db');
    for (const file of readdirSync(service.dataDir).filter((f) => !statSync(join(service.dataDir, f)).isDirectory())) {
      expect([file, readFileSync(join(service.dataDir, file)).includes(rotated)]).toEqual([file, false]);
    }
  });

  it("answers another account's endpoint as missing, and lists only the account's own", async () => {
    const { body: ep } = await api('POST', `${V1}/webhook-endpoints`, { url: 'https://127.0.0.1:9/d' });
    for (const [method, path] of [
      ['GET', ''],
      ['GET', '/secret'],
      ['GET', '/deliveries'],
      ['POST', '/enable'],
      ['POST', '/rotate-secret'],
      ['DELETE', ''],
    ] as const) {
      expect((await other(method, `${V1}/webhook-endpoints/${ep.id}${path}`)).status).toBe(404);
    }
    expect((await other('PATCH', `${V1}/webhook-endpoints/${ep.id}`, { description: 'x' })).status).toBe(404);
    const mine = await api('GET', `${V1}/webhook-endpoints`);
    expect(mine.body.data.map((e: { id: string }) => e.id)).toContain(ep.id);
    expect((await other('GET', `${V1}/webhook-endpoints`)).body.data).toEqual([]);
  });

  it('pages the endpoint list oldest first', async () => {
    const a = apiClient(service.url, (await provisionAccount(service)).token);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await a('POST', `${V1}/webhook-endpoints`, { url: `https://127.0.0.1:9/p${i}` })).body.id);
    const first = await a('GET', `${V1}/webhook-endpoints?limit=2`);
    expect(first.body.data.map((e: { id: string }) => e.id)).toEqual(ids.slice(0, 2));
    const second = await a('GET', `${V1}/webhook-endpoints?limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body).toEqual({ data: [expect.objectContaining({ id: ids[2] })], next_cursor: null });
    expect((await a('GET', `${V1}/webhook-endpoints?limit=0`)).status).toBe(400);
    expect((await a('GET', `${V1}/webhook-endpoints?cursor=nope`)).status).toBe(400);
  });

  it('keeps the account switch off until turned on, by the account or an operator', async () => {
    const account = await provisionAccount(service);
    const a = apiClient(service.url, account.token);
    expect((await a('GET', `${V1}/webhook-settings`)).body).toEqual({ notifications_enabled: false });
    expect((await a('PUT', `${V1}/webhook-settings`, { notifications_enabled: true })).body).toEqual({
      notifications_enabled: true,
    });
    expect((await a('PUT', `${V1}/webhook-settings`, { notifications_enabled: 'yes' })).status).toBe(400);
    const operator = apiClient(service.url, (await provisionOperator(service)).token);
    const put = await operator('PUT', `/internal-api/v1/accounts/${account.accountId}/webhook-settings`, {
      notifications_enabled: false,
    });
    expect(put).toEqual(expect.objectContaining({ status: 200, body: { notifications_enabled: false } }));
    expect((await a('GET', `${V1}/webhook-settings`)).body).toEqual({ notifications_enabled: false });
    // Routes without parameters refuse them by name rather than ignore them.
    const withQuery = await a('GET', `${V1}/webhook-event-types?limit=5`);
    expect([withQuery.status, withQuery.body.errors]).toEqual([
      400,
      [{ field: 'limit', message: 'limit is not a parameter of this operation' }],
    ]);
    expect((await a('GET', `${V1}/webhook-settings?x=1`)).status).toBe(400);
    // The operator reads the switch too.
    expect((await operator('GET', `/internal-api/v1/accounts/${account.accountId}/webhook-settings`)).body).toEqual({
      notifications_enabled: false,
    });
    expect(
      (await operator('GET', `/internal-api/v1/accounts/0193a000-0000-7000-8000-000000000000/webhook-settings`)).status,
    ).toBe(404);
    expect((await a('GET', `/internal-api/v1/accounts/${account.accountId}/webhook-settings`)).status).toBe(403);
    const missing = await operator(
      'PUT',
      `/internal-api/v1/accounts/0193a000-0000-7000-8000-000000000000/webhook-settings`,
      { notifications_enabled: true },
    );
    expect(missing.status).toBe(404);
    expect(
      (
        await a('PUT', `/internal-api/v1/accounts/${account.accountId}/webhook-settings`, {
          notifications_enabled: true,
        })
      ).status,
    ).toBe(403);
  });
});
