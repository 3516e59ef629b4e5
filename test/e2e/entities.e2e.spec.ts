/**
 * The entities family over real HTTP, on both event stores: every operation and rule of
 * CONTRACT.md §2–§3 for entities, tenant isolation, and a table of bad inputs. The template for
 * the other families' end-to-end specs.
 */
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { encodeCursor, ReferenceChecker, ValidationError } from '@filing/platform';
import { bearer, provisionAccount, type ProvisionedClient } from '../support/auth';
import { startService, type TestService } from '../support/service';

const PROBLEM = 'application/problem+json; charset=utf-8';
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const MISSING_ID = '0193a5b2-0000-7000-8000-000000000000';

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly body: any;
}

interface Entity {
  readonly id: string;
  readonly name: string;
  readonly version: number;
  readonly created_at: string;
  readonly [field: string]: unknown;
}

describe.each(['sqlite', 'esdb'] as const)('entities over HTTP on the %s store', (eventStore) => {
  let service: TestService;
  let store: EventStore;
  /** Writes most tests; `other` never writes (isolation), `lists` owns the filter/pagination data. */
  let owner: ProvisionedClient;
  let other: ProvisionedClient;

  beforeAll(async () => {
    service = await startService({ eventStore });
    store = service.app.get<EventStore>(EVENT_STORE);
    [owner, other] = await Promise.all([provisionAccount(service), provisionAccount(service)]);
  }, 60_000);
  afterAll(async () => service?.destroy());

  /** One request; `body` is sent as JSON unless it is a string (sent as is). */
  async function call(
    client: ProvisionedClient,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Answer> {
    const raw = typeof body === 'string' || body === undefined;
    const res = await fetch(`${service.url}/external-api/v1${path}`, {
      method,
      headers: { ...bearer(client.token), ...(raw ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : raw ? (body as string) : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: Object.fromEntries(res.headers), body: text ? JSON.parse(text) : null };
  }

  async function createEntity(client: ProvisionedClient, fields: Record<string, unknown> = {}): Promise<Entity> {
    const res = await call(client, 'POST', '/entities', { name: 'Acme LLC', entity_type: 'llc', ...fields });
    expect(res.status).toBe(201);
    return res.body as Entity;
  }

  /** Every page of a collection, following next_cursor. */
  async function walk<T>(client: ProvisionedClient, path: string, limit: number): Promise<{ items: T[]; pages: number }> {
    const items: T[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const sep = path.includes('?') ? '&' : '?';
      const res = await call(client, 'GET', `${path}${sep}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(limit);
      items.push(...res.body.data);
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor !== null && pages < 50);
    return { items, pages };
  }

  function expectProblem(res: Answer, status: number, fields?: string[]): void {
    expect({ status: res.status, type: res.headers['content-type'] }).toEqual({ status, type: PROBLEM });
    expect(res.body).toMatchObject({ type: 'about:blank', status, title: expect.any(String), detail: expect.any(String) });
    if (fields) expect((res.body.errors ?? []).map((e: { field: string }) => e.field).sort()).toEqual([...fields].sort());
  }

  describe('create and read', () => {
    it('POST answers 201 with Location, ETag and the entity; GET and the list show it at once', async () => {
      const res = await call(owner, 'POST', '/entities', { name: 'Acme LLC', entity_type: 'llc' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(UUID_V7),
        name: 'Acme LLC',
        entity_type: 'llc',
        status: 'active',
        formation_jurisdiction: null,
        formation_date: null,
        created_at: expect.stringMatching(ISO_MS),
        updated_at: res.body.created_at,
        version: 0,
      });
      expect(res.headers.location).toBe(`/external-api/v1/entities/${res.body.id}`);
      expect(res.headers.etag).toBe('"0"');

      // Read-your-writes: the very next requests see it.
      const got = await fetch(`${service.url}${res.headers.location}`, { headers: bearer(owner.token) });
      expect(got.status).toBe(200);
      expect(got.headers.get('etag')).toBe('"0"');
      expect(await got.json()).toEqual(res.body);
      const list = await call(owner, 'GET', '/entities?limit=200');
      expect(list.body.data).toContainEqual(res.body);
    });

    it('keeps formation jurisdiction and date', async () => {
      const entity = await createEntity(owner, {
        entity_type: 'corporation',
        formation_jurisdiction: 'US-DE',
        formation_date: '2020-02-29',
      });
      expect(entity).toMatchObject({ entity_type: 'corporation', formation_jurisdiction: 'US-DE', formation_date: '2020-02-29' });
      expect((await call(owner, 'GET', `/entities/${entity.id}`)).body).toEqual(entity);
    });

    it('GET answers 400 naming id for a bad UUID and 404 for an unknown one', async () => {
      expectProblem(await call(owner, 'GET', '/entities/not-a-uuid'), 400, ['id']);
      expectProblem(await call(owner, 'GET', `/entities/${MISSING_ID}`), 404);
    });
  });

  describe('list', () => {
    let lister: ProvisionedClient;
    let made: Entity[];

    beforeAll(async () => {
      lister = await provisionAccount(service);
      made = [];
      // One at a time: ids are time-ordered, so this is also the list order.
      for (const [name, entity_type] of [
        ['Alpha Holdings LLC', 'llc'],
        ['beta corp', 'corporation'],
        ['Gamma ALPHA Foundation', 'nonprofit'],
        ['Delta Partners', 'partnership'],
        ['Épsilon Ünïcode', 'llc'],
      ]) {
        made.push(await createEntity(lister, { name, entity_type }));
      }
      const res = await call(lister, 'PATCH', `/entities/${made[1].id}`, { status: 'inactive' });
      expect(res.status).toBe(200);
    });

    const names = (res: Answer) => res.body.data.map((e: Entity) => e.name);

    it('lists the account\'s entities oldest first, 50 by default, with next_cursor null at the end', async () => {
      const res = await call(lister, 'GET', '/entities');
      expect(res.status).toBe(200);
      expect(res.body.next_cursor).toBeNull();
      expect(res.body.data.map((e: Entity) => e.id)).toEqual(made.map((e) => e.id));
    });

    it('filters by status, entity_type and q (case-insensitive name substring), alone and together', async () => {
      expect(names(await call(lister, 'GET', '/entities?status=inactive'))).toEqual(['beta corp']);
      expect(names(await call(lister, 'GET', '/entities?status=active'))).toHaveLength(4);
      expect(names(await call(lister, 'GET', '/entities?entity_type=llc'))).toEqual(['Alpha Holdings LLC', 'Épsilon Ünïcode']);
      expect(names(await call(lister, 'GET', '/entities?q=aLpHa'))).toEqual(['Alpha Holdings LLC', 'Gamma ALPHA Foundation']);
      expect(names(await call(lister, 'GET', `/entities?q=${encodeURIComponent('épsilon ü')}`))).toEqual(['Épsilon Ünïcode']);
      expect(names(await call(lister, 'GET', '/entities?q=alpha&entity_type=nonprofit&status=active'))).toEqual([
        'Gamma ALPHA Foundation',
      ]);
      expect(names(await call(lister, 'GET', '/entities?q=%25'))).toEqual([]); // no LIKE wildcards
    });

    it('pages with opaque cursors: every entity once, in order, across pages', async () => {
      const { items, pages } = await walk<Entity>(lister, '/entities', 2);
      expect(pages).toBe(3);
      expect(items.map((e) => e.id)).toEqual(made.map((e) => e.id));
      const filtered = await walk<Entity>(lister, '/entities?status=active', 1);
      expect(filtered.items.map((e) => e.name)).toEqual(made.filter((_, i) => i !== 1).map((e) => e.name));
      expect((await call(lister, 'GET', '/entities?limit=200')).body.data).toHaveLength(5);
    });

    it('answers 400 naming limit or cursor for a bad one, and each bad filter', async () => {
      for (const limit of ['0', '201', 'ten', '-1', '2.5', '']) {
        expectProblem(await call(lister, 'GET', `/entities?limit=${limit}`), 400, ['limit']);
      }
      const history = await call(lister, 'GET', `/entities/${made[1].id}/history?limit=1`);
      for (const cursor of ['garbage', 'eyJ2IjoxfQ', history.body.next_cursor]) {
        expectProblem(await call(lister, 'GET', `/entities?cursor=${cursor}`), 400, ['cursor']);
      }
      expectProblem(await call(lister, 'GET', '/entities?status=closed&entity_type=bank&limit=0&cursor=x'), 400, [
        'cursor',
        'entity_type',
        'limit',
        'status',
      ]);
      expectProblem(await call(lister, 'GET', '/entities?color=red'), 400, ['color']);
    });
  });

  describe('PATCH', () => {
    it('changes the writable fields, bumps version and ETag, and GET shows it at once', async () => {
      const entity = await createEntity(owner);
      const res = await call(owner, 'PATCH', `/entities/${entity.id}`, {
        name: 'Acme Inc',
        status: 'dissolved',
        formation_jurisdiction: 'US-NY',
        formation_date: '2019-01-31',
      });
      expect(res.status).toBe(200);
      expect(res.headers.etag).toBe('"1"');
      expect(res.body).toEqual({
        ...entity,
        name: 'Acme Inc',
        status: 'dissolved',
        formation_jurisdiction: 'US-NY',
        formation_date: '2019-01-31',
        updated_at: expect.stringMatching(ISO_MS),
        version: 1,
      });
      expect(res.body.updated_at >= entity.created_at).toBe(true);
      expect((await call(owner, 'GET', `/entities/${entity.id}`)).body).toEqual(res.body);

      const cleared = await call(owner, 'PATCH', `/entities/${entity.id}`, { formation_jurisdiction: null });
      expect(cleared.body).toMatchObject({ formation_jurisdiction: null, formation_date: '2019-01-31', version: 2 });
    });

    it('appends nothing for a PATCH that changes nothing', async () => {
      const entity = await createEntity(owner);
      for (const body of [{}, { name: entity.name, status: 'active' }]) {
        const res = await call(owner, 'PATCH', `/entities/${entity.id}`, body);
        expect(res.status).toBe(200);
        expect(res.headers.etag).toBe('"0"');
        expect(res.body).toEqual(entity);
      }
      expect((await call(owner, 'GET', `/entities/${entity.id}/history`)).body.data).toHaveLength(1);
    });

    it('honours If-Match: the current version (strong, weak or *) passes, another one is 412 and changes nothing', async () => {
      const entity = await createEntity(owner);
      const first = await call(owner, 'PATCH', `/entities/${entity.id}`, { name: 'v1' }, { 'if-match': '"0"' });
      expect(first.status).toBe(200);
      expectProblem(await call(owner, 'PATCH', `/entities/${entity.id}`, { name: 'stale' }, { 'if-match': '"0"' }), 412);
      expectProblem(await call(owner, 'PATCH', `/entities/${entity.id}`, {}, { 'if-match': '"7"' }), 412);
      expect((await call(owner, 'PATCH', `/entities/${entity.id}`, { name: 'v2' }, { 'if-match': 'W/"1"' })).status).toBe(200);
      expect((await call(owner, 'PATCH', `/entities/${entity.id}`, { name: 'v3' }, { 'if-match': '*' })).body).toMatchObject({
        name: 'v3',
        version: 3,
      });
      expectProblem(await call(owner, 'PATCH', `/entities/${entity.id}`, { name: 'x' }, { 'if-match': '3' }), 400, ['If-Match']);
      expect((await call(owner, 'GET', `/entities/${entity.id}`)).body).toMatchObject({ name: 'v3', version: 3 });
    });

    it('lets one of two concurrent PATCHes with the same If-Match win; the other is 412', async () => {
      const entity = await createEntity(owner);
      const answers = await Promise.all(
        ['left', 'right'].map((name) => call(owner, 'PATCH', `/entities/${entity.id}`, { name }, { 'if-match': '"0"' })),
      );
      expect(answers.map((a) => a.status).sort()).toEqual([200, 412]);
      const winner = answers.find((a) => a.status === 200)!;
      expect((await call(owner, 'GET', `/entities/${entity.id}`)).body).toEqual(winner.body);
      expect((await call(owner, 'GET', `/entities/${entity.id}/history`)).body.data).toHaveLength(2);
    });

    it('answers 400 for fields that cannot be changed, and 404 for an unknown entity', async () => {
      const entity = await createEntity(owner);
      expectProblem(await call(owner, 'PATCH', `/entities/${entity.id}`, { entity_type: 'corporation', id: MISSING_ID }), 400, [
        'entity_type',
        'id',
      ]);
      expectProblem(await call(owner, 'PATCH', `/entities/${MISSING_ID}`, { name: 'x' }), 404);
    });
  });

  describe('history', () => {
    it('lists the entity\'s own events oldest first with type, time, actor and data, paginated', async () => {
      const entity = await createEntity(owner, { name: 'H0' });
      await call(owner, 'PATCH', `/entities/${entity.id}`, { name: 'H1' });
      await call(owner, 'PATCH', `/entities/${entity.id}`, { status: 'inactive' });
      const res = await call(owner, 'GET', `/entities/${entity.id}/history`);
      expect(res.status).toBe(200);
      expect(res.body.next_cursor).toBeNull();
      expect(res.body.data).toEqual([
        {
          type: 'EntityCreated',
          occurred_at: entity.created_at,
          actor: `client:${owner.clientId}`,
          data: expect.objectContaining({ entity_id: entity.id, name: 'H0', status: 'active' }),
        },
        {
          type: 'EntityUpdated',
          occurred_at: expect.stringMatching(ISO_MS),
          actor: `client:${owner.clientId}`,
          data: expect.objectContaining({ name: 'H1', changed: ['name'] }),
        },
        {
          type: 'EntityUpdated',
          occurred_at: expect.stringMatching(ISO_MS),
          actor: `client:${owner.clientId}`,
          data: expect.objectContaining({ name: 'H1', status: 'inactive', changed: ['status'] }),
        },
      ]);
      const { items, pages } = await walk(owner, `/entities/${entity.id}/history`, 1);
      expect(pages).toBe(3);
      expect(items).toEqual(res.body.data);
      const past = encodeCursor('entities/history', 99);
      expect((await call(owner, 'GET', `/entities/${entity.id}/history?cursor=${past}`)).body).toEqual({ data: [], next_cursor: null });
      expectProblem(await call(owner, 'GET', `/entities/${entity.id}/history?cursor=nope`), 400, ['cursor']);
      expectProblem(await call(owner, 'GET', `/entities/${MISSING_ID}/history`), 404);
    });
  });

  describe('Idempotency-Key', () => {
    it('replays the first answer for the same key and body, and answers 422 for another body', async () => {
      const key = `create-${Date.now()}`;
      const body = { name: 'Once Only LLC', entity_type: 'llc' };
      const first = await call(owner, 'POST', '/entities', body, { 'idempotency-key': key });
      expect(first.status).toBe(201);
      const again = await call(owner, 'POST', '/entities', body, { 'idempotency-key': key });
      expect(again.status).toBe(201);
      expect(again.body).toEqual(first.body);
      expect(again.headers).toMatchObject({ location: first.headers.location, etag: first.headers.etag, 'idempotent-replayed': 'true' });
      expectProblem(await call(owner, 'POST', '/entities', { ...body, name: 'Twice' }, { 'idempotency-key': key }), 422);
      const all = await walk<Entity>(owner, '/entities', 200);
      expect(all.items.filter((e) => e.name === 'Once Only LLC')).toHaveLength(1);
      expect(all.items.filter((e) => e.name === 'Twice')).toHaveLength(0);
      // Keys belong to the account: another account's request with the key runs.
      expect((await call(other, 'POST', '/entities', body, { 'idempotency-key': key })).status).toBe(201);
    });
  });

  describe('references from other families', () => {
    it('the ReferenceChecker knows entity_id within the account only, listing each missing field', async () => {
      const entity = await createEntity(owner);
      const references = service.app.get(ReferenceChecker);
      await expect(references.assertExist(owner.accountId!, { entity_id: entity.id })).resolves.toBeUndefined();
      const refused = await references.assertExist(other.accountId!, { entity_id: entity.id }).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(ValidationError);
      expect((refused as ValidationError).errors).toEqual([{ field: 'entity_id', message: expect.stringContaining(entity.id) }]);
    });
  });

  describe('tenant isolation', () => {
    it('answers another account\'s entity as missing on every route, and lists none of them', async () => {
      const stranger = await provisionAccount(service);
      const entity = await createEntity(owner, { name: 'Private LLC' });
      expectProblem(await call(stranger, 'GET', `/entities/${entity.id}`), 404);
      expectProblem(await call(stranger, 'PATCH', `/entities/${entity.id}`, { name: 'Hijacked' }), 404);
      expectProblem(await call(stranger, 'PATCH', `/entities/${entity.id}`, {}, { 'if-match': '"0"' }), 404);
      expectProblem(await call(stranger, 'PATCH', `/entities/${entity.id}`, {}, { 'if-match': '"5"' }), 404);
      expectProblem(await call(stranger, 'GET', `/entities/${entity.id}/history`), 404);
      expect((await call(stranger, 'GET', '/entities')).body).toEqual({ data: [], next_cursor: null });
      expect((await call(stranger, 'GET', '/entities?q=Private')).body).toEqual({ data: [], next_cursor: null });
      expect((await call(owner, 'GET', `/entities/${entity.id}`)).body).toEqual(entity);
    });
  });

  describe('bad input', () => {
    let target: Entity;
    beforeAll(async () => {
      target = await createEntity(owner, { name: 'Target' });
    });

    const valid = { name: 'Valid LLC', entity_type: 'llc' };
    type Case = [label: string, method: string, path: () => string, body: unknown, headers: Record<string, string>, status: number, fields?: string[]];
    const id = () => target.id;
    const cases: Case[] = [
      ['malformed JSON', 'POST', () => '/entities', '{"name": ', { 'content-type': 'application/json' }, 400],
      ['a JSON array', 'POST', () => '/entities', [valid], {}, 400],
      ['JSON null', 'POST', () => '/entities', 'null', { 'content-type': 'application/json' }, 400],
      ['a JSON string', 'POST', () => '/entities', '"Acme"', { 'content-type': 'application/json' }, 400],
      ['missing fields', 'POST', () => '/entities', {}, {}, 400, ['entity_type', 'name']],
      ['wrong types', 'POST', () => '/entities', { name: 5, entity_type: ['llc'], formation_date: 20200101 }, {}, 400, ['entity_type', 'formation_date', 'name']],
      ['unknown enum value', 'POST', () => '/entities', { ...valid, entity_type: 'bank' }, {}, 400, ['entity_type']],
      ['bad jurisdiction and date', 'POST', () => '/entities', { ...valid, formation_jurisdiction: 'Delaware', formation_date: '2023-02-30' }, {}, 400, ['formation_date', 'formation_jurisdiction']],
      ['a blank name', 'POST', () => '/entities', { ...valid, name: '   ' }, {}, 400, ['name']],
      ['an oversize name', 'POST', () => '/entities', { ...valid, name: 'x'.repeat(201) }, {}, 400, ['name']],
      ['unknown fields', 'POST', () => '/entities', { ...valid, status: 'active', owner: 'me' }, {}, 400, ['owner', 'status']],
      ['prototype pollution', 'POST', () => '/entities', '{"name":"x","entity_type":"llc","__proto__":{"admin":true}}', { 'content-type': 'application/json' }, 400],
      ['a body over 15 MiB', 'POST', () => '/entities', JSON.stringify({ ...valid, name: 'x'.repeat(16 * 1024 * 1024) }), { 'content-type': 'application/json' }, 413],
      ['text/plain', 'POST', () => '/entities', 'name=Acme', { 'content-type': 'text/plain' }, 415],
      ['a form body', 'POST', () => '/entities', 'name=Acme&entity_type=llc', { 'content-type': 'application/x-www-form-urlencoded' }, 415],
      ['XML', 'POST', () => '/entities', '<entity/>', { 'content-type': 'application/xml' }, 415],
      ['a bad Idempotency-Key', 'POST', () => '/entities', valid, { 'idempotency-key': 'k'.repeat(300) }, 400, ['Idempotency-Key']],
      ['PATCH malformed JSON', 'PATCH', () => `/entities/${id()}`, '{', { 'content-type': 'application/json' }, 400],
      ['PATCH text/plain', 'PATCH', () => `/entities/${id()}`, 'name', { 'content-type': 'text/plain' }, 415],
      ['PATCH a bad UUID', 'PATCH', () => '/entities/123', { name: 'x' }, {}, 400, ['id']],
      ['PATCH wrong types and values', 'PATCH', () => `/entities/${id()}`, { name: 5, status: 'closed', formation_date: '2023-13-01', formation_jurisdiction: 7 }, {}, 400, ['formation_date', 'formation_jurisdiction', 'name', 'status']],
      ['PATCH null for a required field', 'PATCH', () => `/entities/${id()}`, { name: null, status: null }, {}, 400, ['name', 'status']],
      ['PATCH an oversize name', 'PATCH', () => `/entities/${id()}`, { name: 'x'.repeat(201) }, {}, 400, ['name']],
      ['PATCH unknown fields', 'PATCH', () => `/entities/${id()}`, { entity_type: 'llc', created_at: 'now' }, {}, 400, ['created_at', 'entity_type']],
      ['PATCH a malformed If-Match', 'PATCH', () => `/entities/${id()}`, { name: 'x' }, { 'if-match': 'zero' }, 400, ['If-Match']],
      ['GET a bad UUID', 'GET', () => '/entities/0193a5b2', undefined, {}, 400, ['id']],
      ['list a bad limit', 'GET', () => '/entities?limit=1000', undefined, {}, 400, ['limit']],
      ['list a bad cursor', 'GET', () => '/entities?cursor=%7B%7D', undefined, {}, 400, ['cursor']],
      ['list a repeated limit', 'GET', () => '/entities?limit=1&limit=2', undefined, {}, 400, ['limit']],
      ['list an oversize q', 'GET', () => `/entities?q=${'x'.repeat(201)}`, undefined, {}, 400, ['q']],
      ['history a bad cursor', 'GET', () => `/entities/${id()}/history?cursor=AAAA`, undefined, {}, 400, ['cursor']],
      ['history a bad UUID', 'GET', () => '/entities/x/history', undefined, {}, 400, ['id']],
    ];

    it('answers every bad request with a 4xx problem listing the bad fields, never a 5xx, and appends nothing', async () => {
      const before = await store.headPosition();
      const failures: string[] = [];
      for (const [label, method, path, body, headers, status, fields] of cases) {
        const res = await call(owner, method, path(), body, headers);
        try {
          expect(res.status).toBeLessThan(500);
          expectProblem(res, status, fields);
        } catch (err) {
          failures.push(`${label}: ${res.status} ${JSON.stringify(res.body)}\n${(err as Error).message}`);
        }
      }
      expect(failures).toEqual([]);
      expect(await store.headPosition()).toEqual(before);
      expect((await call(owner, 'GET', `/entities/${target.id}`)).body).toEqual(target);
    });
  });
});
