import { ConflictError, PreconditionFailedError } from '@filing/platform';
import {
  DeciderSpecification,
  expectOwnershipBeforeIfMatch,
  recorded,
  resourceCommands,
  resourceEvents,
} from '@filing/platform/testing';
import { decide, evolve, initialJurisdictionState, type JurisdictionCommand } from './jurisdiction';
import {
  JURISDICTION_ADDED,
  JURISDICTION_UPDATED,
  type JurisdictionEvent,
  type JurisdictionFields,
} from './jurisdiction.events';

const ID = '0193a5b2-0000-7000-8000-0000000000a1';
const ENTITY = '0193a5b2-0000-7000-8000-0000000000e1';
const ACCOUNT = 'acc-1';
const STREAM = `jurisdiction-${ID}`;

const given = DeciderSpecification.for(
  { decide, evolve, initialState: initialJurisdictionState },
  { streamId: STREAM, accountId: ACCOUNT },
);
const { create: add, update } = resourceCommands<JurisdictionCommand>(ID, ACCOUNT, 'add');

const valid = { entity_id: ENTITY, code: 'US-DE', registration_type: 'domestic' };
const registration: JurisdictionFields = {
  entity_id: ENTITY,
  code: 'US-DE',
  registration_type: 'domestic',
  status: 'pending',
};
const { created: added, updated } = resourceEvents<JurisdictionEvent>(
  { created: JURISDICTION_ADDED, updated: JURISDICTION_UPDATED },
  { jurisdiction_id: ID },
  registration,
);

describe('jurisdiction: add', () => {
  it('adds a pending registration with version 0, its data carrying id, entity and status', () => {
    given([]).when(add(valid)).then(added);
    given([])
      .when(add(valid))
      .thenState({
        id: ID,
        account_id: ACCOUNT,
        ...registration,
        created_at: '2026-01-01T00:00:00.000Z',
        updated_at: '2026-01-01T00:00:00.000Z',
        version: 0,
      });
  });

  it('lists every broken rule at once: missing, malformed, unknown values and unwritable fields', () => {
    given([]).when(add({})).thenInvalid(['entity_id', 'code', 'registration_type']);
    given([])
      .when(add({ entity_id: 'e1', code: 'Delaware', registration_type: 'local' }))
      .thenInvalid(['entity_id', 'code', 'registration_type']);
    given([])
      .when(add({ ...valid, code: 'us-de', status: 'active', id: ID }))
      .thenInvalid(['code', 'status', 'id']);
    given([])
      .when(add({ entity_id: null, code: 5, registration_type: ['foreign'] }))
      .thenInvalid(['entity_id', 'code', 'registration_type']);
  });

  it.each(['GB-ENG', 'FR-75', 'CA-ON'])('accepts the code %s', (code) => {
    given([])
      .when(add({ ...valid, code, registration_type: 'foreign' }))
      .then((events) => expect(events).toHaveLength(1));
  });

  it('refuses to add a registration that exists', () => {
    given(added).when(add(valid)).thenThrows(ConflictError);
  });
});

describe('jurisdiction: update', () => {
  it('records the registration after the update and the fields that changed', () => {
    given(added)
      .when(update({ status: 'active', registration_type: 'domestic' }))
      .then(updated({ status: 'active' }));
    const moved = { status: 'inactive', registration_type: 'foreign' } as const;
    given(added)
      .when(update(moved))
      .thenState(
        (state) =>
          expect(state).toMatchObject({
            ...moved,
            created_at: '2026-01-01T00:00:00.000Z',
            updated_at: '2026-01-02T00:00:00.000Z',
            version: 1,
          }),
        '2026-01-02T00:00:00.000Z',
      );
    given([added, updated(moved)])
      .when(update({ status: 'pending' }))
      .thenState((state) => expect(state).toMatchObject({ status: 'pending', version: 2 }));
  });

  it('decides nothing when nothing changes (undefined is absent)', () => {
    given(added).when(update({})).thenNothingHappened();
    given(added)
      .when(update({ status: 'pending', registration_type: 'domestic', code: undefined }))
      .thenNothingHappened();
  });

  it('refuses bad values, null, and fields that cannot be changed, listing each', () => {
    given(added)
      .when(update({ status: 'closed', registration_type: null }))
      .thenInvalid(['registration_type', 'status']);
    given(added)
      .when(update({ code: 'US-NY', entity_id: ENTITY, id: ID }))
      .thenInvalid(['code', 'entity_id', 'id']);
  });

  it("answers a missing registration, or another account's, as not found, whatever version it asks for", () => {
    expectOwnershipBeforeIfMatch(given, [added], (account, version) => update({ status: 'active' }, account, version), {
      owner: ACCOUNT,
      version: 0,
    });
  });

  it('refuses an update for another version (If-Match), even a no-op, before checking the fields', () => {
    given(added)
      .when(update({}, ACCOUNT, 1))
      .thenThrows(PreconditionFailedError);
    given(added)
      .when(update({ status: 'closed' }, ACCOUNT, 1))
      .thenThrows(PreconditionFailedError);
    given(added)
      .when(update({ status: 'active' }, ACCOUNT, 0))
      .then(updated({ status: 'active' }));
  });

  it('ignores an update event for a registration it never saw', () => {
    expect(evolve(null, recorded(updated({ status: 'active' }), { streamId: STREAM, revision: 1 }))).toBeNull();
  });
});
