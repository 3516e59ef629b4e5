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
import { AuthEvents } from '../auth.events';
import type { ClientEvent } from '../client';
import { forgetCachedTokens } from './token-cache';

/** What every handler writes with: the read model, and the event's time and stream revision. */
interface Row {
  readonly db: Database.Database;
  readonly at: string;
  readonly version: number;
}

// Positional parameters throughout: a rebuild runs these statements on a writer thread.
const clients: EventHandlers<ClientEvent, Row> = {
  [AuthEvents.ClientCreated]: ({ data: d }, { db, at, version }) => {
    db.prepare(
      `INSERT INTO oauth_clients (client_id, account_id, kind, scopes, secret_hash, secret_generation, status,
         created_at, updated_at, version)
       VALUES (?, ?, ?, ?, ?, ?, 'active', ?, ?, ?) ON CONFLICT (client_id) DO NOTHING`,
    ).run(d.client_id, d.account_id, d.kind, d.scopes.join(' '), d.secret_hash, d.secret_generation, at, at, version);
  },
  [AuthEvents.ClientSecretRotated]: ({ data: d }, { db, at, version }) => {
    const expiresAt = d.previous_secret_expires_at ? Date.parse(d.previous_secret_expires_at) : null;
    // With an overlap the replaced secret moves to the previous slot (dropping a pending one).
    const keep = expiresAt === null ? 0 : 1;
    db.prepare(
      `UPDATE oauth_clients SET
         previous_secret_hash = CASE WHEN ? = 1 THEN secret_hash END,
         previous_secret_generation = CASE WHEN ? = 1 THEN secret_generation END,
         previous_secret_expires_at = ?,
         secret_hash = ?, secret_generation = ?, updated_at = ?, version = ?
       WHERE client_id = ? AND secret_generation < ?`,
    ).run(keep, keep, expiresAt, d.secret_hash, d.secret_generation, at, version, d.client_id, d.secret_generation);
  },
  [AuthEvents.ClientPreviousSecretExpired]: ({ data: d }, { db, at, version }) => {
    db.prepare(
      `UPDATE oauth_clients SET previous_secret_hash = NULL, previous_secret_generation = NULL,
         previous_secret_expires_at = NULL, updated_at = ?, version = ?
       WHERE client_id = ? AND previous_secret_generation = ?`,
    ).run(at, version, d.client_id, d.secret_generation);
  },
  [AuthEvents.ClientRevoked]: ({ data: d }, { db, at, version }) => {
    db.prepare(`UPDATE oauth_clients SET status = 'revoked', updated_at = ?, version = ? WHERE client_id = ?`).run(
      at,
      version,
      d.client_id,
    );
  },
};

/**
 * `oauth_clients`: what the token endpoint authenticates against (secret hash, generation,
 * status; during a rotation's overlap the previous secret's hash, generation and expiry) and
 * what the bearer guard checks a token's client with. The expiry is the instant the rotation
 * event holds, compared with the clock at each request: never "when this instance applied it".
 */
@Injectable()
@RegisterProjection()
export class ClientsProjection implements Projection {
  readonly name = 'auth.clients';
  /** Token requests and bearer calls read it (a revoked client): fail closed. */
  readonly serves = 'authentication' as const;
  readonly version = 2;
  readonly tables = ['oauth_clients'];
  readonly handles = handledTypes(clients);

  setup(db: Database.Database): void {
    db.exec(`CREATE TABLE IF NOT EXISTS oauth_clients (
      client_id TEXT PRIMARY KEY, account_id TEXT, kind TEXT NOT NULL, scopes TEXT NOT NULL,
      secret_hash TEXT NOT NULL, secret_generation INTEGER NOT NULL, status TEXT NOT NULL,
      previous_secret_hash TEXT, previous_secret_generation INTEGER, previous_secret_expires_at INTEGER,
      created_at TEXT NOT NULL, updated_at TEXT NOT NULL, version INTEGER NOT NULL)`);
    db.exec('CREATE INDEX IF NOT EXISTS oauth_clients_account ON oauth_clients (account_id, client_id)');
  }

  apply(db: Database.Database, envelope: RecordedEnvelope): void {
    forgetCachedTokens(db); // the bearer guard's cached rows may be about to change
    applyHandler(clients, envelope, { db, at: envelope.metadata.occurred_at, version: Number(envelope.revision) });
  }
}
