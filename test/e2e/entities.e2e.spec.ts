/**
 * The entities family over real HTTP, on both event stores: every operation and rule of
 * CONTRACT.md §2–§3 for entities, tenant isolation, and a table of bad inputs. The template for
 * the other families' end-to-end specs.
 */
import { CursorCodec, ReferenceChecker, ValidationError } from '@filing/platform';
import {
  type Answer,
  type BadInput,
  commonBadInputs,
  expectProblem,
  expectRefusedWithoutEvents,
  ISO_MS,
  MISSING_ID,
  type Resource,
  resourceApi,
  UUID_V7,
} from '../support/api';
import { bearer, provisionAccount, type ProvisionedClient } from '../support/auth';
import { startService, type TestService } from '../support/service';

interface Entity extends Resource {
  readonly name: string;
}

describe.each(['sqlite', 'esdb'] as const)('entities over HTTP on the %s store', (eventStore) => {
  let service: TestService;
  /** Writes most tests; `other` never writes (isolation), `lists` owns the filter/pagination data. */
  let owner: ProvisionedClient;
  let other: ProvisionedClient;

  beforeAll(async () => {
    service = await startService({ eventStore });
    [owner, other] = await Promise.all([provisionAccount(service), provisionAccount(service)]);
  }, 60_000);
  afterAll(async () => service?.destroy());

  const api = resourceApi(() => service);
  const { call, create, walk } = api;
  const createEntity = (client: ProvisionedClient, fields: Record<string, unknown> = {}) =>
    create<Entity>(client, '/entities', { name: 'Acme LLC', entity_type: 'llc', ...fields });

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

    it('shows each write in the very next list, though that same page was just listed and kept', async () => {
      const page = '/entities?limit=200';
      for (let i = 0; i < 5; i++) {
        const listed = (await call(owner, 'GET', page)).body.data;
        expect((await call(owner, 'GET', page)).body.data).toEqual(listed);
        const created = await createEntity(owner, { name: `Kept page ${i}` });
        expect((await call(owner, 'GET', page)).body.data).toEqual([...listed, created]);
        const patched = await call(owner, 'PATCH', `/entities/${created.id}`, { name: `Kept page ${i}, renamed` });
        expect((await call(owner, 'GET', page)).body.data).toEqual([...listed, patched.body]);
        // The other account's same query is its own page.
        expect((await call(other, 'GET', page)).body.data).not.toContainEqual(patched.body);
      }
    });

    it('keeps formation jurisdiction and date', async () => {
      const entity = await createEntity(owner, {
        entity_type: 'corporation',
        formation_jurisdiction: 'US-DE',
        formation_date: '2020-02-29',
      });
      expect(entity).toMatchObject({
        entity_type: 'corporation',
        formation_jurisdiction: 'US-DE',
        formation_date: '2020-02-29',
      });
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

    it("lists the account's entities oldest first, 50 by default, with next_cursor null at the end", async () => {
      const res = await call(lister, 'GET', '/entities');
      expect(res.status).toBe(200);
      expect(res.body.next_cursor).toBeNull();
      expect(res.body.data.map((e: Entity) => e.id)).toEqual(made.map((e) => e.id));
    });

    it('filters by status, entity_type and q (case-insensitive name substring), alone and together', async () => {
      expect(names(await call(lister, 'GET', '/entities?status=inactive'))).toEqual(['beta corp']);
      expect(names(await call(lister, 'GET', '/entities?status=active'))).toHaveLength(4);
      expect(names(await call(lister, 'GET', '/entities?entity_type=llc'))).toEqual([
        'Alpha Holdings LLC',
        'Épsilon Ünïcode',
      ]);
      expect(names(await call(lister, 'GET', '/entities?q=aLpHa'))).toEqual([
        'Alpha Holdings LLC',
        'Gamma ALPHA Foundation',
      ]);
      expect(names(await call(lister, 'GET', `/entities?q=${encodeURIComponent('épsilon ü')}`))).toEqual([
        'Épsilon Ünïcode',
      ]);
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

    it("answers 400 naming cursor for a forged cursor: a readable body without the service's tag", async () => {
      const b64 = (body: unknown) => Buffer.from(JSON.stringify(body)).toString('base64url');
      const zero = '00000000-0000-0000-0000-000000000000';
      const signedElsewhere = CursorCodec.random(); // as a forger, or another DATA_DIR, would sign
      const zeroTag = (body: unknown) =>
        Buffer.concat([Buffer.alloc(16), Buffer.from(JSON.stringify(body))]).toString('base64url');
      for (const cursor of [
        b64({ v: 1, c: 'entities', k: 'zzz' }), // was a 200 with an empty page
        b64({ v: 1, c: 'entities', k: zero }), // was a 200 with the whole list
        zeroTag({ v: 2, c: 'entities', k: zero }),
        signedElsewhere.encode('entities', zero),
      ]) {
        expectProblem(await call(lister, 'GET', `/entities?cursor=${cursor}`), 400, ['cursor']);
      }
      const history = `/entities/${made[0].id}/history`;
      expectProblem(await call(lister, 'GET', `${history}?cursor=${b64({ v: 1, c: 'entities/history', k: 0 })}`), 400, [
        'cursor',
      ]);
      expectProblem(
        await call(lister, 'GET', `${history}?cursor=${signedElsewhere.encode('entities/history', 0)}`),
        400,
        ['cursor'],
      );
      // Its own cursors still page.
      const first = await call(lister, 'GET', '/entities?limit=2');
      expect((await call(lister, 'GET', `/entities?limit=2&cursor=${first.body.next_cursor}`)).body.data).toHaveLength(
        2,
      );
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
      expectProblem(
        await call(owner, 'PATCH', `/entities/${entity.id}`, { name: 'stale' }, { 'if-match': '"0"' }),
        412,
      );
      expectProblem(await call(owner, 'PATCH', `/entities/${entity.id}`, {}, { 'if-match': '"7"' }), 412);
      expect(
        (await call(owner, 'PATCH', `/entities/${entity.id}`, { name: 'v2' }, { 'if-match': 'W/"1"' })).status,
      ).toBe(200);
      expect(
        (await call(owner, 'PATCH', `/entities/${entity.id}`, { name: 'v3' }, { 'if-match': '*' })).body,
      ).toMatchObject({
        name: 'v3',
        version: 3,
      });
      expectProblem(await call(owner, 'PATCH', `/entities/${entity.id}`, { name: 'x' }, { 'if-match': '3' }), 400, [
        'If-Match',
      ]);
      expect((await call(owner, 'GET', `/entities/${entity.id}`)).body).toMatchObject({ name: 'v3', version: 3 });
    });

    it('lets one of two concurrent PATCHes with the same If-Match win; the other is 412', async () => {
      const entity = await createEntity(owner);
      const answers = await Promise.all(
        ['left', 'right'].map((name) =>
          call(owner, 'PATCH', `/entities/${entity.id}`, { name }, { 'if-match': '"0"' }),
        ),
      );
      expect(answers.map((a) => a.status).sort()).toEqual([200, 412]);
      const winner = answers.find((a) => a.status === 200)!;
      expect((await call(owner, 'GET', `/entities/${entity.id}`)).body).toEqual(winner.body);
      expect((await call(owner, 'GET', `/entities/${entity.id}/history`)).body.data).toHaveLength(2);
    });

    it('answers 400 for fields that cannot be changed, and 404 for an unknown entity', async () => {
      const entity = await createEntity(owner);
      expectProblem(
        await call(owner, 'PATCH', `/entities/${entity.id}`, { entity_type: 'corporation', id: MISSING_ID }),
        400,
        ['entity_type', 'id'],
      );
      expectProblem(await call(owner, 'PATCH', `/entities/${MISSING_ID}`, { name: 'x' }), 404);
    });
  });

  describe('history', () => {
    it("lists the entity's own events oldest first with type, time, actor and data, paginated", async () => {
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
      const past = service.app.get(CursorCodec).encode('entities/history', 99);
      expect((await call(owner, 'GET', `/entities/${entity.id}/history?cursor=${past}`)).body).toEqual({
        data: [],
        next_cursor: null,
      });
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
      expect(again.headers).toMatchObject({
        location: first.headers.location,
        etag: first.headers.etag,
        'idempotent-replayed': 'true',
      });
      expectProblem(
        await call(owner, 'POST', '/entities', { ...body, name: 'Twice' }, { 'idempotency-key': key }),
        422,
      );
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
      const refused = await references
        .assertExist(other.accountId!, { entity_id: entity.id })
        .catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(ValidationError);
      expect((refused as ValidationError).errors).toEqual([
        { field: 'entity_id', message: expect.stringContaining(entity.id) },
      ]);
    });
  });

  describe('tenant isolation', () => {
    it("answers another account's entity as missing on every route, and lists none of them", async () => {
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
    const id = () => target.id;
    const cases: BadInput[] = [
      ...commonBadInputs('/entities', valid, id),
      ['missing fields', 'POST', () => '/entities', {}, {}, 400, ['entity_type', 'name']],
      [
        'wrong types',
        'POST',
        () => '/entities',
        { name: 5, entity_type: ['llc'], formation_date: 20200101 },
        {},
        400,
        ['entity_type', 'formation_date', 'name'],
      ],
      ['unknown enum value', 'POST', () => '/entities', { ...valid, entity_type: 'bank' }, {}, 400, ['entity_type']],
      [
        'bad jurisdiction and date',
        'POST',
        () => '/entities',
        { ...valid, formation_jurisdiction: 'Delaware', formation_date: '2023-02-30' },
        {},
        400,
        ['formation_date', 'formation_jurisdiction'],
      ],
      ['a blank name', 'POST', () => '/entities', { ...valid, name: '   ' }, {}, 400, ['name']],
      ['an oversize name', 'POST', () => '/entities', { ...valid, name: 'x'.repeat(201) }, {}, 400, ['name']],
      [
        'unknown fields',
        'POST',
        () => '/entities',
        { ...valid, status: 'active', owner: 'me' },
        {},
        400,
        ['owner', 'status'],
      ],
      [
        'PATCH wrong types and values',
        'PATCH',
        () => `/entities/${id()}`,
        { name: 5, status: 'closed', formation_date: '2023-13-01', formation_jurisdiction: 7 },
        {},
        400,
        ['formation_date', 'formation_jurisdiction', 'name', 'status'],
      ],
      [
        'PATCH null for a required field',
        'PATCH',
        () => `/entities/${id()}`,
        { name: null, status: null },
        {},
        400,
        ['name', 'status'],
      ],
      ['PATCH an oversize name', 'PATCH', () => `/entities/${id()}`, { name: 'x'.repeat(201) }, {}, 400, ['name']],
      [
        'PATCH unknown fields',
        'PATCH',
        () => `/entities/${id()}`,
        { entity_type: 'llc', created_at: 'now' },
        {},
        400,
        ['created_at', 'entity_type'],
      ],
      ['list an oversize q', 'GET', () => `/entities?q=${'x'.repeat(201)}`, undefined, {}, 400, ['q']],
    ];

    it('answers every bad request with a 4xx problem listing the bad fields, never a 5xx, and appends nothing', async () => {
      await expectRefusedWithoutEvents(service, api, owner, cases);
      expect((await call(owner, 'GET', `/entities/${target.id}`)).body).toEqual(target);
    });
  });
});
