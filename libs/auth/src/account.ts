import { ConflictError, ValidationError } from '@filing/platform';
import { AuthEvents, type AccountCreated } from './auth.events';

/** An account: what every customer resource, client and user belongs to. */
export type AccountState =
  { readonly status: 'new' } | { readonly status: 'active'; readonly id: string; readonly name: string };

export type AccountEvent = AccountCreated;
export type AccountCommand = { readonly type: 'CreateAccount'; readonly accountId: string; readonly name: string };

export const initialAccountState: AccountState = { status: 'new' };
export const MAX_ACCOUNT_NAME = 200;

export function evolveAccount(state: AccountState, event: AccountEvent): AccountState {
  switch (event.type) {
    case AuthEvents.AccountCreated:
      return { status: 'active', id: event.data.account_id, name: event.data.name };
    default:
      return state;
  }
}

export function decideAccount(state: AccountState, command: AccountCommand): AccountEvent[] {
  switch (command.type) {
    case 'CreateAccount': {
      if (state.status !== 'new') throw new ConflictError(`Account ${command.accountId} already exists`);
      const name = command.name.trim();
      if (name.length === 0) throw ValidationError.field('name', 'name must not be empty');
      if (name.length > MAX_ACCOUNT_NAME) {
        throw ValidationError.field('name', `name must be at most ${MAX_ACCOUNT_NAME} characters`);
      }
      return [{ type: AuthEvents.AccountCreated, data: { account_id: command.accountId, name } }];
    }
  }
}
