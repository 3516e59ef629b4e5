import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** A final answer as it was sent: replayed byte for byte. */
export interface StoredResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export type Reservation =
  /** First use of the key: the caller runs the request, then `complete()`s or `release()`s it. */
  | { readonly kind: 'reserved' }
  /** The first request with this key has not answered yet. */
  | { readonly kind: 'in-flight' }
  /** The key was used with another request (method, path or body). */
  | { readonly kind: 'mismatch' }
  | { readonly kind: 'replay'; readonly response: StoredResponse };

export interface IdempotencyStoreOptions {
  /** `DATA_DIR/idempotency.db` (not read.db: a projection rebuild must not forget keys), or `:memory:`. */
  readonly file: string;
  readonly ttlMs?: number;
  readonly now?: () => number;
}

interface Row {
  fingerprint: string;
  state: 'in_flight' | 'done';
  status: number | null;
  headers: string | null;
  body: string | null;
  created_at: number;
}

/**
 * Idempotency keys and the answers they replay, per scope (the account), for 24 h. One process
 * owns the file, so a key left in flight by a crash is released at start.
 */
export class IdempotencyStore {
  private readonly db: Database.Database;
  private readonly ttlMs: number;
  private readonly now: () => number;
  private lastPurge = 0;
  private readonly statements: ReturnType<IdempotencyStore['prepare']>;

  constructor(options: IdempotencyStoreOptions) {
    this.ttlMs = options.ttlMs ?? IDEMPOTENCY_TTL_MS;
    this.now = options.now ?? Date.now;
    if (options.file !== ':memory:') mkdirSync(dirname(options.file), { recursive: true });
    this.db = new Database(options.file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.exec(`CREATE TABLE IF NOT EXISTS idempotency_keys (
      scope TEXT NOT NULL,
      key TEXT NOT NULL,
      fingerprint TEXT NOT NULL,
      state TEXT NOT NULL,
      status INTEGER,
      headers TEXT,
      body TEXT,
      created_at INTEGER NOT NULL,
      PRIMARY KEY (scope, key)
    ) WITHOUT ROWID`);
    this.db.exec('CREATE INDEX IF NOT EXISTS idempotency_keys_created_at ON idempotency_keys (created_at)');
    this.db.prepare("DELETE FROM idempotency_keys WHERE state = 'in_flight'").run();
    this.statements = this.prepare();
  }

  private prepare() {
    return {
      get: this.db.prepare<[string, string], Row>(
        'SELECT fingerprint, state, status, headers, body, created_at FROM idempotency_keys WHERE scope = ? AND key = ?',
      ),
      insert: this.db.prepare<[string, string, string, number]>(
        "INSERT OR REPLACE INTO idempotency_keys (scope, key, fingerprint, state, created_at) VALUES (?, ?, ?, 'in_flight', ?)",
      ),
      complete: this.db.prepare<[number, string, string, string, string]>(
        "UPDATE idempotency_keys SET state = 'done', status = ?, headers = ?, body = ? WHERE scope = ? AND key = ?",
      ),
      release: this.db.prepare<[string, string]>("DELETE FROM idempotency_keys WHERE scope = ? AND key = ? AND state = 'in_flight'"),
      purge: this.db.prepare<[number]>('DELETE FROM idempotency_keys WHERE created_at <= ?'),
    };
  }

  /** Synchronous (better-sqlite3), so two requests with one key cannot both reserve it. */
  reserve(scope: string, key: string, fingerprint: string): Reservation {
    const now = this.now();
    this.purgeExpired(now);
    const row = this.statements.get.get(scope, key);
    if (!row || row.created_at <= now - this.ttlMs) {
      this.statements.insert.run(scope, key, fingerprint, now);
      return { kind: 'reserved' };
    }
    if (row.fingerprint !== fingerprint) return { kind: 'mismatch' };
    if (row.state === 'in_flight') return { kind: 'in-flight' };
    return {
      kind: 'replay',
      response: { status: row.status!, headers: JSON.parse(row.headers!) as Record<string, string>, body: row.body! },
    };
  }

  complete(scope: string, key: string, response: StoredResponse): void {
    this.statements.complete.run(response.status, JSON.stringify(response.headers), response.body, scope, key);
  }

  /** Forgets a reservation whose request gave no final answer (5xx, crash), so a retry runs it again. */
  release(scope: string, key: string): void {
    this.statements.release.run(scope, key);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  /** At most once a minute: expired rows are also ignored on read, this only bounds the file. */
  private purgeExpired(now: number): void {
    if (now - this.lastPurge < 60_000) return;
    this.lastPurge = now;
    this.statements.purge.run(now - this.ttlMs);
  }
}
