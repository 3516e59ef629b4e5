import { ConflictError, NotFoundError, ValidationError } from '@filing/platform';
import { type ClientCommand, type ClientState, decideClient, evolveClient, initialClientState } from './client';

const create = (overrides: Partial<Extract<ClientCommand, { type: 'CreateClient' }>> = {}): ClientCommand => ({
  type: 'CreateClient',
  clientId: 'c1',
  accountId: 'a1',
  kind: 'customer',
  secretHash: 'scrypt$hash',
  ...overrides,
});

function run(state: ClientState, ...commands: ClientCommand[]): ClientState {
  return commands.reduce((s, c) => decideClient(s, c).reduce(evolveClient, s), state);
}

function fieldOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof ValidationError) return err.errors.map((e) => e.field).join(',');
    throw err;
  }
  throw new Error('did not throw');
}

describe('client', () => {
  it('a customer client gets read and write unless narrowed', () => {
    expect(decideClient(initialClientState, create())).toEqual([
      {
        type: 'auth.ClientCreated',
        data: {
          client_id: 'c1',
          account_id: 'a1',
          kind: 'customer',
          scopes: ['read', 'write'],
          secret_hash: 'scrypt$hash',
          secret_generation: 1,
        },
      },
    ]);
    expect(decideClient(initialClientState, create({ scope: 'read' }))[0].data).toMatchObject({ scopes: ['read'] });
  });

  it('an operator client has the operator scope and no account', () => {
    const [event] = decideClient(initialClientState, create({ kind: 'operator', accountId: null }));
    expect(event.data).toMatchObject({ kind: 'operator', account_id: null, scopes: ['operator'] });
  });

  it('refuses scopes beyond its kind and missing or extra accounts, naming the field', () => {
    expect(fieldOf(() => decideClient(initialClientState, create({ scope: 'read operator' })))).toBe('scope');
    expect(
      fieldOf(() => decideClient(initialClientState, create({ kind: 'operator', accountId: null, scope: 'write' }))),
    ).toBe('scope');
    expect(fieldOf(() => decideClient(initialClientState, create({ accountId: null })))).toBe('account_id');
    expect(fieldOf(() => decideClient(initialClientState, create({ kind: 'operator' })))).toBe('account_id');
  });

  it('rotating the secret bumps the generation and replaces the hash', () => {
    const state = run(initialClientState, create());
    const events = decideClient(state, { type: 'RotateClientSecret', secretHash: 'scrypt$new' });
    expect(events).toEqual([
      { type: 'auth.ClientSecretRotated', data: { client_id: 'c1', secret_hash: 'scrypt$new', secret_generation: 2 } },
    ]);
    expect(events.reduce(evolveClient, state)).toMatchObject({ status: 'active', secretGeneration: 2 });
  });

  it('revoking is final and idempotent; a revoked client cannot rotate', () => {
    const revoked = run(initialClientState, create(), { type: 'RevokeClient' });
    expect(revoked.status).toBe('revoked');
    expect(decideClient(revoked, { type: 'RevokeClient' })).toEqual([]);
    expect(() => decideClient(revoked, { type: 'RotateClientSecret', secretHash: 'x' })).toThrow(ConflictError);
  });

  it('an unknown client cannot be rotated or revoked; a known one cannot be created again', () => {
    expect(() => decideClient(initialClientState, { type: 'RevokeClient' })).toThrow(NotFoundError);
    expect(() => decideClient(initialClientState, { type: 'RotateClientSecret', secretHash: 'x' })).toThrow(
      NotFoundError,
    );
    expect(() => decideClient(run(initialClientState, create()), create())).toThrow(ConflictError);
  });
});

describe('client secret rotation with overlap', () => {
  const T = '2026-01-01T00:00:00.000Z';
  const later = (seconds: number) => new Date(Date.parse(T) + seconds * 1000).toISOString();
  const rotate = (previousSecretExpiresIn?: number, at = T): ClientCommand => ({
    type: 'RotateClientSecret',
    secretHash: 'scrypt$new',
    previousSecretExpiresIn,
    at,
  });

  it('keeps the replaced secret until the event says, counted from the rotation', () => {
    const state = run(initialClientState, create());
    const [event] = decideClient(state, rotate(5));
    expect(event).toEqual({
      type: 'auth.ClientSecretRotated',
      data: { client_id: 'c1', secret_hash: 'scrypt$new', secret_generation: 2, previous_secret_expires_at: later(5) },
    });
    expect(evolveClient(state, event)).toMatchObject({
      secretGeneration: 2,
      previousSecret: { generation: 1, expiresAt: later(5) },
    });
  });

  it('with 0 (the default) the replaced secret stops at once, as before', () => {
    const state = run(initialClientState, create());
    expect(decideClient(state, rotate(0))[0].data).not.toHaveProperty('previous_secret_expires_at');
    expect(run(state, rotate(0))).toMatchObject({ secretGeneration: 2, previousSecret: null });
  });

  it('a second rotation replaces the pending previous secret: at most two are live', () => {
    const twice = run(initialClientState, create(), rotate(3600), rotate(60, later(10)));
    expect(twice).toMatchObject({ secretGeneration: 3, previousSecret: { generation: 2, expiresAt: later(70) } });
    // A rotation without overlap drops the pending one too.
    expect(run(twice, rotate(0))).toMatchObject({ secretGeneration: 4, previousSecret: null });
  });

  it('refuses an overlap outside 0..7 days or not whole seconds, naming the field', () => {
    const state = run(initialClientState, create());
    for (const bad of [-1, 604_801, 1.5, Number.NaN]) {
      expect(fieldOf(() => decideClient(state, rotate(bad)))).toBe('previous_secret_expires_in');
    }
    expect(decideClient(state, rotate(604_800))[0].data).toMatchObject({ previous_secret_expires_at: later(604_800) });
  });

  it('expire-previous-secret ends a live overlap; with none live it appends nothing', () => {
    const overlapping = run(initialClientState, create(), rotate(60));
    const events = decideClient(overlapping, { type: 'ExpirePreviousSecret', at: later(1) });
    expect(events).toEqual([
      { type: 'auth.ClientPreviousSecretExpired', data: { client_id: 'c1', secret_generation: 1 } },
    ]);
    expect(events.reduce(evolveClient, overlapping)).toMatchObject({ secretGeneration: 2, previousSecret: null });
    expect(decideClient(overlapping, { type: 'ExpirePreviousSecret', at: later(60) })).toEqual([]);
    expect(decideClient(run(initialClientState, create()), { type: 'ExpirePreviousSecret', at: T })).toEqual([]);
    const revoked = run(overlapping, { type: 'RevokeClient' });
    expect(decideClient(revoked, { type: 'ExpirePreviousSecret', at: later(1) })).toEqual([]);
    expect(() => decideClient(initialClientState, { type: 'ExpirePreviousSecret', at: T })).toThrow(NotFoundError);
  });
});
