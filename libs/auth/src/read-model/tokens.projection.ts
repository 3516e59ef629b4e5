import {
  applyHandler,
  handledTypes,
  RegisterProjection,
  type EventHandlers,
  type Projection,
  type RecordedEnvelope,
} from '@filing/platform';
import { Injectable } from '@nestjs/common';
import type Database from 'better-sqlite3';
import { AuthEvents, type TokenIssued, type TokenRevoked } from '../auth.events';
import { forgetCachedTokens } from './token-cache';

const tokens: EventHandlers<TokenIssued | TokenRevoked, Database.Database> = {
  [AuthEvents.TokenIssued]: ({ data: d }, db) => {
    const issuedAt = Date.parse(d.issued_at);
    db.prepare('DELETE FROM oauth_tokens WHERE client_id = ? AND expires_at < ?').run(d.client_id, issuedAt);
    db.prepare(
      `INSERT INTO oauth_tokens (token_hash, client_id, account_id, scopes, issued_at, expires_at,
         client_secret_generation) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (token_hash) DO NOTHING`,
    ).run(
      d.token_hash,
      d.client_id,
      d.account_id,
      d.scopes.join(' '),
      issuedAt,
      Date.parse(d.expires_at),
      d.client_secret_generation,
    );
    db.prepare(
      `INSERT INTO oauth_secret_use (client_id, secret_generation, last_used_at) VALUES (?, ?, ?)
       ON CONFLICT (client_id, secret_generation) DO UPDATE SET last_used_at = max(last_used_at, excluded.last_used_at)`,
    ).run(d.client_id, d.client_secret_generation, d.issued_at);
  },
  [AuthEvents.TokenRevoked]: ({ data: d }, db) => {
    db.prepare('UPDATE oauth_tokens SET revoked = 1 WHERE token_hash = ? AND client_id = ?').run(
      d.token_hash,
      d.client_id,
    );
  },
};

/**
 * `oauth_tokens`: what the bearer guard and introspection read, keyed by the token's SHA-256.
 * Rows of tokens that expired before a later token of the same client was issued are deleted
 * then, by the event's own time, so a rebuild gives the same rows and the table stays small.
 *
 * `oauth_secret_use`: when each secret (client and generation) last got a token. A token request
 * is already an event (TokenIssued names the generation it authenticated with), so "last used"
 * costs no event of its own.
 */
@Injectable()
@RegisterProjection()
export class TokensProjection implements Projection {
  readonly name = 'auth.tokens';
  /** Every bearer call reads it: while it is halted they all answer 503 (fail closed). */
  readonly serves = 'authentication' as const;
  readonly version = 2;
  readonly tables = ['oauth_tokens', 'oauth_secret_use'];
  readonly handles = handledTypes(tokens);

  setup(db: Database.Database): void {
    db.exec(`CREATE TABLE IF NOT EXISTS oauth_tokens (
      token_hash TEXT PRIMARY KEY, client_id TEXT NOT NULL, account_id TEXT, scopes TEXT NOT NULL,
      issued_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, client_secret_generation INTEGER NOT NULL,
      revoked INTEGER NOT NULL DEFAULT 0)`);
    db.exec('CREATE INDEX IF NOT EXISTS oauth_tokens_client_expiry ON oauth_tokens (client_id, expires_at)');
    db.exec(`CREATE TABLE IF NOT EXISTS oauth_secret_use (
      client_id TEXT NOT NULL, secret_generation INTEGER NOT NULL, last_used_at TEXT NOT NULL,
      PRIMARY KEY (client_id, secret_generation))`);
  }

  apply(db: Database.Database, envelope: RecordedEnvelope): void {
    forgetCachedTokens(db); // the bearer guard's cached rows may be about to change
    applyHandler(tokens, envelope, db);
  }
}
