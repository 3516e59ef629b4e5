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
import { type SessionEvent, SessionEvents } from './session.events';

const sessions: EventHandlers<SessionEvent, Database.Database> = {
  [SessionEvents.Started]: ({ data: d }, db) => {
    const startedAt = Date.parse(d.started_at);
    db.prepare('DELETE FROM settings_sessions WHERE expires_at <= ?').run(startedAt);
    db.prepare(
      `INSERT INTO settings_sessions (token_hash, user_id, account_id, email, created_at, expires_at, last_seen_at)
       VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (token_hash) DO NOTHING`,
    ).run(d.token_hash, d.user_id, d.account_id, d.email, startedAt, Date.parse(d.expires_at), startedAt);
  },
  [SessionEvents.Active]: ({ data: d }, db) => {
    db.prepare('UPDATE settings_sessions SET last_seen_at = MAX(last_seen_at, ?) WHERE token_hash = ?').run(
      Date.parse(d.at),
      d.token_hash,
    );
  },
  [SessionEvents.Ended]: ({ data: d }, db) => {
    db.prepare('DELETE FROM settings_sessions WHERE token_hash = ?').run(d.token_hash);
  },
};

/**
 * `settings_sessions`: the live settings-screen sessions, keyed by the token's SHA-256. Rows of
 * sessions past their absolute end are deleted when a later session starts, by that event's own
 * time, so a rebuild gives the same rows and the table stays small.
 */
@Injectable()
@RegisterProjection()
export class SettingsSessionsProjection implements Projection {
  readonly name = 'settings.sessions';
  /** The settings screen's sign-in sessions: while halted, the screen answers 503 (fail closed). */
  readonly serves = ['/settings'];
  readonly version = 1;
  readonly tables = ['settings_sessions'];
  readonly handles = handledTypes(sessions);

  setup(db: Database.Database): void {
    db.exec(`CREATE TABLE IF NOT EXISTS settings_sessions (
      token_hash TEXT PRIMARY KEY, user_id TEXT NOT NULL, account_id TEXT NOT NULL, email TEXT NOT NULL,
      created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, last_seen_at INTEGER NOT NULL)`);
    db.exec('CREATE INDEX IF NOT EXISTS settings_sessions_expiry ON settings_sessions (expires_at)');
  }

  apply(db: Database.Database, envelope: RecordedEnvelope): void {
    applyHandler(sessions, envelope, db);
  }
}
