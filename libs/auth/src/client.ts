import { ConflictError, NotFoundError, ValidationError, extend } from '@filing/platform';
import {
  AuthEvents,
  type ClientCreated,
  type ClientKind,
  type ClientRevoked,
  type ClientSecretRotated,
} from './auth.events';
import { ALLOWED_SCOPES, formatScope, parseScope } from './scopes';

/** An API client (OAuth 2.0 client credentials): a customer client of one account, or an operator client. */
export type ClientState =
  | { readonly status: 'new' }
  | {
      readonly status: 'active' | 'revoked';
      readonly clientId: string;
      readonly accountId: string | null;
      readonly kind: ClientKind;
      readonly scopes: readonly string[];
      readonly secretGeneration: number;
    };

export type ClientEvent = ClientCreated | ClientSecretRotated | ClientRevoked;

export type ClientCommand =
  | {
      readonly type: 'CreateClient';
      readonly clientId: string;
      readonly accountId: string | null;
      readonly kind: ClientKind;
      /** Space-separated; default: everything the kind allows. */
      readonly scope?: string;
      readonly secretHash: string;
    }
  | { readonly type: 'RotateClientSecret'; readonly secretHash: string }
  | { readonly type: 'RevokeClient' };

export const initialClientState: ClientState = { status: 'new' };

export function evolveClient(state: ClientState, event: ClientEvent): ClientState {
  switch (event.type) {
    case AuthEvents.ClientCreated:
      return {
        status: 'active',
        clientId: event.data.client_id,
        accountId: event.data.account_id,
        kind: event.data.kind,
        scopes: event.data.scopes,
        secretGeneration: event.data.secret_generation,
      };
    case AuthEvents.ClientSecretRotated:
      return state.status === 'new' ? state : extend(state, { secretGeneration: event.data.secret_generation });
    case AuthEvents.ClientRevoked:
      return state.status === 'new' ? state : extend(state, { status: 'revoked' });
    default:
      return state;
  }
}

export function decideClient(state: ClientState, command: ClientCommand): ClientEvent[] {
  switch (command.type) {
    case 'CreateClient': {
      if (state.status !== 'new') throw new ConflictError(`Client ${command.clientId} already exists`);
      const allowed = ALLOWED_SCOPES[command.kind];
      if (command.kind === 'customer' && command.accountId === null) {
        throw ValidationError.field('account_id', 'account_id is required for a customer client');
      }
      if (command.kind === 'operator' && command.accountId !== null) {
        throw ValidationError.field('account_id', 'an operator client belongs to no account');
      }
      let scopes = [...allowed];
      if (command.scope !== undefined) {
        const asked = parseScope(command.scope);
        if (asked === null) throw ValidationError.field('scope', 'scope must be a space-separated list of scopes');
        const beyond = asked.filter((s) => !allowed.includes(s));
        if (beyond.length > 0) {
          throw ValidationError.field(
            'scope',
            `a ${command.kind} client may only have the scopes ${formatScope(allowed)} (got ${beyond.join(' ')})`,
          );
        }
        scopes = asked;
      }
      return [
        {
          type: AuthEvents.ClientCreated,
          data: {
            client_id: command.clientId,
            account_id: command.accountId,
            kind: command.kind,
            scopes,
            secret_hash: command.secretHash,
            secret_generation: 1,
          },
        },
      ];
    }
    case 'RotateClientSecret': {
      if (state.status === 'new') throw new NotFoundError('No client with this id');
      if (state.status === 'revoked')
        throw ConflictError.invalidTransition('client', 'rotate the secret of', 'revoked');
      return [
        {
          type: AuthEvents.ClientSecretRotated,
          data: {
            client_id: state.clientId,
            secret_hash: command.secretHash,
            secret_generation: state.secretGeneration + 1,
          },
        },
      ];
    }
    case 'RevokeClient': {
      if (state.status === 'new') throw new NotFoundError('No client with this id');
      // Revoking twice is not an error: the client is revoked either way, nothing is appended.
      if (state.status === 'revoked') return [];
      return [{ type: AuthEvents.ClientRevoked, data: { client_id: state.clientId } }];
    }
  }
}
