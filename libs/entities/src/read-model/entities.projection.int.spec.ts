import { type ReadModelFixture, readModelFixture } from '@filing/platform/testing';
import { ENTITY_CREATED, ENTITY_UPDATED, type EntityFields } from '../entity.events';
import { EntitiesProjection } from './entities.projection';
import { EntitiesQueries } from './entities.queries';

const fields = (name: string, entity_type: 'llc' | 'corporation' = 'llc'): EntityFields => ({
  name,
  entity_type,
  status: 'active',
  formation_jurisdiction: null,
  formation_date: null,
});

describe('entities read model', () => {
  let model: ReadModelFixture<EntitiesQueries>;

  beforeEach(() => {
    model = readModelFixture(new EntitiesProjection(), (runner) => new EntitiesQueries(runner));
    model.apply({ type: ENTITY_CREATED, data: { entity_id: 'e1', ...fields('Straße GmbH') } }, { accountId: 'a' });
    model.apply(
      { type: ENTITY_CREATED, data: { entity_id: 'e2', ...fields('Other', 'corporation') } },
      { accountId: 'a' },
    );
    model.apply({ type: ENTITY_CREATED, data: { entity_id: 'e3', ...fields('Foreign') } }, { accountId: 'b' });
    model.apply(
      {
        type: ENTITY_UPDATED,
        data: {
          entity_id: 'e2',
          ...fields('Other Inc', 'corporation'),
          status: 'inactive',
          changed: ['name', 'status'],
        },
      },
      { accountId: 'a', revision: 1, occurredAt: '2026-01-02T00:00:00.000Z' },
    );
  });
  afterEach(() => model.close());

  it('keeps each entity as of its last event, with version and times', () => {
    const inactive = {
      status: 'inactive',
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-02T00:00:00.000Z',
      version: 1,
    };
    expect(model.queries.get('a', 'e2')).toEqual({ id: 'e2', ...fields('Other Inc', 'corporation'), ...inactive });
  });

  it('answers only within the account', () => {
    expect(model.queries.get('b', 'e2')).toBeNull();
    expect(model.queries.exists('a', 'e1')).toBe(true);
    expect(model.queries.exists('b', 'e1')).toBe(false);
    expect(model.ids('b')).toEqual(['e3']);
  });

  it('filters and pages; q is a case-insensitive substring of the name', () => {
    model.expectPages('a', ['e1', 'e2'], 1);
    expect(model.ids('a', { status: 'inactive' })).toEqual(['e2']);
    expect(model.ids('a', { entity_type: 'llc' })).toEqual(['e1']);
    expect(model.ids('a', { q: 'STR' })).toEqual(['e1']);
    expect(model.ids('a', { q: 'straße' })).toEqual(['e1']);
    // A literal substring: LIKE's wildcards mean nothing here.
    expect(model.ids('a', { q: '%' })).toEqual([]);
  });
});
