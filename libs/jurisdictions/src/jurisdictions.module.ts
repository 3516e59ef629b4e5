import { Module } from '@nestjs/common';
import { AddJurisdictionHandler } from './commands/add-jurisdiction';
import { JurisdictionsController } from './http/jurisdictions.controller';
import { JurisdictionAggregate } from './jurisdiction.aggregate';
import { JurisdictionsProjection } from './read-model/jurisdictions.projection';
import { JurisdictionsQueries } from './read-model/jurisdictions.queries';

/**
 * Commands and read model, no HTTP: what the CLI imports (replay and audit rebuild this read
 * model). Needs CqrsModule, the event store, ProjectionsModule and ReferencesModule (global in
 * both apps; adding a jurisdiction checks `entity_id` through the entities' lookup). No family
 * refers to a jurisdiction by id, so it registers no reference lookup of its own.
 */
@Module({
  providers: [
    // write side
    AddJurisdictionHandler,
    JurisdictionAggregate.Handler,
    // read side
    JurisdictionsProjection,
    JurisdictionsQueries,
  ],
  exports: [JurisdictionsQueries],
})
export class JurisdictionsCoreModule {}

/** The jurisdictions context in the service: the core plus the HTTP API. Also needs ResourceApiModule. */
@Module({
  imports: [JurisdictionsCoreModule],
  controllers: [JurisdictionsController],
})
export class JurisdictionsModule {}
