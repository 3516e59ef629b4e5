import { defineAggregate } from '@filing/platform';
import { decide, evolve, initialTaskState } from './task';
import { TASK_EVENT_SCHEMA_VERSIONS, TASK_STREAM_CONTEXT } from './task.events';

/** The tasks' write side: a task is about an entity of the account (`entity_id`, checked before deciding). */
export const TaskAggregate = defineAggregate({
  streamPrefix: TASK_STREAM_CONTEXT, initialState: initialTaskState, evolve, decide, schemaVersions: TASK_EVENT_SCHEMA_VERSIONS, references: ['entity_id'],
});
