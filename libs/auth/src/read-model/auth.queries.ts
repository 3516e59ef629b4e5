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
  readonly created_at: string;
  readonly updated_at: string;
  readonly version: number;
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
}

export interface UserRow {
  readonly id: string;
  readonly account_id: string;
  readonly email: string;
  readonly created_at: string;
  readonly updated_at: string;
  readonly version: number;
}

/** A token works until it expires, unless it was revoked, or its client was, or its client's secret was rotated. */
export function isTokenLive(row: TokenRow, now: number): boolean {
  return (
    row.revoked === 0 &&
    now < row.expires_at &&
    row.client_status === 'active' &&
    row.client_generation === row.client_secret_generation
  );
}

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

  token(tokenHash: string): TokenRow | undefined {
    return this.stmt<TokenRow>(
      `SELECT t.*, c.kind AS client_kind, c.status AS client_status, c.secret_generation AS client_generation
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
