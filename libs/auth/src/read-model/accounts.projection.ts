import { RegisterProjection, type Projection, type RecordedEnvelope } from '@filing/platform';
import { Injectable } from '@nestjs/common';
import type Database from 'better-sqlite3';
import { AuthEvents, type AccountCreated } from '../auth.events';

/** `auth_accounts`: the operator API's account list and lookups. */
@Injectable()
@RegisterProjection()
export class AccountsProjection implements Projection {
  readonly name = 'auth.accounts';
  /** Authentication resolves the account: fail closed. */
  readonly serves = 'authentication' as const;
  readonly version = 1;
  readonly tables = ['auth_accounts'];
  readonly handles = [AuthEvents.AccountCreated];

  setup(db: Database.Database): void {
    db.exec(`CREATE TABLE IF NOT EXISTS auth_accounts (
      id TEXT PRIMARY KEY, name TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
      version INTEGER NOT NULL)`);
  }

  apply(db: Database.Database, event: RecordedEnvelope): void {
    if (event.type !== AuthEvents.AccountCreated) return;
    const { data } = event as unknown as AccountCreated;
    db.prepare(
      `INSERT INTO auth_accounts (id, name, created_at, updated_at, version) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (id) DO NOTHING`,
    ).run(data.account_id, data.name, event.metadata.occurred_at, event.metadata.occurred_at, Number(event.revision));
  }
}
