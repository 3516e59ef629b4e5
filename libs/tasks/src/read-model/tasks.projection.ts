import { RegisterProjection, ResourceProjection, type ResourceTable } from '@filing/platform';

/** `tasks`: one row per task, scoped by account_id, with what the API answers; listed by entity and status. */
export const TASKS_TABLE: ResourceTable = {
  name: 'tasks',
  idField: 'task_id',
  filters: { entity: 'entity_id', status: 'status' },
  columns: 'entity_id TEXT NOT NULL, title TEXT NOT NULL, description TEXT, due_date TEXT, status TEXT NOT NULL',
};

@RegisterProjection()
export class TasksProjection extends ResourceProjection.of(TASKS_TABLE) {}
