import { ConflictError, NotFoundError, ValidationError, extend } from '@filing/platform';
import {
  AuthEvents,
  type ClientCreated,
  type ClientKind,
  type ClientPreviousSecretExpired,
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
      /** The secret a rotation with overlap replaced, while it may still be live (until `expiresAt`). */
      readonly previousSecret: { readonly generation: number; readonly expiresAt: string } | null;
    };

export type ClientEvent = ClientCreated | ClientSecretRotated | ClientPreviousSecretExpired | ClientRevoked;

/** The longest a replaced secret may keep working: 7 days. */
export const MAX_PREVIOUS_SECRET_SECONDS = 604_800;

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
  | {
      readonly type: 'RotateClientSecret';
      readonly secretHash: string;
      /** Seconds the replaced secret keeps working after `at` (0–604800; 0 or absent: it stops at once). */
      readonly previousSecretExpiresIn?: number;
      /** When the rotation is decided (ISO): the overlap is counted from it. */
      readonly at?: string;
    }
  | { readonly type: 'ExpirePreviousSecret'; readonly at: string }
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
        previousSecret: null,
      };
    case AuthEvents.ClientSecretRotated: {
      if (state.status === 'new') return state;
      const expiresAt = event.data.previous_secret_expires_at;
      // The secret being replaced becomes the previous one; a pending previous one is dropped.
      const previousSecret = expiresAt ? { generation: state.secretGeneration, expiresAt } : null;
      return extend(state, { secretGeneration: event.data.secret_generation, previousSecret });
    }
    case AuthEvents.ClientPreviousSecretExpired:
      return state.status === 'new' ? state : extend(state, { previousSecret: null });
    case AuthEvents.ClientRevoked:
      return state.status === 'new' ? state : extend(state, { status: 'revoked' });
    default:
      return state;
  }
}

type ClientDecider<T extends ClientCommand['type']> = (
  state: ClientState,
  command: Extract<ClientCommand, { type: T }>,
) => ClientEvent[];

/** The scopes a new client gets: those asked for, all within its kind's; by default all of its kind's. */
function scopesOf(command: Extract<ClientCommand, { type: 'CreateClient' }>): string[] {
  const allowed = ALLOWED_SCOPES[command.kind];
  if (command.scope === undefined) return [...allowed];
  const asked = parseScope(command.scope);
  if (asked === null) throw ValidationError.field('scope', 'scope must be a space-separated list of scopes');
  const beyond = asked.filter((s) => !allowed.includes(s));
  if (beyond.length > 0) {
    throw ValidationError.field(
      'scope',
      `a ${command.kind} client may only have the scopes ${formatScope(allowed)} (got ${beyond.join(' ')})`,
    );
  }
  return asked;
}

const create: ClientDecider<'CreateClient'> = (state, command) => {
  if (state.status !== 'new') throw new ConflictError(`Client ${command.clientId} already exists`);
  if (command.kind === 'customer' && command.accountId === null) {
    throw ValidationError.field('account_id', 'account_id is required for a customer client');
  }
  if (command.kind === 'operator' && command.accountId !== null) {
    throw ValidationError.field('account_id', 'an operator client belongs to no account');
  }
  return [
    {
      type: AuthEvents.ClientCreated,
      data: {
        client_id: command.clientId,
        account_id: command.accountId,
        kind: command.kind,
        scopes: scopesOf(command),
        secret_hash: command.secretHash,
        secret_generation: 1,
      },
    },
  ];
};

const expirePrevious: ClientDecider<'ExpirePreviousSecret'> = (state, command) => {
  if (state.status === 'new') throw new NotFoundError('No client with this id');
  // Nothing live to end (no overlap, it ran out, or the client is revoked): nothing is appended.
  const previous = state.status === 'active' ? state.previousSecret : null;
  if (!previous || Date.parse(previous.expiresAt) <= Date.parse(command.at)) return [];
  return [
    {
      type: AuthEvents.ClientPreviousSecretExpired,
      data: { client_id: state.clientId, secret_generation: previous.generation },
    },
  ];
};

const revoke: ClientDecider<'RevokeClient'> = (state) => {
  if (state.status === 'new') throw new NotFoundError('No client with this id');
  // Revoking twice is not an error: the client is revoked either way, nothing is appended.
  if (state.status === 'revoked') return [];
  return [{ type: AuthEvents.ClientRevoked, data: { client_id: state.clientId } }];
};

/** One decider per command (an unhandled command does not compile). */
const CLIENT_DECIDERS: { readonly [T in ClientCommand['type']]: ClientDecider<T> } = {
  CreateClient: create,
  RotateClientSecret: rotate,
  ExpirePreviousSecret: expirePrevious,
  RevokeClient: revoke,
};

export function decideClient(state: ClientState, command: ClientCommand): ClientEvent[] {
  const decide = CLIENT_DECIDERS[command.type] as ClientDecider<ClientCommand['type']>;
  return decide(state, command);
}

function rotate(state: ClientState, command: Extract<ClientCommand, { type: 'RotateClientSecret' }>): ClientEvent[] {
  if (state.status === 'new') throw new NotFoundError('No client with this id');
  if (state.status === 'revoked') throw ConflictError.invalidTransition('client', 'rotate the secret of', 'revoked');
  const seconds = command.previousSecretExpiresIn ?? 0;
  if (!Number.isInteger(seconds) || seconds < 0 || seconds > MAX_PREVIOUS_SECRET_SECONDS) {
    throw ValidationError.field(
      'previous_secret_expires_in',
      `previous_secret_expires_in must be a whole number of seconds from 0 to ${MAX_PREVIOUS_SECRET_SECONDS}`,
    );
  }
  const data: ClientSecretRotated['data'] = {
    client_id: state.clientId,
    secret_hash: command.secretHash,
    secret_generation: state.secretGeneration + 1,
  };
  if (seconds > 0) {
    if (command.at === undefined) throw new Error('A rotation with overlap needs its time');
    data.previous_secret_expires_at = new Date(Date.parse(command.at) + seconds * 1000).toISOString();
  }
  return [{ type: AuthEvents.ClientSecretRotated, data }];
}
