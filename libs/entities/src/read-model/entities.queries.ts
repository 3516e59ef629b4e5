import { type Filter, ProjectionRunner, ResourceQueries, type ResourceView } from '@filing/platform';
import { Injectable } from '@nestjs/common';
import type { EntityFields } from '../entity.events';
import { ENTITIES_TABLE, fold } from './entities.projection';

/** The resource as the API answers it (CONTRACT.md §3). */
export type EntityView = ResourceView<EntityFields>;

export interface EntityListFilters {
  readonly status?: string;
  readonly entity_type?: string;
  /** Case-insensitive substring of the name. */
  readonly q?: string;
}

/** Reads of the `entities` read model, always within one account. */
@Injectable()
export class EntitiesQueries extends ResourceQueries<EntityView, EntityListFilters> {
  constructor(runner: ProjectionRunner) {
    super(runner, ENTITIES_TABLE);
  }

  protected override where(filters: EntityListFilters): Filter[] {
    return [...super.where(filters), ['instr(name_folded, ?) > 0', filters.q === undefined ? undefined : fold(filters.q)]];
  }
}
