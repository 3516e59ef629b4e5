import {
  assertOwnedAtVersion,
  ConflictError,
  definedOnly,
  type FieldError,
  isCalendarDate,
  isJurisdictionCode,
  type RecordedEnvelope,
  unknownFields,
  ValidationError,
} from '@filing/platform';
import {
  ENTITY_CREATED,
  ENTITY_STATUSES,
  ENTITY_TYPES,
  ENTITY_UPDATED,
  type EntityEvent,
  type EntityFields,
  type EntityStatus,
  type EntityType,
} from './entity.events';

/** Field rules (CONTRACT.md §3), shared by decide() and the HTTP DTOs. */
export const NAME_MAX_LENGTH = 200;
export const WRITABLE_FIELDS = ['name', 'status', 'formation_jurisdiction', 'formation_date'] as const;
export type WritableField = (typeof WRITABLE_FIELDS)[number];

/** The entity as its stream tells it; null until it is created. */
export type EntityState = Entity | null;
export interface Entity extends EntityFields {
  readonly id: string;
  readonly account_id: string;
  readonly created_at: string;
  readonly updated_at: string;
  /** The stream revision of the last event. */
  readonly version: number;
}
export const initialEntityState: EntityState = null;

export interface CreateEntityInput {
  readonly name: string;
  readonly entity_type: string;
  readonly formation_jurisdiction?: string | null;
  readonly formation_date?: string | null;
}
export type EntityChanges = { readonly [K in WritableField]?: K extends 'name' | 'status' ? string : string | null };

export type EntityCommand =
  | { readonly kind: 'create'; readonly entity_id: string; readonly account_id: string; readonly input: CreateEntityInput }
  | {
      readonly kind: 'update';
      readonly entity_id: string;
      readonly account_id: string;
      readonly changes: EntityChanges;
      /** The client's If-Match version, if any. */
      readonly expected_version?: number;
    };

export function evolve(state: EntityState, event: RecordedEnvelope<EntityEvent>): EntityState {
  const { metadata } = event;
  switch (event.type) {
    case ENTITY_CREATED: {
      const { entity_id, ...fields } = event.data;
      return {
        id: entity_id,
        account_id: metadata.account_id ?? '',
        ...fieldsOf(fields),
        created_at: metadata.occurred_at,
        updated_at: metadata.occurred_at,
        version: Number(event.revision),
      };
    }
    case ENTITY_UPDATED:
      if (state === null) return state;
      return { ...state, ...fieldsOf(event.data), updated_at: metadata.occurred_at, version: Number(event.revision) };
  }
}

export function decide(state: EntityState, command: EntityCommand): EntityEvent[] {
  switch (command.kind) {
    case 'create': {
      if (state !== null) throw new ConflictError(`An entity with id ${command.entity_id} already exists`);
      const { input } = command;
      const fields = {
        name: input.name,
        entity_type: input.entity_type,
        status: 'active',
        formation_jurisdiction: input.formation_jurisdiction ?? null,
        formation_date: input.formation_date ?? null,
      };
      const errors = [...fieldErrors(fields), ...unknownFields(input, ['name', 'entity_type', 'formation_jurisdiction', 'formation_date'])];
      if (errors.length > 0) throw new ValidationError(errors);
      return [{ type: ENTITY_CREATED, data: { entity_id: command.entity_id, ...(fields as EntityFields) } }];
    }
    case 'update': {
      assertOwnedAtVersion(state, command, 'entity', command.entity_id);
      const changes = definedOnly(command.changes);
      const errors = [...fieldErrors(changes), ...unknownFields(changes, WRITABLE_FIELDS)];
      if (errors.length > 0) throw new ValidationError(errors);
      const next: EntityFields = { ...fieldsOf(state), ...(changes as Partial<EntityFields>) };
      const changed = WRITABLE_FIELDS.filter((field) => field in changes && next[field] !== state[field]);
      // Nothing changes: nothing to record (the PATCH answers the entity as it is).
      if (changed.length === 0) return [];
      return [{ type: ENTITY_UPDATED, data: { entity_id: state.id, ...next, changed } }];
    }
  }
}

/** Every rule broken by the fields present in `fields` (absent or undefined ones are not checked). */
export function fieldErrors(fields: { readonly [K in keyof EntityFields]?: unknown }): FieldError[] {
  const errors: FieldError[] = [];
  const check = (field: keyof EntityFields, problem: string | null) => {
    if (fields[field] !== undefined && problem) errors.push({ field, message: problem });
  };
  check('name', nameProblem(fields.name));
  check('entity_type', isEntityType(fields.entity_type) ? null : `entity_type must be one of ${ENTITY_TYPES.join(', ')}`);
  check('status', isEntityStatus(fields.status) ? null : `status must be one of ${ENTITY_STATUSES.join(', ')}`);
  check(
    'formation_jurisdiction',
    fields.formation_jurisdiction === null || isJurisdictionCode(fields.formation_jurisdiction)
      ? null
      : 'formation_jurisdiction must be an ISO 3166-2 subdivision code like US-DE',
  );
  check(
    'formation_date',
    fields.formation_date === null || isCalendarDate(fields.formation_date) ? null : 'formation_date must be a date as YYYY-MM-DD',
  );
  return errors;
}

export function nameProblem(name: unknown): string | null {
  if (typeof name !== 'string') return 'name must be a string';
  if (name.trim() === '') return 'name must not be blank';
  if (name.length > NAME_MAX_LENGTH) return `name must be at most ${NAME_MAX_LENGTH} characters`;
  return null;
}

export function isEntityType(value: unknown): value is EntityType {
  return (ENTITY_TYPES as readonly unknown[]).includes(value);
}

export function isEntityStatus(value: unknown): value is EntityStatus {
  return (ENTITY_STATUSES as readonly unknown[]).includes(value);
}

function fieldsOf(source: EntityFields): EntityFields {
  return {
    name: source.name,
    entity_type: source.entity_type,
    status: source.status,
    formation_jurisdiction: source.formation_jurisdiction,
    formation_date: source.formation_date,
  };
}
