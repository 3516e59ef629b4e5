import { ConflictError, ValidationError } from '@filing/platform';
import { decideAccount, evolveAccount, initialAccountState } from './account';

describe('account', () => {
  const create = (name: string) => ({ type: 'CreateAccount' as const, accountId: 'a1', name });

  it('is created with a trimmed name', () => {
    const events = decideAccount(initialAccountState, create('  Acme  '));
    expect(events).toEqual([{ type: 'auth.AccountCreated', data: { account_id: 'a1', name: 'Acme' } }]);
    expect(events.reduce(evolveAccount, initialAccountState)).toEqual({ status: 'active', id: 'a1', name: 'Acme' });
  });

  it('refuses an empty or over-long name, naming the field', () => {
    for (const name of ['   ', 'x'.repeat(201)]) {
      expect(() => decideAccount(initialAccountState, create(name))).toThrow(ValidationError);
      try {
        decideAccount(initialAccountState, create(name));
      } catch (err) {
        expect((err as ValidationError).errors[0].field).toBe('name');
      }
    }
  });

  it('cannot be created twice', () => {
    const state = decideAccount(initialAccountState, create('Acme')).reduce(evolveAccount, initialAccountState);
    expect(() => decideAccount(state, create('Acme'))).toThrow(ConflictError);
  });
});
