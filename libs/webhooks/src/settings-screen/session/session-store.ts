import Database from 'better-sqlite3';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

/** A signed-in settings-screen user. */
export interface SettingsSession {
  readonly userId: string;
  readonly accountId: string;
  readonly email: string;
  /** The synchronizer token every form of this session carries (`_csrf`). */
  readonly csrfToken: string;
  readonly createdAt: number;
  readonly lastSeenAt: number;
}

export interface SessionLimits {
  /** A session unused this long ends. */
  readonly idleMs: number;
  /** A session ends this long after sign-in, used or not. */
  readonly absoluteMs: number;
}

export const DEFAULT_SESSION_LIMITS: SessionLimits = { idleMs: 30 * 60_000, absoluteMs: 12 * 60 * 60_000 };

interface Row {
  user_id: string;
  account_id: string;
  email: string;
  csrf_token: string;
  created_at: number;
  last_seen_at: number;
  flash: string | null;
}

/**
 * Server-side sessions of the settings screen, in `DATA_DIR/settings-sessions.db` (so a restart
 * does not sign everybody out). The cookie carries a 256-bit random token; the file keeps only
 * its SHA-256, so the file alone lets nobody in. Not a read model: nothing here is an event.
 *
 * `clock` is a seam for tests (session expiry without waiting).
 */
export class SettingsSessionStore {
  clock: () => number = Date.now;
  private readonly db: Database.Database;

  constructor(
    file: string,
    readonly limits: SessionLimits = DEFAULT_SESSION_LIMITS,
  ) {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.exec(`CREATE TABLE IF NOT EXISTS settings_sessions (
      token_hash TEXT PRIMARY KEY, user_id TEXT NOT NULL, account_id TEXT NOT NULL, email TEXT NOT NULL,
      csrf_token TEXT NOT NULL, created_at INTEGER NOT NULL, last_seen_at INTEGER NOT NULL, flash TEXT)`);
  }

  /** A new session (sign-in); returns the token for the cookie. Expired sessions are swept here. */
  create(user: { userId: string; accountId: string; email: string }): { token: string; session: SettingsSession } {
    const now = this.clock();
    this.sweep(now);
    const token = randomBytes(32).toString('base64url');
    const session: SettingsSession = { ...user, csrfToken: randomBytes(32).toString('base64url'), createdAt: now, lastSeenAt: now };
    this.db
      .prepare(
        `INSERT INTO settings_sessions (token_hash, user_id, account_id, email, csrf_token, created_at, last_seen_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(hash(token), session.userId, session.accountId, session.email, session.csrfToken, now, now);
    return { token, session };
  }

  /** The live session of a cookie token, its idle clock restarted; null when unknown or expired (then deleted). */
  get(token: string | undefined): SettingsSession | null {
    if (!token || token.length > 100) return null;
    const key = hash(token);
    const row = this.db.prepare('SELECT * FROM settings_sessions WHERE token_hash = ?').get(key) as Row | undefined;
    if (!row) return null;
    const now = this.clock();
    if (now - row.last_seen_at >= this.limits.idleMs || now - row.created_at >= this.limits.absoluteMs) {
      this.db.prepare('DELETE FROM settings_sessions WHERE token_hash = ?').run(key);
      return null;
    }
    this.db.prepare('UPDATE settings_sessions SET last_seen_at = ? WHERE token_hash = ?').run(now, key);
    return {
      userId: row.user_id,
      accountId: row.account_id,
      email: row.email,
      csrfToken: row.csrf_token,
      createdAt: row.created_at,
      lastSeenAt: now,
    };
  }

  destroy(token: string | undefined): void {
    if (token) this.db.prepare('DELETE FROM settings_sessions WHERE token_hash = ?').run(hash(token));
  }

  /** A one-time message for the next page of this session ("Endpoint enabled."). */
  setFlash(token: string, message: string): void {
    this.db.prepare('UPDATE settings_sessions SET flash = ? WHERE token_hash = ?').run(message, hash(token));
  }

  takeFlash(token: string): string | null {
    const key = hash(token);
    const row = this.db.prepare('SELECT flash FROM settings_sessions WHERE token_hash = ?').get(key) as { flash: string | null } | undefined;
    if (row?.flash) this.db.prepare('UPDATE settings_sessions SET flash = NULL WHERE token_hash = ?').run(key);
    return row?.flash ?? null;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  private sweep(now: number): void {
    this.db
      .prepare('DELETE FROM settings_sessions WHERE last_seen_at <= ? OR created_at <= ?')
      .run(now - this.limits.idleMs, now - this.limits.absoluteMs);
  }
}

function hash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
