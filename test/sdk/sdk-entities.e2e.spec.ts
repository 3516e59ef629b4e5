/**
 * The typed client's entity operations against the real service: every call's answer has exactly
 * the SDK type's fields, filters and cursor pagination (also through the async iterator),
 * If-Match (412), Idempotency-Key (replay, 422), history, and problem+json as ApiError.
 */
import { ApiError, collect, type Entity, FilingClient, type HistoryEvent, type Page } from '@filing/client';
import { randomUUID } from 'node:crypto';
import { provisionAccount } from '../support/auth';
import { startService, type TestService } from '../support/service';
import { keysOf, shape } from './sdk-support';

const ENTITY = shape<Entity>()({
  id: 1,
  name: 1,
  entity_type: 1,
  status: 1,
  formation_jurisdiction: 1,
  formation_date: 1,
  created_at: 1,
  updated_at: 1,
  version: 1,
});
const HISTORY = shape<HistoryEvent>()({ type: 1, occurred_at: 1, actor: 1, data: 1 });
const PAGE = shape<Page<unknown>>()({ data: 1, next_cursor: 1 });

describe('SDK entities against the service', () => {
  let service: TestService;
  let client: FilingClient;
  let stranger: FilingClient;

  beforeAll(async () => {
    service = await startService();
    const a = await provisionAccount(service);
    const b = await provisionAccount(service);
    client = new FilingClient({ baseUrl: service.url, clientId: a.clientId, clientSecret: a.clientSecret });
    stranger = new FilingClient({ baseUrl: service.url, clientId: b.clientId, clientSecret: b.clientSecret });
  });
  afterAll(async () => {
    await service?.destroy();
  });

  it('creates, reads, updates (If-Match) and lists entities with exactly the typed fields', async () => {
    const created: Entity = await client.entities.create({
      name: 'Acme Holdings LLC',
      entity_type: 'llc',
      formation_jurisdiction: 'US-DE',
      formation_date: '2020-01-31',
    });
    expect(keysOf(created)).toEqual(ENTITY);
    expect(created).toMatchObject({
      name: 'Acme Holdings LLC',
      entity_type: 'llc',
      status: 'active',
      formation_jurisdiction: 'US-DE',
      formation_date: '2020-01-31',
      version: 0,
    });

    const read: Entity = await client.entities.get(created.id);
    expect(read).toEqual(created);

    const updated: Entity = await client.entities.update(
      created.id,
      { status: 'dissolved', formation_date: null },
      { ifMatch: read.version },
    );
    expect(keysOf(updated)).toEqual(ENTITY);
    expect(updated).toMatchObject({ status: 'dissolved', formation_date: null, version: 1 });

    const stale = (await client.entities
      .update(created.id, { name: 'Stale' }, { ifMatch: read.version })
      .catch((e) => e)) as ApiError;
    expect(stale).toBeInstanceOf(ApiError);
    expect(stale.status).toBe(412);
    expect(stale.type).toBe('about:blank');
    await expect(client.entities.update(created.id, { name: 'Tagged' }, { ifMatch: '"1"' })).resolves.toMatchObject({
      name: 'Tagged',
      version: 2,
    });
  });

  it('answers history as typed events, oldest first, page by page and through historyAll', async () => {
    const e = await client.entities.create({ name: 'History Corp', entity_type: 'corporation' });
    await client.entities.update(e.id, { name: 'History Corp II' });
    await client.entities.update(e.id, { status: 'inactive' });
    const first: Page<HistoryEvent<'EntityCreated' | 'EntityUpdated'>> = await client.entities.history(e.id, {
      limit: 2,
    });
    expect(keysOf(first)).toEqual(PAGE);
    expect(first.data.map((h) => h.type)).toEqual(['EntityCreated', 'EntityUpdated']);
    expect(keysOf(first.data[0])).toEqual(HISTORY);
    expect(first.data[0].actor).toMatch(/^client:/);
    expect(first.next_cursor).toEqual(expect.any(String));
    const all = await collect(client.entities.historyAll(e.id, { limit: 1 }));
    expect(all.map((h) => h.type)).toEqual(['EntityCreated', 'EntityUpdated', 'EntityUpdated']);
  });

  it('filters and paginates: list pages with next_cursor, listAll across pages', async () => {
    const tag = randomUUID().slice(0, 8);
    const made: Entity[] = [];
    for (let i = 0; i < 5; i++)
      made.push(
        await client.entities.create({ name: `Paged ${tag} ${i}`, entity_type: i % 2 ? 'nonprofit' : 'partnership' }),
      );

    const page1 = await client.entities.list({ q: tag, limit: 2 });
    expect(page1.data.map((e) => e.id)).toEqual(made.slice(0, 2).map((e) => e.id));
    const page2 = await client.entities.list({ q: tag, limit: 2, cursor: page1.next_cursor! });
    expect(page2.data.map((e) => e.id)).toEqual(made.slice(2, 4).map((e) => e.id));

    const all = await collect(client.entities.listAll({ q: tag, limit: 2 }));
    expect(all.map((e) => e.id)).toEqual(made.map((e) => e.id));
    all.forEach((e) => expect(keysOf(e)).toEqual(ENTITY));
    const nonprofits = await collect(client.entities.listAll({ q: tag, entity_type: 'nonprofit' }));
    expect(nonprofits.map((e) => e.name)).toEqual([`Paged ${tag} 1`, `Paged ${tag} 3`]);
    const active = await collect(client.entities.listAll({ q: tag, status: 'active', limit: 200 }));
    expect(active).toHaveLength(5);
  });

  it('replays an Idempotency-Key and refuses it with another body (422)', async () => {
    const key = randomUUID();
    const a = await client.entities.create({ name: 'Once LLC', entity_type: 'llc' }, { idempotencyKey: key });
    const b = await client.entities.create({ name: 'Once LLC', entity_type: 'llc' }, { idempotencyKey: key });
    expect(b).toEqual(a);
    const err = (await client.entities
      .create({ name: 'Other LLC', entity_type: 'llc' }, { idempotencyKey: key })
      .catch((e) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(422);
  });

  it('types every refusal as ApiError with the problem+json fields', async () => {
    const bad = (await client.entities
      .create({ name: '', entity_type: 'castle' as never, formation_date: '2020-13-45' })
      .catch((e) => e)) as ApiError;
    expect(bad).toBeInstanceOf(ApiError);
    expect(bad).toMatchObject({
      status: 400,
      type: 'about:blank',
      title: 'Bad Request',
      method: 'POST',
      path: '/entities',
    });
    expect(bad.errors.map((e) => e.field).sort()).toEqual(['entity_type', 'formation_date', 'name']);
    expect(bad.fieldError('entity_type')).toEqual(expect.any(String));

    const unknownField = (await client.entities
      .update(randomUUID(), { nickname: 'x' } as never)
      .catch((e) => e)) as ApiError;
    expect(unknownField.status).toBeGreaterThanOrEqual(400);
    expect(unknownField.status).toBeLessThan(500);

    const badLimit = (await client.entities.list({ limit: 500 }).catch((e) => e)) as ApiError;
    expect(badLimit).toMatchObject({ status: 400 });
    expect(badLimit.errors.map((e) => e.field)).toContain('limit');
    const badCursor = (await client.entities.list({ cursor: 'not-ours' }).catch((e) => e)) as ApiError;
    expect(badCursor.errors.map((e) => e.field)).toContain('cursor');

    const mine = await client.entities.create({ name: 'Private LLC', entity_type: 'llc' });
    const foreign = (await stranger.entities.get(mine.id).catch((e) => e)) as ApiError;
    expect(foreign).toBeInstanceOf(ApiError);
    expect(foreign.status).toBe(404);
    await expect(client.entities.get(randomUUID())).rejects.toMatchObject({ status: 404, detail: expect.any(String) });
  });
});
