/**
 * The part of CONTRACT.md §2–§3 that every family with `POST`, `PATCH /{id}`, `GET` and
 * `/history` shares, over real HTTP: create and read (read-your-writes), PATCH (version, ETag,
 * no-op), If-Match, history, Idempotency-Key, the `entity_id` reference, and tenant isolation.
 * A family's spec calls `describeResourceFamily` inside its `describe.each(['sqlite', 'esdb'])`
 * and adds its own field rules, filters and bad-input table.
 */
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { compareReadModels, CursorCodec, ProjectionRunner, ReadYourWrites, rebuildReadModels } from '@filing/platform';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { expectProblem, ISO_MS, MISSING_ID, type Resource, type ResourceApi, resourceApi, UUID_V7 } from './api';
import { bearer, provisionAccount, type ProvisionedClient } from './auth';
import { startService, type TestService, type TestServiceOptions } from './service';

export interface FamilyEnv {
  readonly api: ResourceApi;
  readonly service: () => TestService;
  /** Writes; owns `entityId()`. */
  readonly owner: () => ProvisionedClient;
  /** Another account, owning `otherEntityId()`. */
  readonly other: () => ProvisionedClient;
  readonly entityId: () => string;
  readonly otherEntityId: () => string;
}

export interface FamilySpec {
  /** The collection under /external-api/v1, e.g. `/tasks`. */
  readonly path: string;
  /** The id field of its events' data, e.g. `task_id`. */
  readonly idField: string;
  /** A valid create body referring to `entityId`. */
  /** A valid create body for the entity; each call may differ (e.g. a new jurisdiction code). */
  readonly createBody: (entityId: string) => Record<string, unknown>;
  /** The create body's fields as the resource answers them (default: all, as sent), e.g. without a write-only `content_base64`. */
  readonly answered?: (body: Record<string, unknown>) => Record<string, unknown>;
  /** What a new resource answers besides id, entity_id, times and version (e.g. `status: 'open'`). */
  readonly created: Record<string, unknown>;
  /** Three PATCH bodies, each changing something the one before it set. */
  readonly changes: readonly [Record<string, unknown>, Record<string, unknown>, Record<string, unknown>];
  /** History types without the context prefix: `[created, updated]`. */
  readonly eventTypes: readonly [string, string];
}

/**
 * The setup of a family's spec inside `describe.each(['sqlite', 'esdb'])`: the service (with
 * `imports`, e.g. a family declared in a test), an owner and another account with an entity each,
 * made in `beforeAll` and destroyed (audited) in `afterAll`. Its getters work in tests and hooks.
 */
export function familyFixture(eventStore: 'sqlite' | 'esdb', imports: TestServiceOptions['imports'] = []): FamilyEnv {
  let service: TestService;
  let accounts: { owner: ProvisionedClient; other: ProvisionedClient; entityId: string; otherEntityId: string };
  const api = resourceApi(() => service);
  const entity = async (client: ProvisionedClient) =>
    (await api.create(client, '/entities', { name: 'Family LLC', entity_type: 'llc' })).id;
  beforeAll(async () => {
    service = await startService({ eventStore, imports });
    const [owner, other] = await Promise.all([provisionAccount(service), provisionAccount(service)]);
    const [entityId, otherEntityId] = await Promise.all([entity(owner), entity(other)]);
    accounts = { owner, other, entityId, otherEntityId };
  }, 60_000);
  afterAll(async () => service?.destroy());
  return {
    api,
    service: () => service,
    owner: () => accounts.owner,
    other: () => accounts.other,
    entityId: () => accounts.entityId,
    otherEntityId: () => accounts.otherEntityId,
  };
}

