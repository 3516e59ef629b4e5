import {
  assertCreatable,
  calendarDateRule,
  type CreateCommand,
  decidePatch,
  type FieldError,
  fieldProblems,
  jurisdictionCodeRule,
  oneOfRule,
  orNull,
  type PatchCommand,
  type Resource,
  resourceEvolver,
  textRule,
  unknownFields,
} from '@filing/platform';
import {
  ENTITY_CREATED,
  ENTITY_FIELDS,
  ENTITY_STATUSES,
  ENTITY_TYPES,
  ENTITY_UPDATED,
  type EntityEvent,
  type EntityFields,
} from './entity.events';

/** Field rules (CONTRACT.md §3), shared by decide() and the HTTP DTOs. */
export const NAME_MAX_LENGTH = 200;
const CREATE_FIELDS = ['name', 'entity_type', 'formation_jurisdiction', 'formation_date'] as const;
export const WRITABLE_FIELDS = ['name', 'status', 'formation_jurisdiction', 'formation_date'] as const;
export type WritableField = (typeof WRITABLE_FIELDS)[number];

export const nameProblem = textRule('name', NAME_MAX_LENGTH);

/** The entity as its stream tells it; null until it is created. */
export type Entity = Resource<EntityFields>;
export type EntityState = Entity | null;
export const initialEntityState: EntityState = null;

export type CreateEntityInput = Readonly<{
  name: string;
  entity_type: string;
  formation_jurisdiction?: string | null;
  formation_date?: string | null;
}>;
export type EntityChanges = { readonly [K in WritableField]?: K extends 'name' | 'status' ? string : string | null };
export type EntityCommand = CreateCommand<'create', CreateEntityInput> | PatchCommand<EntityChanges>;

export const evolve = resourceEvolver<EntityFields, EntityEvent>(ENTITY_CREATED, 'entity_id', ENTITY_FIELDS);

export function decide(state: EntityState, command: EntityCommand): EntityEvent[] {
  switch (command.kind) {
    case 'create': {
      const { input } = command;
      const fields = {
        name: input.name,
        entity_type: input.entity_type,
        status: 'active',
        formation_jurisdiction: input.formation_jurisdiction ?? null,
        formation_date: input.formation_date ?? null,
      };
      assertCreatable(state, 'entity', command.id, [...fieldErrors(fields), ...unknownFields(input, CREATE_FIELDS)]);
      return [{ type: ENTITY_CREATED, data: { entity_id: command.id, ...(fields as EntityFields) } }];
    }
    case 'update': {
      const { next, changed } = decidePatch(state, command, 'entity', {
        fields: ENTITY_FIELDS,
        writable: WRITABLE_FIELDS,
        fieldErrors,
      });
      // Nothing changes: nothing to record (the PATCH answers the entity as it is).
      return changed.length === 0 ? [] : [{ type: ENTITY_UPDATED, data: { entity_id: command.id, ...next, changed } }];
    }
  }
}

/** Every rule broken by the fields present in `fields` (absent or undefined ones are not checked). */
export function fieldErrors(fields: object): FieldError[] {
  return fieldProblems(fields, {
    name: nameProblem,
    entity_type: oneOfRule('entity_type', ENTITY_TYPES),
    status: oneOfRule('status', ENTITY_STATUSES),
    formation_jurisdiction: orNull(jurisdictionCodeRule('formation_jurisdiction')),
    formation_date: orNull(calendarDateRule('formation_date')),
  });
}
