import { ConflictError, type ValidationError } from '@filing/platform';
import { decideUser, evolveUser, initialUserState, normalizeEmail, validateNewUser } from './user';

describe('user', () => {
  const create = {
    type: 'CreateUser' as const,
    userId: 'u1',
    accountId: 'a1',
    email: ' Ann@Example.COM ',
    passwordHash: 'scrypt$h',
  };

  it('is created with a normalized email and only the password hash', () => {
    const events = decideUser(initialUserState, create);
    expect(events).toEqual([
      {
        type: 'auth.UserCreated',
        data: { user_id: 'u1', account_id: 'a1', email: 'ann@example.com', password_hash: 'scrypt$h' },
      },
    ]);
    const state = events.reduce(evolveUser, initialUserState);
    expect(state).toEqual({ status: 'active', id: 'u1', accountId: 'a1', email: 'ann@example.com' });
    expect(() => decideUser(state, create)).toThrow(ConflictError);
  });

  it('normalizes emails for uniqueness', () => {
    expect(normalizeEmail('  A@B.Co ')).toBe('a@b.co');
  });

  it('lists every bad field of a new user at once', () => {
    let error: ValidationError | undefined;
    try {
      validateNewUser('not-an-email', 'short');
    } catch (err) {
      error = err as ValidationError;
    }
    expect(error?.errors.map((e) => e.field)).toEqual(['email', 'password']);
    expect(() => validateNewUser('ann@example.com', 'long enough')).not.toThrow();
  });
});
