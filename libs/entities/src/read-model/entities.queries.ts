import { cachedStatement, keysetPage, type Page, type PageRequest, ProjectionRunner } from '@filing/platform';
import { Injectable } from '@nestjs/common';
import type { EntityStatus, EntityType } from '../entity.events';
import { fold } from './entities.projection';

/** The resource as the API answers it (CONTRACT.md §3). */
export interface EntityView {
  readonly id: string;
  readonly name: string;
  readonly entity_type: EntityType;
  readonly status: EntityStatus;
  readonly formation_jurisdiction: string | null;
  readonly formation_date: string | null;
  readonly created_at: string;
  readonly updated_at: string;
  readonly version: number;
}

export interface EntityListFilters {
  readonly status?: string;
  readonly entity_type?: string;
  /** Case-insensitive substring of the name. */
  readonly q?: string;
}

type EntityRow = EntityView & { readonly account_id: string; readonly name_folded: string };

export const ENTITIES_COLLECTION = 'entities';

/** Reads of the `entities` read model, always within one account. */
@Injectable()
export class EntitiesQueries {
  constructor(private readonly runner: ProjectionRunner) {}

  get(accountId: string, id: string): EntityView | null {
    // runner.db at every call: a replay may have swapped the database.
    const row = cachedStatement(this.runner.db, 'SELECT * FROM entities WHERE id = ? AND account_id = ?').get(id, accountId);
    return row ? toEntityView(row as EntityRow) : null;
  }

  exists(accountId: string, id: string): boolean {
    return cachedStatement(this.runner.db, 'SELECT 1 FROM entities WHERE id = ? AND account_id = ?').get(id, accountId) !== undefined;
  }

  list(accountId: string, filters: EntityListFilters, page: PageRequest<string>): Page<EntityView> {
    return keysetPage<EntityRow, EntityView>(this.runner.db, {
      table: 'entities',
      where: [
        ['account_id = ?', accountId],
        ['status = ?', filters.status],
        ['entity_type = ?', filters.entity_type],
        ['instr(name_folded, ?) > 0', filters.q === undefined ? undefined : fold(filters.q)],
      ],
      page,
      collection: ENTITIES_COLLECTION,
      map: toEntityView,
    });
  }
}

/** Exactly the API's fields, from a row or from the aggregate's state. */
export function toEntityView(row: EntityView): EntityView {
  return {
    id: row.id,
    name: row.name,
    entity_type: row.entity_type,
    status: row.status,
    formation_jurisdiction: row.formation_jurisdiction,
    formation_date: row.formation_date,
    created_at: row.created_at,
    updated_at: row.updated_at,
    version: row.version,
  };
}
