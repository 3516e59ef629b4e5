import { RegisterProjection, type Projection, type RecordedEnvelope } from '@filing/platform';
import { Injectable } from '@nestjs/common';
import type Database from 'better-sqlite3';
import { AuthEvents, type UserCreated } from '../auth.events';

/** `auth_users`: settings-screen users (the password hash stays in the stream; sign-in is another issue). */
@Injectable()
@RegisterProjection()
export class UsersProjection implements Projection {
  readonly name = 'auth.users';
  readonly serves = ['/settings', '/internal-api/v1/users'];
  readonly version = 1;
  readonly tables = ['auth_users'];
  readonly handles = [AuthEvents.UserCreated];

  setup(db: Database.Database): void {
    db.exec(`CREATE TABLE IF NOT EXISTS auth_users (
      id TEXT PRIMARY KEY, account_id TEXT NOT NULL, email TEXT NOT NULL, created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL, version INTEGER NOT NULL)`);
    db.exec('CREATE INDEX IF NOT EXISTS auth_users_account ON auth_users (account_id, id)');
  }

  apply(db: Database.Database, envelope: RecordedEnvelope): void {
    if (envelope.type !== AuthEvents.UserCreated) return;
    const { data } = envelope as unknown as UserCreated;
    const at = envelope.metadata.occurred_at;
    db.prepare(
      `INSERT INTO auth_users (id, account_id, email, created_at, updated_at, version) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO NOTHING`,
    ).run(data.user_id, data.account_id, data.email, at, at, Number(envelope.revision));
  }
}
