import type { AccountRow, ClientRow, UserRow } from './auth.queries';

/** The operator API's JSON shapes (snake_case; `version` = the stream revision). */
export function accountView(row: AccountRow) {
  return { id: row.id, name: row.name, created_at: row.created_at, updated_at: row.updated_at, version: row.version };
}

export function clientView(row: ClientRow) {
  return {
    id: row.client_id,
    client_id: row.client_id,
    account_id: row.account_id,
    kind: row.kind,
    scope: row.scopes,
    status: row.status,
    secret_generation: row.secret_generation,
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
