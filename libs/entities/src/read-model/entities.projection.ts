import { type ResourceTable, RegisterProjection, ResourceProjection } from '@filing/platform';

/** Case-folded in JS: SQLite's lower() only knows ASCII. */
export function fold(text: string): string {
  return text.toLowerCase();
}

/**
 * `entities`: one row per entity, scoped by account_id, with what the API answers, and a folded
 * copy of the name for `q` (instr on it, not LIKE: no wildcard surprises, Unicode-aware).
 */
export const ENTITIES_TABLE: ResourceTable = {
  name: 'entities',
  idField: 'entity_id',
  filters: { status: 'status', type: 'entity_type' },
  columns:
    'name TEXT NOT NULL, name_folded TEXT NOT NULL, entity_type TEXT NOT NULL, ' +
    'status TEXT NOT NULL, formation_jurisdiction TEXT, formation_date TEXT',
  derived: { name_folded: (data) => fold(data.name as string) },
};

@RegisterProjection()
export class EntitiesProjection extends ResourceProjection.of(ENTITIES_TABLE) {}
