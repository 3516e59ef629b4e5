import { RegisterProjection, type Projection, type RecordedEnvelope } from '@filing/platform';
import { Injectable } from '@nestjs/common';
import type Database from 'better-sqlite3';
import { AuthEvents } from '../auth.events';
import type { ClientEvent } from '../client';
import { forgetCachedTokens } from './token-cache';

/**
 * `oauth_clients`: what the token endpoint authenticates against (secret hash, generation,
 * status) and what the bearer guard checks a token's client with.
 */
@Injectable()
@RegisterProjection()
export class ClientsProjection implements Projection {
  readonly name = 'auth.clients';
  /** Token requests and bearer calls read it (a revoked client): fail closed. */
  readonly serves = 'authentication' as const;
  readonly version = 1;
  readonly tables = ['oauth_clients'];
  readonly handles = [AuthEvents.ClientCreated, AuthEvents.ClientSecretRotated, AuthEvents.ClientRevoked];

  setup(db: Database.Database): void {
    db.exec(`CREATE TABLE IF NOT EXISTS oauth_clients (
      client_id TEXT PRIMARY KEY, account_id TEXT, kind TEXT NOT NULL, scopes TEXT NOT NULL,
      secret_hash TEXT NOT NULL, secret_generation INTEGER NOT NULL, status TEXT NOT NULL,
      created_at TEXT NOT NULL, updated_at TEXT NOT NULL, version INTEGER NOT NULL)`);
    db.exec('CREATE INDEX IF NOT EXISTS oauth_clients_account ON oauth_clients (account_id, client_id)');
  }

  apply(db: Database.Database, envelope: RecordedEnvelope): void {
    forgetCachedTokens(db); // the bearer guard's cached rows may be about to change
    const event = envelope as unknown as ClientEvent;
    const at = envelope.metadata.occurred_at;
    const version = Number(envelope.revision);
    switch (event.type) {
      case AuthEvents.ClientCreated: {
        const d = event.data;
        db.prepare(
          `INSERT INTO oauth_clients (client_id, account_id, kind, scopes, secret_hash, secret_generation, status,
             created_at, updated_at, version)
           VALUES (?, ?, ?, ?, ?, ?, 'active', ?, ?, ?) ON CONFLICT (client_id) DO NOTHING`,
        ).run(
          d.client_id,
          d.account_id,
          d.kind,
          d.scopes.join(' '),
          d.secret_hash,
          d.secret_generation,
          at,
          at,
          version,
        );
        return;
      }
      case AuthEvents.ClientSecretRotated: {
        const d = event.data;
        db.prepare(
          'UPDATE oauth_clients SET secret_hash = ?, secret_generation = ?, updated_at = ?, version = ? WHERE client_id = ?',
        ).run(d.secret_hash, d.secret_generation, at, version, d.client_id);
        return;
      }
      case AuthEvents.ClientRevoked:
        db.prepare(`UPDATE oauth_clients SET status = 'revoked', updated_at = ?, version = ? WHERE client_id = ?`).run(
          at,
          version,
          event.data.client_id,
        );
        return;
    }
  }
}
