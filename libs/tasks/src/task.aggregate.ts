import { defineAggregate } from '@filing/platform';
import { decide, evolve, initialTaskState } from './task';
import { TASK_STREAM_CONTEXT } from './task.events';

/** The tasks' write side: a task is about an entity of the account (`entity_id`, checked before deciding). */
export const TaskAggregate = defineAggregate({
  streamPrefix: TASK_STREAM_CONTEXT,
  initialState: initialTaskState,
  evolve,
  decide,
  references: ['entity_id'],
});