export function describeResourceFamily(env: FamilyEnv, spec: FamilySpec): void {
  const { path } = spec;
  const call = (...args: Parameters<ResourceApi['call']>) => env.api.call(...args);
  const create = (client = env.owner(), entityId = env.entityId()) =>
    env.api.create(client, path, spec.createBody(entityId));
  const head = () => env.service().app.get<EventStore>(EVENT_STORE).headPosition();

  describe('create and read', () => {
    it('POST answers 201 with Location, ETag and the resource; GET and the list show it at once', async () => {
      const body = spec.createBody(env.entityId());
      const res = await call(env.owner(), 'POST', path, body);
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(UUID_V7),
        ...(spec.answered ?? ((sent) => sent))(body),
        ...spec.created,
        created_at: expect.stringMatching(ISO_MS),
        updated_at: res.body.created_at,
        version: 0,
      });
      expect(res.headers.location).toBe(`/external-api/v1${path}/${res.body.id}`);
      expect(res.headers.etag).toBe('"0"');

      // Read-your-writes: the very next requests see it.
      const got = await fetch(`${env.service().url}${res.headers.location}`, { headers: bearer(env.owner().token) });
      expect(got.status).toBe(200);
      expect(got.headers.get('etag')).toBe('"0"');
      expect(await got.json()).toEqual(res.body);
      const list = await call(env.owner(), 'GET', `${path}?entity_id=${env.entityId()}&limit=200`);
      expect(list.body.data).toContainEqual(res.body);
    });

    it('GET and the list send the stored answer byte for byte as the write serialised the resource', async () => {
      // The POST's answer is the resource object serialised by Fastify (the path reads took before
      // the read models kept rendered answers); GET and the list now send the stored text.
      const url = `${env.service().url}/external-api/v1${path}`;
      const auth = bearer(env.owner().token);
      const posted = await fetch(url, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify(spec.createBody(env.entityId())),
      });
      expect(posted.status).toBe(201);
      const written = await posted.text();
      const { id } = JSON.parse(written) as { id: string };
      const got = await fetch(`${url}/${id}`, { headers: auth });
      expect([got.headers.get('content-type'), await got.text()]).toEqual([
        posted.headers.get('content-type'),
        written,
      ]);
      const list = await fetch(`${url}?limit=200`, { headers: auth });
      const page = await list.text();
      expect(list.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(page).toBe(JSON.stringify(JSON.parse(page)));
      expect(page).toContain(written);
    });

    it('accepts an entity_id in capitals and answers it as stored, lower-case', async () => {
      const res = await call(env.owner(), 'POST', path, spec.createBody(env.entityId().toUpperCase()));
      expect(res.status).toBe(201);
      expect(res.body.entity_id).toBe(env.entityId());
    });

    it('GET answers 400 naming id for a bad UUID and 404 for an unknown one', async () => {
      expectProblem(await call(env.owner(), 'GET', `${path}/not-a-uuid`), 400, ['id']);
      expectProblem(await call(env.owner(), 'GET', `${path}/${MISSING_ID}`), 404);
    });
  });

  describe('entity_id reference', () => {
    it("answers 400 naming entity_id for an unknown entity or another account's, and appends nothing", async () => {
      const before = await head();
      for (const entityId of [MISSING_ID, env.otherEntityId()]) {
        const res = await call(env.owner(), 'POST', path, spec.createBody(entityId));
        expectProblem(res, 400, ['entity_id']);
        expect(res.body.errors[0].message).toContain(entityId);
      }
      expect(await head()).toEqual(before);
    });
  });

  describe('PATCH', () => {
    it('changes the writable fields, bumps version and ETag, and GET and the list show it at once', async () => {
      const resource = await create();
      let expected: Resource = resource;
      for (const [i, change] of spec.changes.entries()) {
        const res = await call(env.owner(), 'PATCH', `${path}/${resource.id}`, change);
        expect(res.status).toBe(200);
        expect(res.headers.etag).toBe(`"${i + 1}"`);
        expect(res.body).toEqual({ ...expected, ...change, updated_at: expect.stringMatching(ISO_MS), version: i + 1 });
        expect(res.body.updated_at >= expected.updated_at).toBe(true);
        expected = res.body;
        expect((await call(env.owner(), 'GET', `${path}/${resource.id}`)).body).toEqual(expected);
      }
      expect(
        (await call(env.owner(), 'GET', `${path}?entity_id=${env.entityId()}&limit=200`)).body.data,
      ).toContainEqual(expected);
    });

    it('appends nothing for a PATCH that changes nothing', async () => {
      const resource = await create();
      const current = Object.fromEntries(Object.keys(spec.changes[0]).map((field) => [field, resource[field]]));
      for (const body of [{}, current]) {
        const res = await call(env.owner(), 'PATCH', `${path}/${resource.id}`, body);
        expect(res.status).toBe(200);
        expect(res.headers.etag).toBe('"0"');
        expect(res.body).toEqual(resource);
      }
      expect((await call(env.owner(), 'GET', `${path}/${resource.id}/history`)).body.data).toHaveLength(1);
    });

    it('honours If-Match: the current version (strong, weak or *) passes, another one is 412 and changes nothing', async () => {
      const resource = await create();
      const [first, second, third] = spec.changes;
      const at = `${path}/${resource.id}`;
      expect((await call(env.owner(), 'PATCH', at, first, { 'if-match': '"0"' })).status).toBe(200);
      expectProblem(await call(env.owner(), 'PATCH', at, second, { 'if-match': '"0"' }), 412);
      expectProblem(await call(env.owner(), 'PATCH', at, {}, { 'if-match': '"7"' }), 412);
      expect((await call(env.owner(), 'PATCH', at, second, { 'if-match': 'W/"1"' })).status).toBe(200);
      expect((await call(env.owner(), 'PATCH', at, third, { 'if-match': '*' })).body).toMatchObject({
        ...third,
        version: 3,
      });
      expectProblem(await call(env.owner(), 'PATCH', at, first, { 'if-match': '3' }), 400, ['If-Match']);
      expect((await call(env.owner(), 'GET', at)).body).toMatchObject({ ...third, version: 3 });
    });

    it('lets one of two concurrent PATCHes with the same If-Match win; the other is 412', async () => {
      const resource = await create();
      const at = `${path}/${resource.id}`;
      const answers = await Promise.all(
        spec.changes.slice(0, 2).map((change) => call(env.owner(), 'PATCH', at, change, { 'if-match': '"0"' })),
      );
      expect(answers.map((a) => a.status).sort()).toEqual([200, 412]);
      const winner = answers.find((a) => a.status === 200)!;
      expect((await call(env.owner(), 'GET', at)).body).toEqual(winner.body);
      expect((await call(env.owner(), 'GET', `${at}/history`)).body.data).toHaveLength(2);
    });

    it('answers 400 naming fields that cannot be changed, and 404 for an unknown resource', async () => {
      const resource = await create();
      expectProblem(
        await call(env.owner(), 'PATCH', `${path}/${resource.id}`, {
          entity_id: env.entityId(),
          id: MISSING_ID,
          version: 9,
        }),
        400,
        ['entity_id', 'id', 'version'],
      );
      expectProblem(await call(env.owner(), 'PATCH', `${path}/${MISSING_ID}`, spec.changes[0]), 404);
    });
  });

  describe('history', () => {
    it("lists the resource's own events oldest first with type, time, actor and data, paginated", async () => {
      const resource = await create();
      const [first, second] = spec.changes;
      await call(env.owner(), 'PATCH', `${path}/${resource.id}`, first);
      await call(env.owner(), 'PATCH', `${path}/${resource.id}`, second);
      const res = await call(env.owner(), 'GET', `${path}/${resource.id}/history`);
      expect(res.status).toBe(200);
      expect(res.body.next_cursor).toBeNull();
      const actor = `client:${env.owner().clientId}`;
      const ids = { [spec.idField]: resource.id, entity_id: env.entityId() };
      const [created, updated] = spec.eventTypes;
      expect(res.body.data).toEqual([
        {
          type: created,
          occurred_at: resource.created_at,
          actor,
          data: expect.objectContaining({ ...ids, ...spec.created }),
        },
        {
          type: updated,
          occurred_at: expect.stringMatching(ISO_MS),
          actor,
          data: expect.objectContaining({ ...ids, ...first, changed: Object.keys(first) }),
        },
        {
          type: updated,
          occurred_at: expect.stringMatching(ISO_MS),
          actor,
          data: expect.objectContaining({ ...ids, ...second, changed: Object.keys(second) }),
        },
      ]);
      const { items, pages } = await env.api.walk(env.owner(), `${path}/${resource.id}/history`, 1);
      expect(pages).toBe(3);
      expect(items).toEqual(res.body.data);
      const collection = `${path.slice(1)}/history`;
      const cursors = env.service().app.get(CursorCodec);
      const past = cursors.encode(collection, 99);
      expect((await call(env.owner(), 'GET', `${path}/${resource.id}/history?cursor=${past}`)).body).toEqual({
        data: [],
        next_cursor: null,
      });
      expectProblem(await call(env.owner(), 'GET', `${path}/${resource.id}/history?cursor=nope`), 400, ['cursor']);
      expectProblem(
        await call(
          env.owner(),
          'GET',
          `${path}/${resource.id}/history?cursor=${cursors.encode(path.slice(1), resource.id)}`,
        ),
        400,
        ['cursor'],
      );
      // Signed with another key (a forged one, or another DATA_DIR's): refused like any cursor the service did not issue.
      const forged = CursorCodec.random().encode(collection, 0);
      expectProblem(await call(env.owner(), 'GET', `${path}/${resource.id}/history?cursor=${forged}`), 400, ['cursor']);
      expectProblem(await call(env.owner(), 'GET', `${path}/${MISSING_ID}/history`), 404);
    });
  });

  describe('Idempotency-Key', () => {
    it('replays the first answer for the same key and body, and answers 422 for another body', async () => {
      const key = `create-${path.slice(1)}-${Date.now()}`;
      const body = spec.createBody(env.entityId());
      const first = await call(env.owner(), 'POST', path, body, { 'idempotency-key': key });
      expect(first.status).toBe(201);
      const before = await head();
      const again = await call(env.owner(), 'POST', path, body, { 'idempotency-key': key });
      expect(again.status).toBe(201);
      expect(again.body).toEqual(first.body);
      expect(again.headers).toMatchObject({
        location: first.headers.location,
        etag: first.headers.etag,
        'idempotent-replayed': 'true',
      });
      expectProblem(
        await call(env.owner(), 'POST', path, { ...body, ...spec.changes[0] }, { 'idempotency-key': key }),
        422,
      );
      expect(await head()).toEqual(before);
      // Keys belong to the account: another account's request with the key runs.
      const theirs = await call(env.other(), 'POST', path, spec.createBody(env.otherEntityId()), {
        'idempotency-key': key,
      });
      expect(theirs.status).toBe(201);
      expect(theirs.body.id).not.toBe(first.body.id);
    });
  });

  describe('replay', () => {
    it('rebuilds the read model from the stream into exactly the live rows', async () => {
      const resource = await create();
      expect((await call(env.owner(), 'PATCH', `${path}/${resource.id}`, spec.changes[1])).status).toBe(200);
      await expectRebuildEqualsLive(env.service(), path.slice(1));
    });
  });

  describe('tenant isolation', () => {
    it("answers another account's resource as missing on every route, and lists none of them", async () => {
      const stranger = await provisionAccount(env.service());
      const resource = await create();
      const at = `${path}/${resource.id}`;
      expectProblem(await call(stranger, 'GET', at), 404);
      expectProblem(await call(stranger, 'PATCH', at, spec.changes[0]), 404);
      expectProblem(await call(stranger, 'PATCH', at, {}, { 'if-match': '"0"' }), 404);
      expectProblem(await call(stranger, 'PATCH', at, {}, { 'if-match': '"5"' }), 404);
      expectProblem(await call(stranger, 'GET', `${at}/history`), 404);
      expect((await call(stranger, 'GET', path)).body).toEqual({ data: [], next_cursor: null });
      expect((await call(stranger, 'GET', `${path}?entity_id=${env.entityId()}`)).body).toEqual({
        data: [],
        next_cursor: null,
      });
      expect((await call(env.owner(), 'GET', at)).body).toEqual(resource);
    });
  });
}

/**
 * What `audit` checks, for one read-model table: rebuilt from the stream (up to the head, once
 * the live projections have reached it), it holds exactly the live rows, and at least one.
 */
export async function expectRebuildEqualsLive(service: TestService, table: string): Promise<void> {
  const store = service.app.get<EventStore>(EVENT_STORE);
  const runner = service.app.get(ProjectionRunner);
  const projections = runner.registered.filter((p) => p.tables.includes(table));
  const position = await store.headPosition();
  await service.app.get(ReadYourWrites).await(position);
  const file = join(service.dataDir, `rebuild-${table}.db`);
  await rebuildReadModels({ store, projections, file, stopAt: position });
  const rebuilt = new Database(file, { readonly: true });
  try {
    const comparison = compareReadModels(runner.db, rebuilt, [table]);
    expect(comparison.differences).toEqual([]);
    expect(comparison.rows).toBeGreaterThanOrEqual(1);
  } finally {
    rebuilt.close();
  }
}
