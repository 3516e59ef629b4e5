import { ReferenceChecker } from '@filing/platform';
import { Module, type OnModuleInit } from '@nestjs/common';
import { EntityAggregate } from './entity.aggregate';
import { EntitiesController } from './http/entities.controller';
import { EntitiesProjection } from './read-model/entities.projection';
import { EntitiesQueries } from './read-model/entities.queries';

/**
 * Commands and read model, no HTTP: what the CLI imports (replay and audit rebuild this read
 * model). Needs CqrsModule, the event store, ProjectionsModule and ReferencesModule (global in
 * both apps).
 */
@Module({
  providers: [
    // write side
    EntityAggregate.Handler,
    // read side
    EntitiesProjection,
    EntitiesQueries,
  ],
  exports: [EntitiesQueries],
})
export class EntitiesCoreModule implements OnModuleInit {
  constructor(
    private readonly references: ReferenceChecker,
    private readonly queries: EntitiesQueries,
  ) {}

  /** Other families check `entity_id` through the ReferenceChecker, never through this module's tables. */
  onModuleInit(): void {
    this.references.register('entity', (accountId, id) => this.queries.exists(accountId, id));
  }
}

/** The entities context in the service: the core plus the HTTP API. Also needs ResourceApiModule. */
@Module({
  imports: [EntitiesCoreModule],
  controllers: [EntitiesController],
})
export class EntitiesModule {}
