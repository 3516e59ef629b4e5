import {
  assertOwnedAtVersion,
  ConflictError,
  missingFields,
  definedOnly,
  type FieldError,
  isJurisdictionCode,
  isUuid,
  type RecordedEnvelope,
  unknownFields,
  ValidationError,
} from '@filing/platform';
import {
  JURISDICTION_ADDED,
  JURISDICTION_STATUSES,
  JURISDICTION_UPDATED,
  type JurisdictionEvent,
  type JurisdictionFields,
  type JurisdictionStatus,
  REGISTRATION_TYPES,
  type RegistrationType,
} from './jurisdiction.events';

/** Field rules (CONTRACT.md §3), shared by decide() and the HTTP DTOs. */
export const CREATE_FIELDS = ['entity_id', 'code', 'registration_type'] as const;
export const WRITABLE_FIELDS = ['registration_type', 'status'] as const;
export type WritableField = (typeof WRITABLE_FIELDS)[number];
export const CODE_MESSAGE = 'code must be an ISO 3166-2 subdivision code like US-DE';

/** The registration as its stream tells it; null until it is added. */
export type JurisdictionState = Jurisdiction | null;
export interface Jurisdiction extends JurisdictionFields {
  readonly id: string;
  readonly account_id: string;
  readonly created_at: string;
  readonly updated_at: string;
  /** The stream revision of the last event. */
  readonly version: number;
}
export const initialJurisdictionState: JurisdictionState = null;

export interface AddJurisdictionInput {
  readonly entity_id: string;
  readonly code: string;
  readonly registration_type: string;
}
export type JurisdictionChanges = { readonly [K in WritableField]?: string };

export type JurisdictionCommand =
  | {
      readonly kind: 'add';
      readonly jurisdiction_id: string;
      readonly account_id: string;
      readonly input: AddJurisdictionInput;
    }
  | {
      readonly kind: 'update';
      readonly jurisdiction_id: string;
      readonly account_id: string;
      readonly changes: JurisdictionChanges;
      /** The client's If-Match version, if any. */
      readonly expected_version?: number;
    };

export function evolve(state: JurisdictionState, event: RecordedEnvelope<JurisdictionEvent>): JurisdictionState {
  const { metadata } = event;
  switch (event.type) {
    case JURISDICTION_ADDED:
      return {
        id: event.data.jurisdiction_id,
        account_id: metadata.account_id ?? '',
        ...fieldsOf(event.data),
        created_at: metadata.occurred_at,
        updated_at: metadata.occurred_at,
        version: Number(event.revision),
      };
    case JURISDICTION_UPDATED:
      if (state === null) return state;
      return { ...state, ...fieldsOf(event.data), updated_at: metadata.occurred_at, version: Number(event.revision) };
  }
}

export function decide(state: JurisdictionState, command: JurisdictionCommand): JurisdictionEvent[] {
  switch (command.kind) {
    case 'add': {
      if (state !== null) throw new ConflictError(`A jurisdiction with id ${command.jurisdiction_id} already exists`);
      const { input } = command;
      // A new registration waits for the filing to be confirmed.
      const fields = { entity_id: input.entity_id, code: input.code, registration_type: input.registration_type, status: 'pending' };
      const errors = [...missingFields(input, CREATE_FIELDS), ...fieldErrors(fields), ...unknownFields(input, CREATE_FIELDS)];
      if (errors.length > 0) throw new ValidationError(errors);
      return [{ type: JURISDICTION_ADDED, data: { jurisdiction_id: command.jurisdiction_id, ...(fields as JurisdictionFields) } }];
    }
    case 'update': {
      assertOwnedAtVersion(state, command, 'jurisdiction', command.jurisdiction_id);
      const changes = definedOnly(command.changes);
      const errors = [...fieldErrors(changes), ...unknownFields(changes, WRITABLE_FIELDS)];
      if (errors.length > 0) throw new ValidationError(errors);
      const next: JurisdictionFields = { ...fieldsOf(state), ...(changes as Partial<JurisdictionFields>) };
      const changed = WRITABLE_FIELDS.filter((field) => field in changes && next[field] !== state[field]);
      // Nothing changes: nothing to record (the PATCH answers the registration as it is).
      if (changed.length === 0) return [];
      return [{ type: JURISDICTION_UPDATED, data: { jurisdiction_id: state.id, ...next, changed } }];
    }
  }
}

/** Every rule broken by the fields present in `fields` (absent or undefined ones are not checked). */
export function fieldErrors(fields: { readonly [K in keyof JurisdictionFields]?: unknown }): FieldError[] {
  const errors: FieldError[] = [];
  const check = (field: keyof JurisdictionFields, ok: boolean, problem: string) => {
    if (fields[field] !== undefined && !ok) errors.push({ field, message: problem });
  };
  check('entity_id', isUuid(fields.entity_id), 'entity_id must be a UUID');
  check('code', isJurisdictionCode(fields.code), CODE_MESSAGE);
  check('registration_type', isRegistrationType(fields.registration_type), `registration_type must be one of ${REGISTRATION_TYPES.join(', ')}`);
  check('status', isJurisdictionStatus(fields.status), `status must be one of ${JURISDICTION_STATUSES.join(', ')}`);
  return errors;
}

export function isRegistrationType(value: unknown): value is RegistrationType {
  return (REGISTRATION_TYPES as readonly unknown[]).includes(value);
}

export function isJurisdictionStatus(value: unknown): value is JurisdictionStatus {
  return (JURISDICTION_STATUSES as readonly unknown[]).includes(value);
}

function fieldsOf(source: JurisdictionFields): JurisdictionFields {
  return { entity_id: source.entity_id, code: source.code, registration_type: source.registration_type, status: source.status };
}
