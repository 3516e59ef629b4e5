import { ConflictError, NotFoundError, PreconditionFailedError, type RecordedEnvelope, ValidationError } from '@filing/platform';
import {
  decide,
  type EntityCommand,
  type EntityState,
  evolve,
  fieldErrors,
  initialEntityState,
} from './entity';
import { ENTITY_CREATED, ENTITY_UPDATED, type EntityEvent } from './entity.events';

const ID = '0193a5b2-0000-7000-8000-000000000001';
const ACCOUNT = 'acc-1';

/** What the store gives evolve(): the event with its revision and metadata. */
function recorded(event: EntityEvent, revision: number, occurredAt: string, account = ACCOUNT): RecordedEnvelope<EntityEvent> {
  return {
    ...event,
    id: `event-${revision}`,
    streamId: `entity-${ID}`,
    revision: BigInt(revision),
    position: { commit: BigInt(revision), prepare: BigInt(revision) },
    metadata: {
      account_id: account,
      actor: 'client:c1',
      correlation_id: 'r',
      causation_id: null,
      occurred_at: occurredAt,
      schema_version: 1,
    },
  } as RecordedEnvelope<EntityEvent>;
}

/** decide, then evolve over what it decided: the state after the command. */
function run(state: EntityState, command: EntityCommand, occurredAt = '2026-01-01T00:00:00.000Z'): EntityState {
  const base = state === null ? 0 : state.version + 1;
  return decide(state, command).reduce((s, e, i) => evolve(s, recorded(e, base + i, occurredAt)), state);
}

const create = (input: Record<string, unknown>): EntityCommand =>
  ({ kind: 'create', entity_id: ID, account_id: ACCOUNT, input }) as unknown as EntityCommand;
const update = (changes: Record<string, unknown>, account = ACCOUNT, expected_version?: number): EntityCommand =>
  ({ kind: 'update', entity_id: ID, account_id: account, changes, expected_version }) as unknown as EntityCommand;

function fieldsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ValidationError) return err.errors.map((e) => e.field);
    throw err;
  }
  throw new Error('expected a ValidationError');
}

const created = () => run(initialEntityState, create({ name: 'Acme LLC', entity_type: 'llc' }));

describe('entity: create', () => {
  it('creates an active entity with version 0 and null optional fields', () => {
    expect(decide(initialEntityState, create({ name: 'Acme LLC', entity_type: 'llc' }))).toEqual([
      {
        type: ENTITY_CREATED,
        data: {
          entity_id: ID,
          name: 'Acme LLC',
          entity_type: 'llc',
          status: 'active',
          formation_jurisdiction: null,
          formation_date: null,
        },
      },
    ]);
    expect(created()).toEqual({
      id: ID,
      account_id: ACCOUNT,
      name: 'Acme LLC',
      entity_type: 'llc',
      status: 'active',
      formation_jurisdiction: null,
      formation_date: null,
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
      version: 0,
    });
  });

  it('keeps a formation jurisdiction and date', () => {
    const state = run(null, create({ name: 'A', entity_type: 'corporation', formation_jurisdiction: 'US-DE', formation_date: '2020-02-29' }));
    expect(state).toMatchObject({ formation_jurisdiction: 'US-DE', formation_date: '2020-02-29' });
  });

  it('lists every broken rule at once', () => {
    expect(
      fieldsOf(() =>
        decide(null, create({ name: ' ', entity_type: 'bank', formation_jurisdiction: 'Delaware', formation_date: '2023-02-30' })),
      ),
    ).toEqual(['name', 'entity_type', 'formation_jurisdiction', 'formation_date']);
    expect(fieldsOf(() => decide(null, create({ name: 'x'.repeat(201), entity_type: 'llc' })))).toEqual(['name']);
    expect(fieldsOf(() => decide(null, create({ name: 5, entity_type: null })))).toEqual(['name', 'entity_type']);
    expect(fieldsOf(() => decide(null, create({ name: 'A', entity_type: 'llc', status: 'inactive' })))).toEqual(['status']);
  });

  it('accepts a name of exactly 200 characters', () => {
    expect(decide(null, create({ name: 'x'.repeat(200), entity_type: 'llc' }))).toHaveLength(1);
  });

  it('refuses to create an entity that exists', () => {
    expect(() => decide(created(), create({ name: 'B', entity_type: 'llc' }))).toThrow(ConflictError);
  });
});

