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
