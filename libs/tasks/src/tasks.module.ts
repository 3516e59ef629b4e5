import { Module } from '@nestjs/common';
import { TasksController } from './http/tasks.controller';
import { TasksProjection } from './read-model/tasks.projection';
import { TasksQueries } from './read-model/tasks.queries';
import { TaskAggregate } from './task.aggregate';

/**
 * Commands and read model, no HTTP: what the CLI imports (replay and audit rebuild this read
 * model). Needs CqrsModule, the event store, ProjectionsModule and ReferencesModule (global in
 * both apps; creating a task checks `entity_id` through the entities' lookup). No family refers
 * to a task by id, so it registers no reference lookup of its own.
 */
@Module({
  providers: [
    // write side
    TaskAggregate.Handler,
    // read side
    TasksProjection,
    TasksQueries,
  ],
  exports: [TasksQueries],
})
export class TasksCoreModule {}

/** The tasks context in the service: the core plus the HTTP API. Also needs ResourceApiModule. */
@Module({
  imports: [TasksCoreModule],
  controllers: [TasksController],
})
export class TasksModule {}
