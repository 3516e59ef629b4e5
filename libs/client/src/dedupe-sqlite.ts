/**
 * A SQLite DedupeStore (better-sqlite3): processed `webhook-id`s survive restarts and are shared
 * by every process that opens the same file. A separate entry point
 * (`@filing/client/dedupe-sqlite`), so the core package never loads better-sqlite3, an optional
 * peer dependency: `npm install better-sqlite3` to use it.
 */
import Database from 'better-sqlite3';
import type { ClaimResult, DedupeStore } from './webhooks/dedupe';

export interface SqliteDedupeStoreOptions {
  /** A database file path (created if missing), or an open better-sqlite3 database. */
  readonly database: string | Database.Database;
  /** Default `webhook_dedupe`. */
  readonly table?: string;
  /** Expired rows are deleted every this many claims (default 1000). */
  readonly pruneEvery?: number;
}

export class SqliteDedupeStore implements DedupeStore {
  readonly db: Database.Database;
  private readonly owned: boolean;
  private readonly claimTx: Database.Transaction<(id: string, now: number, leaseUntil: number) => ClaimResult>;
  private readonly completeStmt: Database.Statement<[number, string]>;
  private readonly releaseStmt: Database.Statement<[string]>;
  private readonly pruneStmt: Database.Statement<[number]>;
  private readonly pruneEvery: number;
  private claims = 0;

  constructor(options: SqliteDedupeStoreOptions) {
    const table = options.table ?? 'webhook_dedupe';
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(table)) throw new TypeError('table must be a plain SQL identifier');
    this.owned = typeof options.database === 'string';
    this.db = typeof options.database === 'string' ? new Database(options.database) : options.database;
    if (this.owned) {
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('synchronous = NORMAL');
      this.db.pragma('busy_timeout = 5000');
    }
    this.pruneEvery = options.pruneEvery ?? 1000;
    this.db.exec(
      `CREATE TABLE IF NOT EXISTS ${table} (id TEXT PRIMARY KEY, done INTEGER NOT NULL, expires_at INTEGER NOT NULL) WITHOUT ROWID`,
    );
    const select = this.db.prepare<[string], { done: number; expires_at: number }>(
      `SELECT done, expires_at FROM ${table} WHERE id = ?`,
    );
    const upsert = this.db.prepare<[string, number]>(
      `INSERT INTO ${table} (id, done, expires_at) VALUES (?, 0, ?) ON CONFLICT(id) DO UPDATE SET done = 0, expires_at = excluded.expires_at`,
    );
    // Run IMMEDIATE (claim): the write lock is taken before the read, so two processes cannot both claim.
    this.claimTx = this.db.transaction((id: string, now: number, leaseUntil: number): ClaimResult => {
      const row = select.get(id);
      if (row && row.expires_at > now) return row.done ? 'duplicate' : 'in_progress';
      upsert.run(id, leaseUntil);
      return 'claimed';
    });
    this.completeStmt = this.db.prepare(`UPDATE ${table} SET done = 1, expires_at = ? WHERE id = ?`);
    this.releaseStmt = this.db.prepare(`DELETE FROM ${table} WHERE id = ? AND done = 0`);
    this.pruneStmt = this.db.prepare(`DELETE FROM ${table} WHERE expires_at <= ?`);
  }

  claim(id: string, now: number, leaseUntil: number): ClaimResult {
    if (++this.claims % this.pruneEvery === 0) this.pruneStmt.run(now);
    return this.claimTx.immediate(id, now, leaseUntil);
  }

  complete(id: string, expiresAt: number): void {
    this.completeStmt.run(expiresAt, id);
  }

  release(id: string): void {
    this.releaseStmt.run(id);
  }

  /** Deletes every expired row now. */
  prune(now: number = Date.now()): number {
    return this.pruneStmt.run(now).changes;
  }

  /** Closes the database if this store opened it. */
  close(): void {
    if (this.owned && this.db.open) this.db.close();
  }
}
