import { CursorCodec, type ProjectionRunner } from '@filing/platform';
import { recorded } from '@filing/platform/testing';
import Database from 'better-sqlite3';
import { ENTITY_CREATED, ENTITY_UPDATED, type EntityEvent } from '../entity.events';
import { EntitiesProjection } from './entities.projection';
import { EntitiesQueries } from './entities.queries';

const cursors = CursorCodec.random();

let position = 0;
const apply = (db: Database.Database, event: EntityEvent, accountId: string, occurredAt: string) =>
  new EntitiesProjection().apply(
    db,
    recorded(event, {
      streamId: `entity-${event.data.entity_id}`,
      revision: event.type === ENTITY_CREATED ? 0 : 1,
      position: position++,
      accountId,
      occurredAt,
    }),
  );

const fields = (name: string, entity_type: 'llc' | 'corporation' = 'llc') =>
  ({ name, entity_type, status: 'active', formation_jurisdiction: null, formation_date: null }) as const;

describe('entities read model', () => {
  let db: Database.Database;
  let queries: EntitiesQueries;

  beforeEach(() => {
    db = new Database(':memory:');
    new EntitiesProjection().setup(db);
    queries = new EntitiesQueries({ db } as unknown as ProjectionRunner);
    const at = '2026-01-01T00:00:00.000Z';
    apply(db, { type: ENTITY_CREATED, data: { entity_id: 'e1', ...fields('Straße GmbH') } }, 'a', at);
    apply(db, { type: ENTITY_CREATED, data: { entity_id: 'e2', ...fields('Other', 'corporation') } }, 'a', at);
    apply(db, { type: ENTITY_CREATED, data: { entity_id: 'e3', ...fields('Foreign') } }, 'b', at);
    apply(
      db,
      { type: ENTITY_UPDATED, data: { entity_id: 'e2', ...fields('Other Inc', 'corporation'), status: 'inactive', changed: ['name', 'status'] } },
      'a',
      '2026-01-02T00:00:00.000Z',
    );
  });
  afterEach(() => db.close());

  it('keeps each entity as of its last event, with version and times', () => {
    expect(queries.get('a', 'e2')).toEqual({
      id: 'e2',
      name: 'Other Inc',
      entity_type: 'corporation',
      status: 'inactive',
      formation_jurisdiction: null,
      formation_date: null,
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-02T00:00:00.000Z',
      version: 1,
    });
  });

  it('answers only within the account', () => {
    expect(queries.get('b', 'e2')).toBeNull();
    expect(queries.exists('a', 'e1')).toBe(true);
    expect(queries.exists('b', 'e1')).toBe(false);
    expect(queries.list('b', {}, { limit: 50, after: null, cursors }).data.map((e) => e.id)).toEqual(['e3']);
  });

  it('filters and pages', () => {
    const page = queries.list('a', {}, { limit: 1, after: null, cursors });
    expect(page.data.map((e) => e.id)).toEqual(['e1']);
    expect(cursors.decode(page.next_cursor)).toMatchObject({ c: 'entities', k: 'e1' });
    expect(queries.list('a', {}, { limit: 1, after: 'e1', cursors })).toEqual({ data: [expect.objectContaining({ id: 'e2' })], next_cursor: null });
    expect(queries.list('a', { status: 'inactive' }, { limit: 50, after: null, cursors }).data.map((e) => e.id)).toEqual(['e2']);
    expect(queries.list('a', { entity_type: 'llc' }, { limit: 50, after: null, cursors }).data.map((e) => e.id)).toEqual(['e1']);
    expect(queries.list('a', { q: 'STR' }, { limit: 50, after: null, cursors }).data.map((e) => e.id)).toEqual(['e1']);
    expect(queries.list('a', { q: 'straße' }, { limit: 50, after: null, cursors }).data.map((e) => e.id)).toEqual(['e1']);
  });
});
