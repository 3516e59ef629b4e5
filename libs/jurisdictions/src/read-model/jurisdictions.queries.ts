import { cachedStatement, keysetPage, type Page, type PageRequest, ProjectionRunner } from '@filing/platform';
import { Injectable } from '@nestjs/common';
import type { JurisdictionStatus, RegistrationType } from '../jurisdiction.events';

/** The resource as the API answers it (CONTRACT.md §3). */
export interface JurisdictionView {
  readonly id: string;
  readonly entity_id: string;
  readonly code: string;
  readonly registration_type: RegistrationType;
  readonly status: JurisdictionStatus;
  readonly created_at: string;
  readonly updated_at: string;
  readonly version: number;
}

export interface JurisdictionListFilters {
  readonly entity_id?: string;
  readonly status?: string;
}

type JurisdictionRow = JurisdictionView & { readonly account_id: string };

export const JURISDICTIONS_COLLECTION = 'jurisdictions';

/** Reads of the `jurisdictions` read model, always within one account. */
@Injectable()
export class JurisdictionsQueries {
  constructor(private readonly runner: ProjectionRunner) {}

  get(accountId: string, id: string): JurisdictionView | null {
    // runner.db at every call: a replay may have swapped the database.
    const row = cachedStatement(this.runner.db, 'SELECT * FROM jurisdictions WHERE id = ? AND account_id = ?').get(id, accountId);
    return row ? toJurisdictionView(row as JurisdictionRow) : null;
  }

  /** The entity's registration in this jurisdiction, if it has one. */
  findByEntityAndCode(accountId: string, entityId: string, code: string): JurisdictionView | null {
    const row = cachedStatement(this.runner.db, 'SELECT * FROM jurisdictions WHERE account_id = ? AND entity_id = ? AND code = ? LIMIT 1').get(
      accountId,
      entityId,
      code,
    );
    return row ? toJurisdictionView(row as JurisdictionRow) : null;
  }

  list(accountId: string, filters: JurisdictionListFilters, page: PageRequest<string>): Page<JurisdictionView> {
    return keysetPage<JurisdictionRow, JurisdictionView>(this.runner.db, {
      table: 'jurisdictions',
      where: [
        ['account_id = ?', accountId],
        // Ids are stored lower-case; a client may filter with a UUID in capitals.
        ['entity_id = ?', filters.entity_id?.toLowerCase()],
        ['status = ?', filters.status],
      ],
      page,
      collection: JURISDICTIONS_COLLECTION,
      map: toJurisdictionView,
    });
  }
}

/** Exactly the API's fields, from a row or from the aggregate's state. */
export function toJurisdictionView(row: JurisdictionView): JurisdictionView {
  return {
    id: row.id,
    entity_id: row.entity_id,
    code: row.code,
    registration_type: row.registration_type,
    status: row.status,
    created_at: row.created_at,
    updated_at: row.updated_at,
    version: row.version,
  };
}
