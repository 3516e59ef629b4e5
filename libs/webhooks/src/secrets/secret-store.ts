import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Signing secrets, by endpoint and generation, in `DATA_DIR/webhook-secrets.db`. Not a read
 * model: the secrets are in no event (events are exported, replayed and shown in history), so
 * this file is their only copy and no rebuild touches it. The trade-off: moving the service to a
 * new machine needs this file as well as the event store, or every endpoint needs a rotation.
 */
export class SecretStore {
  private readonly db: Database.Database;
  private readonly insert: Database.Statement<[string, number, string, string]>;
  private readonly select: Database.Statement<[string, number], { secret: string }>;

  constructor(file: string) {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    // The only copy: a secret shown to a client must survive a crash.
    this.db.pragma('synchronous = FULL');
    this.db.exec(`CREATE TABLE IF NOT EXISTS webhook_secrets (
      endpoint_id TEXT NOT NULL, generation INTEGER NOT NULL, secret TEXT NOT NULL, created_at TEXT NOT NULL,
      PRIMARY KEY (endpoint_id, generation))`);
    this.insert = this.db.prepare(
      'INSERT INTO webhook_secrets (endpoint_id, generation, secret, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET secret = excluded.secret',
    );
    this.select = this.db.prepare('SELECT secret FROM webhook_secrets WHERE endpoint_id = ? AND generation = ?');
  }

  /** Written before the event that names its generation, so no event points at a missing secret. */
  put(endpointId: string, generation: number, secret: string): void {
    this.insert.run(endpointId, generation, secret, new Date().toISOString());
  }

  get(endpointId: string, generation: number): string | null {
    return this.select.get(endpointId, generation)?.secret ?? null;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
