import { ResourceQueries, type ResourceView } from '@filing/platform';
import type { TaskFields } from '../task.events';
import { TASKS_TABLE } from './tasks.projection';

/** The resource as the API answers it (CONTRACT.md §3). */
export type TaskView = ResourceView<TaskFields>;

/** Reads of the `tasks` read model, always within one account. */
export class TasksQueries extends ResourceQueries.of<TaskView, { entity_id?: string; status?: string }>(TASKS_TABLE) {}
