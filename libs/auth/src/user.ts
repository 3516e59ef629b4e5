import { ConflictError, ValidationError } from '@filing/platform';
import { AuthEvents, type UserCreated } from './auth.events';

/** A settings-screen user of one account. Its email is unique service-wide (a reservation stream). */
export type UserState =
  | { readonly status: 'new' }
  | { readonly status: 'active'; readonly id: string; readonly accountId: string; readonly email: string };

export type UserEvent = UserCreated;
export type UserCommand = {
  readonly type: 'CreateUser';
  readonly userId: string;
  readonly accountId: string;
  readonly email: string;
  readonly passwordHash: string;
};

export const initialUserState: UserState = { status: 'new' };
export const MIN_PASSWORD_LENGTH = 8;
export const MAX_PASSWORD_LENGTH = 1024;

/** Emails compare case-insensitively, surrounding spaces ignored. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function evolveUser(state: UserState, event: UserEvent): UserState {
  switch (event.type) {
    case AuthEvents.UserCreated:
      return { status: 'active', id: event.data.user_id, accountId: event.data.account_id, email: event.data.email };
    default:
      return state;
  }
}

export function decideUser(state: UserState, command: UserCommand): UserEvent[] {
  switch (command.type) {
    case 'CreateUser': {
      if (state.status !== 'new') throw new ConflictError(`User ${command.userId} already exists`);
      return [
        {
          type: AuthEvents.UserCreated,
          data: {
            user_id: command.userId,
            account_id: command.accountId,
            email: normalizeEmail(command.email),
            password_hash: command.passwordHash,
          },
        },
      ];
    }
  }
}

/** Checked before hashing (scrypt is slow): every problem at once. */
export function validateNewUser(email: string, password: string): void {
  const errors = [];
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(normalizeEmail(email)) || email.length > 254) {
    errors.push({ field: 'email', message: 'email must be an email address' });
  }
  if (password.length < MIN_PASSWORD_LENGTH || password.length > MAX_PASSWORD_LENGTH) {
    errors.push({
      field: 'password',
      message: `password must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters long`,
    });
  }
  if (errors.length > 0) throw new ValidationError(errors);
}
