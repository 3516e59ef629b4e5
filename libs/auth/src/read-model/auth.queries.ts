import { cachedStatement, keysetPage, type Page, type PageRequest, ProjectionRunner } from '@filing/platform';
import { Injectable } from '@nestjs/common';
import type { ClientKind } from '../auth.events';
import { cachedToken, recallVerdict, rememberVerdict } from './token-cache';

export interface AccountRow {
  readonly id: string;
  readonly name: string;
  readonly created_at: string;
  readonly updated_at: string;
  readonly version: number;
}

export interface ClientRow {
  readonly client_id: string;
  readonly account_id: string | null;
  readonly kind: ClientKind;
  /** Space-separated. */
  readonly scopes: string;
  readonly secret_hash: string;
  readonly secret_generation: number;
  readonly status: 'active' | 'revoked';
  /** The secret a rotation with overlap replaced, until `previous_secret_expires_at` (epoch ms); else null. */
  readonly previous_secret_hash: string | null;
  readonly previous_secret_generation: number | null;
  readonly previous_secret_expires_at: number | null;
  readonly created_at: string;
  readonly updated_at: string;
  readonly version: number;
}

/** A client with when its secrets last got a token (ISO; null: never). */
export interface ClientUsageRow extends ClientRow {
  readonly secret_last_used_at: string | null;
  readonly previous_secret_last_used_at: string | null;
}

/** A token with what decides whether it still works: its client's status and secret generation. */
export interface TokenRow {
  readonly token_hash: string;
  readonly client_id: string;
  readonly account_id: string | null;
  readonly scopes: string;
  /** Epoch milliseconds. */
  readonly issued_at: number;
  readonly expires_at: number;
  readonly client_secret_generation: number;
  readonly revoked: number;
  readonly client_kind: ClientKind | null;
  readonly client_status: 'active' | 'revoked' | null;
  readonly client_generation: number | null;
  readonly client_previous_generation: number | null;
  readonly client_previous_expires_at: number | null;
}

export interface UserRow {
  readonly id: string;
  readonly account_id: string;
  readonly email: string;
  readonly created_at: string;
  readonly updated_at: string;
  readonly version: number;
}

/**
 * Until when (epoch ms) a token works: its own expiry, or sooner the expiry of the previous
 * secret it was issued under (a rotation with overlap); 0 if it is revoked, its client is, or its
 * secret was replaced with no overlap left. A stored instant: every instance and replay agree.
 */
export function tokenLiveUntil(row: TokenRow): number {
  if (row.revoked !== 0 || row.client_status !== 'active') return 0;
  if (row.client_generation === row.client_secret_generation) return row.expires_at;
  if (row.client_previous_generation === row.client_secret_generation && row.client_previous_expires_at !== null) {
    return Math.min(row.expires_at, row.client_previous_expires_at);
  }
  return 0;
}

/** A token works until it expires, unless it was revoked, or its client was, or its client's secret was rotated. */
export function isTokenLive(row: TokenRow, now: number): boolean {
  return now < tokenLiveUntil(row);
}

const CLIENT_WITH_USAGE = `SELECT c.*, cur.last_used_at AS secret_last_used_at, prev.last_used_at AS previous_secret_last_used_at
  FROM oauth_clients c
  LEFT JOIN oauth_secret_use cur ON cur.client_id = c.client_id AND cur.secret_generation = c.secret_generation
  LEFT JOIN oauth_secret_use prev ON prev.client_id = c.client_id AND prev.secret_generation = c.previous_secret_generation`;

/** More than any account has; the settings screen lists them on one page. */
const MAX_ACCOUNT_CLIENTS = 200;

/** Reads of the auth read models (read.db). Statements are prepared lazily: tables exist once the runner started. */
@Injectable()
export class AuthQueries {
  constructor(private readonly runner: ProjectionRunner) {}

  /** Per database handle: a replay swaps read.db, and statements follow it. */
  private stmt<R>(sql: string): { get(...params: unknown[]): R | undefined; all(...params: unknown[]): R[] } {
    return cachedStatement(this.runner.db, sql) as never;
  }

  account(id: string): AccountRow | undefined {
    return this.stmt<AccountRow>('SELECT * FROM auth_accounts WHERE id = ?').get(id);
  }

  /** Oldest first (ids are UUIDv7). */
  accounts<T>(page: PageRequest<string>, map: (row: AccountRow) => T): Page<T> {
    return keysetPage<AccountRow & Record<string, unknown>, T>(this.runner.db, {
      table: 'auth_accounts',
      where: [],
      page,
      collection: 'accounts',
      map,
    });
  }

  client(clientId: string): ClientRow | undefined {
    return this.stmt<ClientRow>('SELECT * FROM oauth_clients WHERE client_id = ?').get(clientId);
  }

  clientWithUsage(clientId: string): ClientUsageRow | undefined {
    return this.stmt<ClientUsageRow>(`${CLIENT_WITH_USAGE} WHERE c.client_id = ?`).get(clientId);
  }

  /** An account's clients, oldest first (ids are UUIDv7). */
  accountClients(accountId: string): ClientUsageRow[] {
    return this.stmt<ClientUsageRow>(
      `${CLIENT_WITH_USAGE} WHERE c.account_id = ? ORDER BY c.client_id LIMIT ${MAX_ACCOUNT_CLIENTS}`,
    ).all(accountId);
  }

  token(tokenHash: string): TokenRow | undefined {
    return this.stmt<TokenRow>(
      `SELECT t.*, c.kind AS client_kind, c.status AS client_status, c.secret_generation AS client_generation,
         c.previous_secret_generation AS client_previous_generation,
         c.previous_secret_expires_at AS client_previous_expires_at
       FROM oauth_tokens t LEFT JOIN oauth_clients c ON c.client_id = t.client_id WHERE t.token_hash = ?`,
    ).get(tokenHash);
  }

  /** `token`, from the cache the auth projections keep current (token-cache.ts): the bearer guard's read. */
  liveToken(tokenHash: string): TokenRow | undefined {
    return cachedToken(this.runner.db, tokenHash, () => this.token(tokenHash));
  }

  /** Kept with the cached token rows, and forgotten with them (token-cache.ts). */
  rememberVerdict(key: string, verdict: object): void {
    rememberVerdict(this.runner.db, key, verdict);
  }

  recallVerdict<Verdict extends object>(key: string): Verdict | undefined {
    return recallVerdict<Verdict>(this.runner.db, key);
  }

  user(id: string): UserRow | undefined {
    return this.stmt<UserRow>('SELECT * FROM auth_users WHERE id = ?').get(id);
  }
}
