import { type ReadModelFixture, readModelFixture } from '@filing/platform/testing';
import { JURISDICTION_ADDED, JURISDICTION_UPDATED, type JurisdictionAdded } from '../jurisdiction.events';
import { JurisdictionsProjection } from './jurisdictions.projection';
import { JurisdictionsQueries } from './jurisdictions.queries';

const E1 = '0193a5b2-0000-7000-8000-0000000000e1';
const E2 = '0193a5b2-0000-7000-8000-0000000000e2';

const added = (id: string, entity_id: string, code: string): JurisdictionAdded => ({
  type: JURISDICTION_ADDED,
  data: { jurisdiction_id: id, entity_id, code, registration_type: 'domestic', status: 'pending' },
});

describe('jurisdictions read model', () => {
  let model: ReadModelFixture<JurisdictionsQueries>;

  beforeEach(() => {
    model = readModelFixture(new JurisdictionsProjection(), (runner) => new JurisdictionsQueries(runner));
    model.apply(added('j1', E1, 'US-DE'), { accountId: 'a' });
    model.apply(added('j2', E1, 'US-NY'), { accountId: 'a' });
    model.apply(added('j3', E2, 'US-CA'), { accountId: 'a' });
    model.apply(added('j4', E1, 'GB-ENG'), { accountId: 'b' });
    const data = { ...added('j2', E1, 'US-NY').data, registration_type: 'foreign', status: 'active' } as const;
    model.apply(
      { type: JURISDICTION_UPDATED, data: { ...data, changed: ['registration_type', 'status'] } },
      { accountId: 'a', revision: 1, occurredAt: '2026-01-02T00:00:00.000Z' },
    );
  });
  afterEach(() => model.close());

  it('keeps each registration as of its last event, with version and times', () => {
    const { jurisdiction_id, ...registration } = added('j2', E1, 'US-NY').data;
    const after = {
      registration_type: 'foreign',
      status: 'active',
      updated_at: '2026-01-02T00:00:00.000Z',
      version: 1,
    };
    expect(model.queries.get('a', jurisdiction_id)).toEqual({
      id: jurisdiction_id,
      ...registration,
      created_at: '2026-01-01T00:00:00.000Z',
      ...after,
    });
  });

  it('answers only within the account', () => {
    expect(model.queries.get('b', 'j2')).toBeNull();
    expect(model.queries.get('a', 'j4')).toBeNull();
    expect(model.ids('b')).toEqual(['j4']);
    expect(model.ids('b', { entity_id: E2 })).toEqual([]);
  });

  it('filters by entity and status (an entity id in capitals too), and pages', () => {
    model.expectPages('a', ['j1', 'j2', 'j3'], 2);
    expect(model.ids('a', { entity_id: E1 })).toEqual(['j1', 'j2']);
    expect(model.ids('a', { entity_id: E1.toUpperCase() })).toEqual(['j1', 'j2']);
    expect(model.ids('a', { status: 'pending' })).toEqual(['j1', 'j3']);
    expect(model.ids('a', { entity_id: E1, status: 'active' })).toEqual(['j2']);
  });

  it("finds an entity's registration in a jurisdiction, within the account", () => {
    expect(model.queries.findByEntityAndCode('a', E1, 'US-NY')).toMatchObject({ id: 'j2', status: 'active' });
    expect(model.queries.findByEntityAndCode('a', E1, 'US-CA')).toBeNull();
    expect(model.queries.findByEntityAndCode('b', E1, 'US-NY')).toBeNull();
  });
});
