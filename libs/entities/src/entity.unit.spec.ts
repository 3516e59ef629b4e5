import { ConflictError, NotFoundError, PreconditionFailedError } from '@filing/platform';
import {
  DeciderSpecification,
  expectOwnershipBeforeIfMatch,
  recorded,
  resourceCommands,
} from '@filing/platform/testing';
import { decide, type EntityCommand, evolve, fieldErrors, initialEntityState } from './entity';
import {
  ENTITY_CREATED,
  ENTITY_UPDATED,
  type EntityCreated,
  type EntityFields,
  type EntityUpdated,
} from './entity.events';

const ID = '0193a5b2-0000-7000-8000-000000000001';
const ACCOUNT = 'acc-1';
const STREAM = `entity-${ID}`;

const given = DeciderSpecification.for(
  { decide, evolve, initialState: initialEntityState },
  { streamId: STREAM, accountId: ACCOUNT },
);
const { create, update } = resourceCommands<EntityCommand>(ID, ACCOUNT);

const acme: EntityFields = {
  name: 'Acme LLC',
  entity_type: 'llc',
  status: 'active',
  formation_jurisdiction: null,
  formation_date: null,
};
const created: EntityCreated = { type: ENTITY_CREATED, data: { entity_id: ID, ...acme } };

describe('entity: create', () => {
  it('creates an active entity with version 0 and null optional fields', () => {
    given([])
      .when(create({ name: 'Acme LLC', entity_type: 'llc' }))
      .then([created]);
    given([])
      .when(create({ name: 'Acme LLC', entity_type: 'llc' }))
      .thenState({
        id: ID,
        account_id: ACCOUNT,
        ...acme,
        created_at: '2026-01-01T00:00:00.000Z',
        updated_at: '2026-01-01T00:00:00.000Z',
        version: 0,
      });
  });

  it('keeps a formation jurisdiction and date', () => {
    given([])
      .when(
        create({
          name: 'A',
          entity_type: 'corporation',
          formation_jurisdiction: 'US-DE',
          formation_date: '2020-02-29',
        }),
      )
      .thenState((state) =>
        expect(state).toMatchObject({ formation_jurisdiction: 'US-DE', formation_date: '2020-02-29' }),
      );
  });

  it('lists every broken rule at once', () => {
    given([])
      .when(
        create({ name: ' ', entity_type: 'bank', formation_jurisdiction: 'Delaware', formation_date: '2023-02-30' }),
      )
      .thenInvalid(['name', 'entity_type', 'formation_jurisdiction', 'formation_date']);
    given([])
      .when(create({ name: 'x'.repeat(201), entity_type: 'llc' }))
      .thenInvalid(['name']);
    given([])
      .when(create({ name: 5, entity_type: null }))
      .thenInvalid(['name', 'entity_type']);
    given([])
      .when(create({ name: 'A', entity_type: 'llc', status: 'inactive' }))
      .thenInvalid(['status']);
  });

  it('accepts a name of exactly 200 characters', () => {
    given([])
      .when(create({ name: 'x'.repeat(200), entity_type: 'llc' }))
      .then((events) => expect(events).toHaveLength(1));
  });

  it('refuses to create an entity that exists', () => {
    given([created])
      .when(create({ name: 'B', entity_type: 'llc' }))
      .thenThrows(ConflictError);
  });
});

describe('entity: update', () => {
  it('records the entity after the update and the fields that changed', () => {
    given([created])
      .when(update({ name: 'Acme Inc', status: 'inactive', formation_date: undefined }))
      .then([
        {
          type: ENTITY_UPDATED,
          data: { entity_id: ID, ...acme, name: 'Acme Inc', status: 'inactive', changed: ['name', 'status'] },
        },
      ]);
    given([created])
      .when(update({ name: 'Acme Inc', status: 'inactive' }))
      .thenState(
        (state) =>
          expect(state).toMatchObject({
            name: 'Acme Inc',
            status: 'inactive',
            created_at: '2026-01-01T00:00:00.000Z',
            updated_at: '2026-01-02T00:00:00.000Z',
            version: 1,
          }),
        '2026-01-02T00:00:00.000Z',
      );
  });

  it('sets and clears the optional fields', () => {
    const changes = { formation_jurisdiction: 'US-NY', formation_date: '2021-06-01' };
    const set: EntityUpdated = {
      type: ENTITY_UPDATED,
      data: { entity_id: ID, ...acme, ...changes, changed: ['formation_jurisdiction', 'formation_date'] },
    };
    given([created])
      .when(update(changes))
      .thenState((state) => expect(state).toMatchObject({ ...changes, version: 1 }));
    given([created, set])
      .when(update({ formation_jurisdiction: null, formation_date: null }))
      .thenState((state) =>
        expect(state).toMatchObject({ formation_jurisdiction: null, formation_date: null, version: 2 }),
      );
  });

  it('decides nothing when nothing changes', () => {
    given([created]).when(update({})).thenNothingHappened();
    given([created])
      .when(update({ name: 'Acme LLC', status: 'active', formation_date: null }))
      .thenNothingHappened();
  });

  it('refuses bad values, unwritable fields and null for required ones, listing each', () => {
    given([created])
      .when(update({ name: null, status: 'closed', entity_type: 'corporation', id: 'x' }))
      .thenInvalid(['name', 'status', 'entity_type', 'id']);
  });

  it("answers a missing entity, or another account's, as not found, whatever version it asks for", () => {
    expectOwnershipBeforeIfMatch(given, [created], (account, version) => update({ name: 'B' }, account, version), {
      owner: ACCOUNT,
      version: 0,
    });
    // Ownership comes from the account the creation was recorded in.
    given([recorded(created, { streamId: STREAM, revision: 0, accountId: 'acc-2' })])
      .when(update({ name: 'B' }))
      .thenThrows(NotFoundError);
  });

  it('refuses an update for another version (If-Match), even a no-op', () => {
    given([created])
      .when(update({}, ACCOUNT, 1))
      .thenThrows(PreconditionFailedError);
    given([created])
      .when(update({ name: 'B' }, ACCOUNT, 0))
      .then((events) => expect(events).toHaveLength(1));
  });
});

describe('field rules', () => {
  // The predicates are the platform's (field-rules.ts); these check that the entity applies them.
  const jurisdictionErrors = (code: unknown) => fieldErrors({ formation_jurisdiction: code }).map((e) => e.field);
  const dateErrors = (date: unknown) => fieldErrors({ formation_date: date }).map((e) => e.field);
  it.each(['US-DE', 'GB-ENG', 'FR-75', 'CA-ON'])('%s is a jurisdiction code', (code) =>
    expect(jurisdictionErrors(code)).toEqual([]),
  );
  it.each(['us-de', 'US', 'USA-DE', 'US-DELA', 'US_DE', ''])('%j is not', (code) =>
    expect(jurisdictionErrors(code)).toEqual(['formation_jurisdiction']),
  );
  it.each(['2024-02-29', '1999-12-31'])('%s is a date', (date) => expect(dateErrors(date)).toEqual([]));
  it.each(['2023-02-29', '2024-13-01', '2024-1-1', '2024-01-01T00:00:00Z', 20240101])('%j is not', (date) =>
    expect(dateErrors(date)).toEqual(['formation_date']),
  );
});
