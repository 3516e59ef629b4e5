import Database from 'better-sqlite3';
import { secretFingerprint } from '../signing/signature';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Signing secrets, by endpoint and fingerprint, in `DATA_DIR/webhook-secrets.db`. Events name a
 * secret by its fingerprint, so concurrent rotations never collide on a key and a secret stored
 * by a request whose append then failed is taken back, or, after an ambiguous failure, merely unused. Not a read
 * model: the secrets are in no event (events are exported, replayed and shown in history), so
 * this file is their only copy and no rebuild touches it. The trade-off: moving the service to a
 * new machine needs this file as well as the event store, or every endpoint needs a rotation.
 */
export class SecretStore {
  private readonly db: Database.Database;
  private readonly insert: Database.Statement<[string, string, string, string]>;
  private readonly select: Database.Statement<[string, string], { secret: string }>;
  private readonly delete: Database.Statement<[string, string]>;

  constructor(file: string) {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    // The only copy: a secret shown to a client must survive a crash.
    this.db.pragma('synchronous = FULL');
    this.db.exec(`CREATE TABLE IF NOT EXISTS webhook_signing_secrets (
      endpoint_id TEXT NOT NULL, fingerprint TEXT NOT NULL, secret TEXT NOT NULL, created_at TEXT NOT NULL,
      PRIMARY KEY (endpoint_id, fingerprint))`);
    this.insert = this.db.prepare(
      'INSERT INTO webhook_signing_secrets (endpoint_id, fingerprint, secret, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
    );
    this.select = this.db.prepare('SELECT secret FROM webhook_signing_secrets WHERE endpoint_id = ? AND fingerprint = ?');
    this.delete = this.db.prepare('DELETE FROM webhook_signing_secrets WHERE endpoint_id = ? AND fingerprint = ?');
  }

  /** Written before the event that names it, so no event points at a missing secret. Returns its fingerprint. */
  put(endpointId: string, secret: string): string {
    const fingerprint = secretFingerprint(secret);
    this.insert.run(endpointId, fingerprint, secret, new Date().toISOString());
    return fingerprint;
  }

  /** Takes back a secret whose event was certainly not appended. */
  remove(endpointId: string, fingerprint: string): void {
    this.delete.run(endpointId, fingerprint);
  }

  get(endpointId: string, fingerprint: string | null): string | null {
    return fingerprint ? (this.select.get(endpointId, fingerprint)?.secret ?? null) : null;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
