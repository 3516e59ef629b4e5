import type { CreateAccountResult } from '../commands/create-account';
import type { CreateClientResult } from '../commands/create-client';
import type { CreateUserResult } from '../commands/create-user';
import type { AccountRow, ClientUsageRow, UserRow } from './auth.queries';

/** The operator API's JSON shapes (snake_case; `version` = the stream revision). */
export function accountView(row: AccountRow) {
  return { id: row.id, name: row.name, created_at: row.created_at, updated_at: row.updated_at, version: row.version };
}

type ClientViewRow = Omit<ClientUsageRow, 'secret_hash' | 'previous_secret_hash'>;

/**
 * A client. `previous_secret_expires_at` and `previous_secret_last_used_at` are null unless a
 * secret replaced with overlap still works at `now`: its owner sees whether anything still uses it.
 */
export function clientView(row: ClientViewRow, now = Date.now()) {
  const expiresAt = row.status === 'active' ? row.previous_secret_expires_at : null;
  const overlap = expiresAt !== null && now < expiresAt;
  return {
    id: row.client_id,
    client_id: row.client_id,
    account_id: row.account_id,
    kind: row.kind,
    scope: row.scopes,
    status: row.status,
    secret_generation: row.secret_generation,
    secret_last_used_at: row.secret_last_used_at,
    previous_secret_expires_at: overlap ? new Date(expiresAt).toISOString() : null,
    previous_secret_last_used_at: overlap ? row.previous_secret_last_used_at : null,
    created_at: row.created_at,
    updated_at: row.updated_at,
    version: row.version,
  };
}

export function userView(row: UserRow) {
  return {
    id: row.id,
    account_id: row.account_id,
    email: row.email,
    created_at: row.created_at,
    updated_at: row.updated_at,
    version: row.version,
  };
}

/*
 * The same shapes for a resource just created, from its command's result: what a fresh stream's
 * first event makes (version 0, updated when created, a client active at secret generation 1).
 * The CLI prints these, so its output is the operator API's answer for the same resource.
 */
export const createdAccountView = (r: CreateAccountResult) =>
  accountView({ id: r.accountId, name: r.name, created_at: r.createdAt, updated_at: r.createdAt, version: 0 });

export const createdClientView = (r: CreateClientResult) =>
  clientView({
    client_id: r.clientId,
    account_id: r.accountId,
    kind: r.kind,
    scopes: r.scopes.join(' '),
    status: 'active',
    secret_generation: 1,
    secret_last_used_at: null,
    previous_secret_generation: null,
    previous_secret_expires_at: null,
    previous_secret_last_used_at: null,
    created_at: r.createdAt,
    updated_at: r.createdAt,
    version: 0,
  });

export const createdUserView = (r: CreateUserResult) =>
  userView({
    id: r.userId,
    account_id: r.accountId,
    email: r.email,
    created_at: r.createdAt,
    updated_at: r.createdAt,
    version: 0,
  });
