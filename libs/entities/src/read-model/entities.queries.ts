import { type Filter, ResourceQueries, type ResourceView } from '@filing/platform';
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
export class EntitiesQueries extends ResourceQueries.of<EntityView, EntityListFilters>(ENTITIES_TABLE) {
  protected override where(filters: EntityListFilters): Filter[] {
    return [
      ...super.where(filters),
      ['instr(name_folded, ?) > 0', filters.q === undefined ? undefined : fold(filters.q)],
    ];
  }
}
