import { cachedStatement, keysetPage, type Page, type PageRequest, ProjectionRunner } from '@filing/platform';
import { Injectable } from '@nestjs/common';
import type { TaskStatus } from '../task.events';

/** The resource as the API answers it (CONTRACT.md §3). */
export interface TaskView {
  readonly id: string;
  readonly entity_id: string;
  readonly title: string;
  readonly description: string | null;
  readonly due_date: string | null;
  readonly status: TaskStatus;
  readonly created_at: string;
  readonly updated_at: string;
  readonly version: number;
}

export interface TaskListFilters {
  readonly entity_id?: string;
  readonly status?: string;
}

type TaskRow = TaskView & { readonly account_id: string };

export const TASKS_COLLECTION = 'tasks';

/** Reads of the `tasks` read model, always within one account. */
@Injectable()
export class TasksQueries {
  constructor(private readonly runner: ProjectionRunner) {}

  get(accountId: string, id: string): TaskView | null {
    // runner.db at every call: a replay may have swapped the database.
    const row = cachedStatement(this.runner.db, 'SELECT * FROM tasks WHERE id = ? AND account_id = ?').get(id, accountId);
    return row ? toTaskView(row as TaskRow) : null;
  }

  list(accountId: string, filters: TaskListFilters, page: PageRequest<string>): Page<TaskView> {
    return keysetPage<TaskRow, TaskView>(this.runner.db, {
      table: 'tasks',
      where: [
        ['account_id = ?', accountId],
        // Ids are stored lower-case; a client may filter with a UUID in capitals.
        ['entity_id = ?', filters.entity_id?.toLowerCase()],
        ['status = ?', filters.status],
      ],
      page,
      collection: TASKS_COLLECTION,
      map: toTaskView,
    });
  }
}

/** Exactly the API's fields, from a row or from the aggregate's state. */
export function toTaskView(row: TaskView): TaskView {
  return {
    id: row.id,
    entity_id: row.entity_id,
    title: row.title,
    description: row.description,
    due_date: row.due_date,
    status: row.status,
    created_at: row.created_at,
    updated_at: row.updated_at,
    version: row.version,
  };
}
