import { ConflictError, NotFoundError, PreconditionFailedError } from '@filing/platform';
import { decideThenEvolve, validationFields } from '../../platform/src/testing/domain';
import { decide, evolve, initialJurisdictionState, type JurisdictionCommand } from './jurisdiction';
import { JURISDICTION_ADDED, JURISDICTION_UPDATED } from './jurisdiction.events';

const ID = '0193a5b2-0000-7000-8000-0000000000a1';
const ENTITY = '0193a5b2-0000-7000-8000-0000000000e1';
const ACCOUNT = 'acc-1';

const run = decideThenEvolve({ decide, evolve }, `jurisdiction-${ID}`, ACCOUNT);
const add = (input: Record<string, unknown>): JurisdictionCommand =>
  ({ kind: 'add', jurisdiction_id: ID, account_id: ACCOUNT, input }) as unknown as JurisdictionCommand;
const update = (changes: Record<string, unknown>, account = ACCOUNT, expected_version?: number): JurisdictionCommand =>
  ({ kind: 'update', jurisdiction_id: ID, account_id: account, changes, expected_version }) as unknown as JurisdictionCommand;

const valid = { entity_id: ENTITY, code: 'US-DE', registration_type: 'domestic' };
const added = () => run(initialJurisdictionState, add(valid));

describe('jurisdiction: add', () => {
  it('adds a pending registration with version 0, its data carrying id, entity and status', () => {
    expect(decide(initialJurisdictionState, add(valid))).toEqual([
      { type: JURISDICTION_ADDED, data: { jurisdiction_id: ID, entity_id: ENTITY, code: 'US-DE', registration_type: 'domestic', status: 'pending' } },
    ]);
    expect(added()).toEqual({
      id: ID,
      account_id: ACCOUNT,
      entity_id: ENTITY,
      code: 'US-DE',
      registration_type: 'domestic',
      status: 'pending',
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
      version: 0,
    });
  });

  it('lists every broken rule at once: missing, malformed, unknown values and unwritable fields', () => {
    expect(validationFields(() => decide(null, add({})))).toEqual(['entity_id', 'code', 'registration_type']);
    expect(validationFields(() => decide(null, add({ entity_id: 'e1', code: 'Delaware', registration_type: 'local' })))).toEqual([
      'entity_id',
      'code',
      'registration_type',
    ]);
    expect(validationFields(() => decide(null, add({ ...valid, code: 'us-de', status: 'active', id: ID })))).toEqual(['code', 'status', 'id']);
    expect(validationFields(() => decide(null, add({ entity_id: null, code: 5, registration_type: ['foreign'] })))).toEqual([
      'entity_id',
      'code',
      'registration_type',
    ]);
  });

  it.each(['GB-ENG', 'FR-75', 'CA-ON'])('accepts the code %s', (code) => {
    expect(decide(null, add({ ...valid, code, registration_type: 'foreign' }))).toHaveLength(1);
  });

  it('refuses to add a registration that exists', () => {
    expect(() => decide(added(), add(valid))).toThrow(ConflictError);
  });
});

describe('jurisdiction: update', () => {
  it('records the registration after the update and the fields that changed', () => {
    const state = added();
    expect(decide(state, update({ status: 'active', registration_type: 'domestic' }))).toEqual([
      {
        type: JURISDICTION_UPDATED,
        data: { jurisdiction_id: ID, entity_id: ENTITY, code: 'US-DE', registration_type: 'domestic', status: 'active', changed: ['status'] },
      },
    ]);
    const next = run(state, update({ status: 'inactive', registration_type: 'foreign' }), '2026-01-02T00:00:00.000Z');
    expect(next).toMatchObject({
      status: 'inactive',
      registration_type: 'foreign',
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-02T00:00:00.000Z',
      version: 1,
    });
    expect(run(next, update({ status: 'pending' }))).toMatchObject({ status: 'pending', version: 2 });
  });

  it('decides nothing when nothing changes (undefined is absent)', () => {
    expect(decide(added(), update({}))).toEqual([]);
    expect(decide(added(), update({ status: 'pending', registration_type: 'domestic', code: undefined }))).toEqual([]);
  });

  it('refuses bad values, null, and fields that cannot be changed, listing each', () => {
    expect(validationFields(() => decide(added(), update({ status: 'closed', registration_type: null })))).toEqual([
      'registration_type',
      'status',
    ]);
    expect(validationFields(() => decide(added(), update({ code: 'US-NY', entity_id: ENTITY, id: ID })))).toEqual(['code', 'entity_id', 'id']);
  });

  it('answers a missing registration, or another account\'s, as not found, whatever version it asks for', () => {
    expect(() => decide(null, update({ status: 'active' }))).toThrow(NotFoundError);
    expect(() => decide(added(), update({ status: 'active' }, 'acc-2'))).toThrow(NotFoundError);
    expect(() => decide(added(), update({ status: 'active' }, 'acc-2', 0))).toThrow(NotFoundError);
    expect(() => decide(added(), update({ status: 'active' }, 'acc-2', 9))).toThrow(NotFoundError);
  });

  it('refuses an update for another version (If-Match), even a no-op, before checking the fields', () => {
    expect(() => decide(added(), update({ status: 'active' }, ACCOUNT, 1))).toThrow(PreconditionFailedError);
    expect(() => decide(added(), update({}, ACCOUNT, 1))).toThrow(PreconditionFailedError);
    expect(() => decide(added(), update({ status: 'closed' }, ACCOUNT, 1))).toThrow(PreconditionFailedError);
    expect(decide(added(), update({ status: 'active' }, ACCOUNT, 0))).toHaveLength(1);
  });

  it('ignores an update event for a registration it never saw', () => {
    const event = decide(added(), update({ status: 'active' }))[0];
    expect(evolve(null, { ...event, metadata: { occurred_at: 'x' }, revision: 1n } as never)).toBeNull();
  });
});
