import {
  assertCreatable,
  type CreateCommand,
  decidePatch,
  type FieldError,
  fieldProblems,
  jurisdictionCodeRule,
  missingFields,
  oneOfRule,
  type PatchCommand,
  type Resource,
  resourceEvolver,
  resourceIdRule,
  unknownFields,
} from '@filing/platform';
import {
  JURISDICTION_ADDED,
  JURISDICTION_FIELDS,
  JURISDICTION_STATUSES,
  JURISDICTION_UPDATED,
  type JurisdictionEvent,
  type JurisdictionFields,
  REGISTRATION_TYPES,
} from './jurisdiction.events';

/** Field rules (CONTRACT.md §3), shared by decide() and the HTTP DTOs. */
export const CREATE_FIELDS = ['entity_id', 'code', 'registration_type'] as const;
export const WRITABLE_FIELDS = ['registration_type', 'status'] as const;
export type WritableField = (typeof WRITABLE_FIELDS)[number];

/** The registration as its stream tells it; null until it is added. */
export type Jurisdiction = Resource<JurisdictionFields>;
export type JurisdictionState = Jurisdiction | null;
export const initialJurisdictionState: JurisdictionState = null;

export type AddJurisdictionInput = Readonly<{ entity_id: string; code: string; registration_type: string }>;
export type JurisdictionChanges = { readonly [K in WritableField]?: string };
export type JurisdictionCommand = CreateCommand<'add', AddJurisdictionInput> | PatchCommand<JurisdictionChanges>;

export const evolve = resourceEvolver<JurisdictionFields, JurisdictionEvent>(
  JURISDICTION_ADDED,
  'jurisdiction_id',
  JURISDICTION_FIELDS,
);

export function decide(state: JurisdictionState, command: JurisdictionCommand): JurisdictionEvent[] {
  if (command.kind === 'add') {
    const { input } = command;
    // A new registration waits for the filing to be confirmed.
    const fields = {
      entity_id: input.entity_id,
      code: input.code,
      registration_type: input.registration_type,
      status: 'pending',
    };
    const errors = [
      ...missingFields(input, CREATE_FIELDS),
      ...fieldErrors(fields),
      ...unknownFields(input, CREATE_FIELDS),
    ];
    assertCreatable(state, 'jurisdiction', command.id, errors);
    return [{ type: JURISDICTION_ADDED, data: { jurisdiction_id: command.id, ...(fields as JurisdictionFields) } }];
  }
  const patch = decidePatch(state, command, 'jurisdiction', {
    fields: JURISDICTION_FIELDS,
    writable: WRITABLE_FIELDS,
    fieldErrors,
  });
  // Nothing changes: nothing to record (the PATCH answers the registration as it is).
  if (patch.changed.length === 0) return [];
  return [{ type: JURISDICTION_UPDATED, data: { jurisdiction_id: command.id, ...patch.next, changed: patch.changed } }];
}

/** Every rule broken by the fields present in `fields` (absent or undefined ones are not checked). */
export function fieldErrors(fields: object): FieldError[] {
  return fieldProblems(fields, {
    entity_id: resourceIdRule('entity_id'),
    code: jurisdictionCodeRule('code'),
    registration_type: oneOfRule('registration_type', REGISTRATION_TYPES),
    status: oneOfRule('status', JURISDICTION_STATUSES),
  });
}