describe('entity: update', () => {
  it('records the entity after the update and the fields that changed', () => {
    const state = created();
    expect(decide(state, update({ name: 'Acme Inc', status: 'inactive', formation_date: undefined }))).toEqual([
      {
        type: ENTITY_UPDATED,
        data: {
          entity_id: ID,
          name: 'Acme Inc',
          entity_type: 'llc',
          status: 'inactive',
          formation_jurisdiction: null,
          formation_date: null,
          changed: ['name', 'status'],
        },
      },
    ]);
    expect(run(state, update({ name: 'Acme Inc', status: 'inactive' }), '2026-01-02T00:00:00.000Z')).toMatchObject({
      name: 'Acme Inc',
      status: 'inactive',
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-02T00:00:00.000Z',
      version: 1,
    });
  });

  it('sets and clears the optional fields', () => {
    const set = run(created(), update({ formation_jurisdiction: 'US-NY', formation_date: '2021-06-01' }));
    expect(set).toMatchObject({ formation_jurisdiction: 'US-NY', formation_date: '2021-06-01', version: 1 });
    const cleared = run(set, update({ formation_jurisdiction: null, formation_date: null }));
    expect(cleared).toMatchObject({ formation_jurisdiction: null, formation_date: null, version: 2 });
  });

  it('decides nothing when nothing changes', () => {
    const state = created();
    expect(decide(state, update({}))).toEqual([]);
    expect(decide(state, update({ name: 'Acme LLC', status: 'active', formation_date: null }))).toEqual([]);
  });

  it('refuses bad values, unwritable fields and null for required ones, listing each', () => {
    expect(
      fieldsOf(() => decide(created(), update({ name: null, status: 'closed', entity_type: 'corporation', id: 'x' }))),
    ).toEqual(['name', 'status', 'entity_type', 'id']);
  });

  it('answers a missing entity, or another account\'s, as not found, whatever version it asks for', () => {
    expect(() => decide(null, update({ name: 'B' }))).toThrow(NotFoundError);
    expect(() => decide(created(), update({ name: 'B' }, 'acc-2'))).toThrow(NotFoundError);
    expect(() => decide(created(), update({ name: 'B' }, 'acc-2', 0))).toThrow(NotFoundError);
    expect(() => decide(created(), update({ name: 'B' }, 'acc-2', 7))).toThrow(NotFoundError);
  });

  it('refuses an update for another version (If-Match), even a no-op', () => {
    expect(() => decide(created(), update({ name: 'B' }, ACCOUNT, 1))).toThrow(PreconditionFailedError);
    expect(() => decide(created(), update({}, ACCOUNT, 1))).toThrow(PreconditionFailedError);
    expect(decide(created(), update({ name: 'B' }, ACCOUNT, 0))).toHaveLength(1);
  });
});

describe('field rules', () => {
  // The predicates are the platform's (field-rules.ts); these check that the entity applies them.
  const jurisdictionErrors = (code: unknown) => fieldErrors({ formation_jurisdiction: code }).map((e) => e.field);
  const dateErrors = (date: unknown) => fieldErrors({ formation_date: date }).map((e) => e.field);
  it.each(['US-DE', 'GB-ENG', 'FR-75', 'CA-ON'])('%s is a jurisdiction code', (code) => expect(jurisdictionErrors(code)).toEqual([]));
  it.each(['us-de', 'US', 'USA-DE', 'US-DELA', 'US_DE', ''])('%j is not', (code) =>
    expect(jurisdictionErrors(code)).toEqual(['formation_jurisdiction']),
  );
  it.each(['2024-02-29', '1999-12-31'])('%s is a date', (date) => expect(dateErrors(date)).toEqual([]));
  it.each(['2023-02-29', '2024-13-01', '2024-1-1', '2024-01-01T00:00:00Z', 20240101])('%j is not', (date) =>
    expect(dateErrors(date)).toEqual(['formation_date']),
  );
});
