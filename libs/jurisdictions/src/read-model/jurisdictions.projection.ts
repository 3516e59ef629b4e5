import { RegisterProjection, ResourceProjection, type ResourceTable } from '@filing/platform';

/** `jurisdictions`: one row per registration, scoped by account_id, with what the API answers; listed by entity and status. */
export const JURISDICTIONS_TABLE: ResourceTable = {
  name: 'jurisdictions',
  idField: 'jurisdiction_id',
  filters: { entity: 'entity_id', status: 'status' },
  columns: 'entity_id TEXT NOT NULL, code TEXT NOT NULL, registration_type TEXT NOT NULL, status TEXT NOT NULL',
};

@RegisterProjection()
export class JurisdictionsProjection extends ResourceProjection.of(JURISDICTIONS_TABLE) {}
