import { ConflictError, type FieldError, ValidationError } from '../errors/domain-errors';
import type { DomainEvent, RecordedEnvelope } from '../events/envelope';
import { extend } from './extend';
import { assertOwnedAtVersion, definedOnly, unknownFields } from './field-rules';

/*
 * The pure parts every resource family's domain shares (docs/resource-conventions.md): a state
 * that is the resource's fields plus its owner, times and version; events that carry the fields
 * as they are after the event; creates that refuse a taken id; PATCHes that record only what
 * changes. No Nest import: domain code only.
 */

/** A family's aggregate state once it exists: its fields, its account, its times and its version. */
export type Resource<F> = F & {
  readonly id: string;
  readonly account_id: string;
  readonly created_at: string;
  readonly updated_at: string;
  /** The stream revision of its last event. */
  readonly version: number;
};

/** A create as a domain command: a new id (made by the service) and what the client sent. */
export interface CreateCommand<Kind extends string, Input> {
  readonly kind: Kind;
  readonly id: string;
  readonly account_id: string;
  readonly input: Input;
}

/** A command on an existing resource: whose it is (ownership) and the client's If-Match, if any. */
export interface ExistingResourceCommand {
  readonly id: string;
  readonly account_id: string;
  /** The client's If-Match version, checked after ownership (a 412 never tells another account the id exists). */
  readonly expected_version?: number;
}

/** `PATCH /{family}/{id}` as a domain command: the fields to change (undefined = absent). */
export interface PatchCommand<Changes> extends ExistingResourceCommand {
  readonly kind: 'update';
  readonly changes: Changes;
}

/** Exactly the fields `names` of `source` (event data also carries the resource id and `changed`). */
export function pickFields<F, K extends keyof F>(source: F, names: readonly K[]): Pick<F, K> {
  return Object.fromEntries(names.map((name) => [name, source[name]])) as Pick<F, K>;
}

/**
 * evolve() of a resource whose events each carry its fields as they are after the event: the
 * `created` event makes it (owned by the event's account), every later one replaces the fields.
 */
export function resourceEvolver<F, E extends DomainEvent>(
  created: E['type'],
  idField: keyof E['data'] & string,
  fields: readonly (keyof F)[],
): (state: Resource<F> | null, event: RecordedEnvelope<E>) => Resource<F> | null {
  return (state, event) => {
    const { metadata } = event;
    const data = event.data as unknown as F & Record<string, string>;
    const version = Number(event.revision);
    if (event.type === created) {
      // Properties around the spread, not after a leading one: see extend.ts.
      return {
        id: data[idField],
        account_id: metadata.account_id ?? '',
        ...pickFields(data, fields),
        created_at: metadata.occurred_at,
        updated_at: metadata.occurred_at,
        version,
      };
    }
    if (state === null) return state;
    return extend(state, pickFields(data, fields), { updated_at: metadata.occurred_at, version }) as Resource<F>;
  };
}

/**
 * The checks of a create, in order: the id must be new (ids are made by the service: a clash is
 * a 409, never an overwrite), then `errors` (every broken rule) is one 400.
 */
export function assertCreatable(state: unknown, resource: string, id: string, errors: readonly FieldError[]): void {
  if (state !== null)
    throw new ConflictError(`${/^[aeiou]/i.test(resource) ? 'An' : 'A'} ${resource} with id ${id} already exists`);
  if (errors.length > 0) throw new ValidationError(errors);
}

/** What a PATCH changes: the fields after it, and the names of those that differ (none: record nothing). */
export interface Patched<F, W extends keyof F> {
  readonly next: F;
  readonly changed: W[];
}

/**
 * A PATCH of a resource, checked in the conventions' order: ownership (404), If-Match (412),
 * then every bad or unwritable field in one 400. Only `writable` fields may be set; `fieldErrors`
 * checks the values present.
 */
export function decidePatch<F, W extends keyof F & string>(
  state: Resource<F> | null,
  command: PatchCommand<object>,
  resource: string,
  rules: {
    readonly fields: readonly (keyof F)[];
    readonly writable: readonly W[];
    readonly fieldErrors: (fields: object) => FieldError[];
  },
): Patched<F, W> {
  assertOwnedAtVersion(state, command, resource, command.id);
  const changes = definedOnly(command.changes);
  const errors = [...rules.fieldErrors(changes), ...unknownFields(changes, rules.writable)];
  if (errors.length > 0) throw new ValidationError(errors);
  const next = extend(pickFields(state as F, rules.fields), changes as Partial<F>) as F;
  return { next, changed: rules.writable.filter((field) => field in changes && next[field] !== state[field]) };
}
