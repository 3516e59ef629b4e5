import { CursorCodec, type ProjectionRunner } from '@filing/platform';
import Database from 'better-sqlite3';
import { recorded } from '@filing/platform/testing';
import { JURISDICTION_ADDED, JURISDICTION_UPDATED, type JurisdictionEvent } from '../jurisdiction.events';
import { JurisdictionsProjection } from './jurisdictions.projection';
import { JurisdictionsQueries } from './jurisdictions.queries';

const cursors = CursorCodec.random();

const E1 = '0193a5b2-0000-7000-8000-0000000000e1';
const E2 = '0193a5b2-0000-7000-8000-0000000000e2';

function added(id: string, entity_id: string, code: string, account = 'a'): [JurisdictionEvent, string, number, string] {
  return [
    { type: JURISDICTION_ADDED, data: { jurisdiction_id: id, entity_id, code, registration_type: 'domestic', status: 'pending' } },
    account,
    0,
    '2026-01-01T00:00:00.000Z',
  ];
}

describe('jurisdictions read model', () => {
  let db: Database.Database;
  let queries: JurisdictionsQueries;
  const projection = new JurisdictionsProjection();

  beforeEach(() => {
    db = new Database(':memory:');
    projection.setup(db);
    queries = new JurisdictionsQueries({ db } as unknown as ProjectionRunner);
    const events: [JurisdictionEvent, string, number, string][] = [
      added('j1', E1, 'US-DE'),
      added('j2', E1, 'US-NY'),
      added('j3', E2, 'US-CA'),
      added('j4', E1, 'GB-ENG', 'b'),
      [
        {
          type: JURISDICTION_UPDATED,
          data: { jurisdiction_id: 'j2', entity_id: E1, code: 'US-NY', registration_type: 'foreign', status: 'active', changed: ['registration_type', 'status'] },
        },
        'a',
        1,
        '2026-01-02T00:00:00.000Z',
      ],
    ];
    events.forEach(([event, accountId, revision, occurredAt], position) =>
      projection.apply(db, recorded(event, { streamId: `jurisdiction-${event.data.jurisdiction_id}`, revision, occurredAt, accountId, position })),
    );
  });
  afterEach(() => db.close());

  it('keeps each registration as of its last event, with version and times', () => {
    expect(queries.get('a', 'j2')).toEqual({
      id: 'j2',
      entity_id: E1,
      code: 'US-NY',
      registration_type: 'foreign',
      status: 'active',
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-02T00:00:00.000Z',
      version: 1,
    });
  });

  it('answers only within the account', () => {
    expect(queries.get('b', 'j2')).toBeNull();
    expect(queries.get('a', 'j4')).toBeNull();
    expect(queries.list('b', {}, { limit: 50, after: null, cursors }).data.map((j) => j.id)).toEqual(['j4']);
    expect(queries.list('b', { entity_id: E2 }, { limit: 50, after: null, cursors }).data).toEqual([]);
  });

  it('filters by entity and status (an entity id in capitals too), and pages', () => {
    const page = queries.list('a', {}, { limit: 2, after: null, cursors });
    expect(page.data.map((j) => j.id)).toEqual(['j1', 'j2']);
    expect(cursors.decode(page.next_cursor)).toMatchObject({ c: 'jurisdictions', k: 'j2' });
    expect(queries.list('a', {}, { limit: 2, after: 'j2', cursors })).toEqual({ data: [expect.objectContaining({ id: 'j3' })], next_cursor: null });
    expect(queries.list('a', { entity_id: E1 }, { limit: 50, after: null, cursors }).data.map((j) => j.id)).toEqual(['j1', 'j2']);
    expect(queries.list('a', { entity_id: E1.toUpperCase() }, { limit: 50, after: null, cursors }).data.map((j) => j.id)).toEqual(['j1', 'j2']);
    expect(queries.list('a', { status: 'pending' }, { limit: 50, after: null, cursors }).data.map((j) => j.id)).toEqual(['j1', 'j3']);
    expect(queries.list('a', { entity_id: E1, status: 'active' }, { limit: 50, after: null, cursors }).data.map((j) => j.id)).toEqual(['j2']);
  });
});
