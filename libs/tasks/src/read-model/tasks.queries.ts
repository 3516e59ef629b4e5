import { ProjectionRunner, ResourceQueries, type ResourceView } from '@filing/platform';
import { Injectable } from '@nestjs/common';
import type { TaskFields } from '../task.events';
import { TASKS_TABLE } from './tasks.projection';

/** The resource as the API answers it (CONTRACT.md §3). */
export type TaskView = ResourceView<TaskFields>;

/** Reads of the `tasks` read model, always within one account. */
@Injectable()
export class TasksQueries extends ResourceQueries<TaskView, { entity_id?: string; status?: string }> {
  constructor(runner: ProjectionRunner) {
    super(runner, TASKS_TABLE);
  }
}
