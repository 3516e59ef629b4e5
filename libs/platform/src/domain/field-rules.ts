import { type FieldError, NotFoundError, PreconditionFailedError } from '../errors/domain-errors';

/**
 * Field rules and checks more than one family's pure `decide` uses (CONTRACT.md §3), so every
 * family agrees on what a date or a jurisdiction code is. No Nest import: domain code only.
 */

/** ISO 3166-2: a country code, a dash, one to three letters or digits (`US-DE`, `GB-ENG`, `FR-75`). */
export const JURISDICTION_CODE = /^[A-Z]{2}-[A-Z0-9]{1,3}$/;

export function isJurisdictionCode(value: unknown): value is string {
  return typeof value === 'string' && JURISDICTION_CODE.test(value);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

/** `YYYY-MM-DD` naming a day that exists (no 2023-02-30). */
export function isCalendarDate(value: unknown): value is string {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const date = new Date(`${value}T00:00:00.000Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
}

/** The input without its undefined properties (DTO instances carry absent optional fields as undefined). */
export function definedOnly<T extends object>(input: T): Partial<T> {
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/** One error per field of `required` that `input` lacks (undefined). */
export function missingFields(input: object, required: readonly string[]): FieldError[] {
  return required
    .filter((field) => (input as Record<string, unknown>)[field] === undefined)
    .map((field) => ({ field, message: `${field} is required` }));
}

/** One error per defined property of `input` that is not in `allowed`. */
export function unknownFields(input: object, allowed: readonly string[]): FieldError[] {
  return Object.keys(definedOnly(input))
    .filter((key) => !allowed.includes(key))
    .map((field) => ({ field, message: `${field} cannot be set` }));
}

/**
 * The first checks of a write on an existing resource, in the order the conventions require:
 * missing or another account's → 404 (`NotFoundError.of(resource, id)`), then If-Match → 412.
 * Ownership first, so a 412 never tells another account that the id exists.
 */
export function assertOwnedAtVersion<S extends { readonly account_id: string; readonly version: number }>(
  state: S | null,
  command: { readonly account_id: string; readonly expected_version?: number },
  resource: string,
  id: string,
): asserts state is S {
  if (state === null || state.account_id !== command.account_id) throw NotFoundError.of(resource, id);
  if (command.expected_version !== undefined && command.expected_version !== state.version)
    throw new PreconditionFailedError();
}

/** A field's rule: the problem with a value (the 400's message), or null when it is fine. */
export type FieldRule = (value: unknown) => string | null;

/** Every rule broken by the fields present in `fields` (absent or undefined ones are not checked), in the rules' order. */
export function fieldProblems(fields: object, rules: Readonly<Record<string, FieldRule>>): FieldError[] {
  const values = fields as Record<string, unknown>;
  return Object.entries(rules).flatMap(([field, rule]) => {
    const problem = values[field] === undefined ? null : rule(values[field]);
    return problem ? [{ field, message: problem }] : [];
  });
}

/** `rule`, or null (an optional field that null clears). */
export const orNull =
  (rule: FieldRule): FieldRule =>
  (value) =>
    value === null ? null : rule(value);

/** A required, non-blank string of at most `max` characters (a name, a title). */
export const textRule =
  (field: string, max: number): FieldRule =>
  (value) => {
    if (typeof value !== 'string') return `${field} must be a string`;
    if (value.trim() === '') return `${field} must not be blank`;
    if (value.length > max) return `${field} must be at most ${max} characters`;
    return null;
  };

/** One of `values` (an enum: a type, a status). */
export const oneOfRule =
  (field: string, values: readonly string[]): FieldRule =>
  (value) =>
    values.includes(value as string) ? null : `${field} must be one of ${values.join(', ')}`;

/** An ISO 3166-2 subdivision code (`US-DE`). */
export const jurisdictionCodeRule =
  (field: string): FieldRule =>
  (value) =>
    isJurisdictionCode(value) ? null : `${field} must be an ISO 3166-2 subdivision code like US-DE`;

/** `YYYY-MM-DD` naming a day that exists. */
export const calendarDateRule =
  (field: string): FieldRule =>
  (value) =>
    isCalendarDate(value) ? null : `${field} must be a date as YYYY-MM-DD`;

/** A resource id (a reference such as `entity_id`): a UUID. */
export const resourceIdRule =
  (field: string): FieldRule =>
  (value) =>
    isUuid(value) ? null : `${field} must be a UUID`;
