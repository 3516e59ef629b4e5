import { cachedStatement, ResourceQueries, type ResourceView } from '@filing/platform';
import type { JurisdictionFields } from '../jurisdiction.events';
import { JURISDICTIONS_TABLE } from './jurisdictions.projection';

/** The resource as the API answers it (CONTRACT.md §3). */
export type JurisdictionView = ResourceView<JurisdictionFields>;

/** Reads of the `jurisdictions` read model, always within one account. */
export class JurisdictionsQueries extends ResourceQueries.of<JurisdictionView, { entity_id?: string; status?: string }>(
  JURISDICTIONS_TABLE,
) {
  /** The entity's registration in this jurisdiction, if it has one. */
  findByEntityAndCode(accountId: string, entityId: string, code: string): JurisdictionView | null {
    const sql = 'SELECT * FROM jurisdictions WHERE account_id = ? AND entity_id = ? AND code = ? LIMIT 1';
    const row = cachedStatement(this.runner.db, sql).get(accountId, entityId, code);
    return row ? this.fromRow(row) : null;
  }
}
