import { ReferenceChecker } from '@filing/platform';
import { Module, type OnModuleInit } from '@nestjs/common';
import { CreateEntityHandler } from './commands/create-entity';
import { UpdateEntityHandler } from './commands/update-entity';
import { EntitiesController } from './http/entities.controller';
import { EntitiesProjection } from './read-model/entities.projection';
import { EntitiesQueries } from './read-model/entities.queries';

/**
 * The entities context. Needs, from the app: CqrsModule, the event store, ProjectionsModule and
 * ResourceApiModule (all global).
 */
@Module({
  controllers: [EntitiesController],
  providers: [
    // write side
    CreateEntityHandler,
    UpdateEntityHandler,
    // read side
    EntitiesProjection,
    EntitiesQueries,
  ],
})
export class EntitiesModule implements OnModuleInit {
  constructor(
    private readonly references: ReferenceChecker,
    private readonly queries: EntitiesQueries,
  ) {}

  /** Other families check `entity_id` through the ReferenceChecker, never through this module's tables. */
  onModuleInit(): void {
    this.references.register('entity', (accountId, id) => this.queries.exists(accountId, id));
  }
}
