import { cachedStatement, type Projection, type RecordedEnvelope, RegisterProjection } from '@filing/platform';
import { Injectable } from '@nestjs/common';
import type Database from 'better-sqlite3';
import { TASK_CREATED, TASK_UPDATED, type TaskEvent } from '../task.events';

/**
 * `tasks`: one row per task, scoped by account_id, with what the API answers. The indexes serve
 * the list: account, optionally one filter, then id (the keyset order).
 */
@Injectable()
@RegisterProjection()
export class TasksProjection implements Projection {
  readonly name = 'tasks';
  readonly version = 1;
  readonly tables = ['tasks'];
  readonly handles = ['tasks.'];

  setup(db: Database.Database): void {
    db.exec(`
      CREATE TABLE IF NOT EXISTS tasks (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        entity_id TEXT NOT NULL,
        title TEXT NOT NULL,
        description TEXT,
        due_date TEXT,
        status TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        version INTEGER NOT NULL
      );
      CREATE INDEX IF NOT EXISTS tasks_by_account ON tasks (account_id, id);
      CREATE INDEX IF NOT EXISTS tasks_by_account_entity ON tasks (account_id, entity_id, id);
      CREATE INDEX IF NOT EXISTS tasks_by_account_status ON tasks (account_id, status, id);
    `);
  }

  apply(db: Database.Database, event: RecordedEnvelope): void {
    const e = event as RecordedEnvelope<TaskEvent>;
    const { metadata, data } = e;
    const version = Number(e.revision);
    switch (e.type) {
      case TASK_CREATED:
        cachedStatement(
          db,
          `INSERT INTO tasks (id, account_id, entity_id, title, description, due_date, status, created_at, updated_at, version)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(
          data.task_id,
          metadata.account_id,
          data.entity_id,
          data.title,
          data.description,
          data.due_date,
          data.status,
          metadata.occurred_at,
          metadata.occurred_at,
          version,
        );
        return;
      case TASK_UPDATED:
        cachedStatement(
          db,
          'UPDATE tasks SET title = ?, description = ?, due_date = ?, status = ?, updated_at = ?, version = ? WHERE id = ?',
        ).run(data.title, data.description, data.due_date, data.status, metadata.occurred_at, version, data.task_id);
        return;
    }
  }
}
