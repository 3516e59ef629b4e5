import { NotFoundError, PreconditionFailedError, ValidationError } from '../errors/domain-errors';
import type { DomainEvent, RecordedEnvelope } from '../events/envelope';
import { recorded } from './domain';

/** What a family's domain is to its unit specs: `decide` and `evolve` over recorded events. */
export interface Decider<S, E extends DomainEvent, C> {
  readonly initialState: S;
  readonly evolve: (state: S, event: RecordedEnvelope<E>) => S;
  readonly decide: (state: S, command: C) => readonly E[];
}

export interface DeciderSpecificationOptions {
  /** The stream the given events are recorded in (default `test-1`). */
  readonly streamId?: string;
  /** Their account (default `acc-1`). */
  readonly accountId?: string;
  /** Their time, and the decided events' time for `thenState` (default 2026-01-01T00:00:00.000Z). */
  readonly occurredAt?: string;
}

/** A given event: a domain event, recorded at the next revision with the defaults, or one already recorded (its own time, account). */
export type GivenEvent<E extends DomainEvent> = E | RecordedEnvelope<E>;

export interface DeciderThen<S, E extends DomainEvent> {
  /** decide() returns exactly these events (or `expected` is an assertion run on them). */
  then(expected: E | readonly E[] | ((events: readonly E[]) => void)): void;
  /** decide() returns no event: the write records nothing. */
  thenNothingHappened(): void;
  /** decide() throws an instance of `type`, which `check` may look into further. */
  thenThrows<T extends Error>(type: abstract new (...args: never[]) => T, check?: (error: T) => void): void;
  /** decide() throws one ValidationError naming exactly these fields, in this order. */
  thenInvalid(fields: readonly string[]): void;
  /** The state after evolving what decide() returns, recorded at `occurredAt` (or the default time). */
  thenState(expected: S | ((state: S) => void), occurredAt?: string): void;
}

/** What `DeciderSpecification.for(…)` returns: `given(events).when(command).then…`. */
export type Given<S, E extends DomainEvent, C> = (given?: GivenEvent<E> | readonly GivenEvent<E>[]) => {
  when(command: C): DeciderThen<S, E>;
};

/**
 * Given / when / then for a family's pure domain, as Emmett's `DeciderSpecification.for(decider)`:
 *
 * ```ts
 * const given = DeciderSpecification.for({ decide, evolve, initialState }, { streamId: 'task-1' });
 * given([taskCreated]).when(update({ status: 'completed' })).then([taskUpdated]);
 * given([]).when(create({ title: ' ' })).thenInvalid(['title']);
 * ```
 */
export const DeciderSpecification = {
  for<S, E extends DomainEvent, C>(decider: Decider<S, E, C>, options: DeciderSpecificationOptions = {}) {
    const streamId = options.streamId ?? 'test-1';
    const defaults = { streamId, accountId: options.accountId, occurredAt: options.occurredAt };
    const record = (event: GivenEvent<E>, revision: number): RecordedEnvelope<E> =>
      'revision' in event ? event : recorded(event, { ...defaults, revision });

    const spec: Given<S, E, C> = (given = []) => ({
      when(command: C): DeciderThen<S, E> {
        const events = (Array.isArray(given) ? given : [given]) as readonly GivenEvent<E>[];
        const state = events.map(record).reduce(decider.evolve, decider.initialState);
        const decide = () => decider.decide(state, command);
        return {
          then(expected) {
            const decided = decide();
            if (typeof expected === 'function') expected(decided);
            else expect(decided).toEqual(Array.isArray(expected) ? expected : [expected]);
          },
          thenNothingHappened() {
            expect(decide()).toEqual([]);
          },
          thenThrows(type, check) {
            let thrown: unknown = undefined;
            try {
              decide();
            } catch (err) {
              thrown = err;
            }
            expect(thrown).toBeInstanceOf(type);
            check?.(thrown as never);
          },
          thenInvalid(fields) {
            this.thenThrows(ValidationError, (error) => expect(error.errors.map((e) => e.field)).toEqual(fields));
          },
          thenState(expected, occurredAt = options.occurredAt) {
            const next = decide()
              .map((e, i) => recorded(e, { ...defaults, occurredAt, revision: events.length + i }))
              .reduce(decider.evolve, state);
            if (typeof expected === 'function') (expected as (state: S) => void)(next);
            else expect(next).toEqual(expected);
          },
        };
      },
    });
    return spec;
  },
};

/**
 * The conventions' first checks of a write on an existing resource, in their order: a missing
 * one, or another account's, is a 404 whatever version the command names (so neither a 412 nor
 * a 409 tells another account that the id exists); then the owner's stale If-Match is a 412.
 * `command(account, expectedVersion)` is the write; `existing` the resource's events, at `version`.
 */
export function expectOwnershipBeforeIfMatch<S, E extends DomainEvent, C>(
  given: Given<S, E, C>,
  existing: readonly GivenEvent<E>[],
  command: (accountId: string, expectedVersion?: number) => C,
  { owner, version }: { readonly owner: string; readonly version: number },
): void {
  given([]).when(command(owner)).thenThrows(NotFoundError);
  for (const expected of [undefined, version, version + 5])
    given(existing)
      .when(command(`${owner}-other`, expected))
      .thenThrows(NotFoundError);
  given(existing)
    .when(command(owner, version + 1))
    .thenThrows(PreconditionFailedError);
  expect(() =>
    given(existing)
      .when(command(owner, version))
      .then(() => undefined),
  ).not.toThrow();
}

/** A family's create (`createKind`) and PATCH commands on one resource, as loose as a spec needs them (bad input on purpose). */
export function resourceCommands<C>(id: string, accountId: string, createKind = 'create') {
  return {
    create: (input: Readonly<Record<string, unknown>>) =>
      ({ kind: createKind, id, account_id: accountId, input }) as unknown as C,
    update: (changes: Readonly<Record<string, unknown>>, account = accountId, expected_version?: number) =>
      ({ kind: 'update', id, account_id: account, changes, expected_version }) as unknown as C,
  };
}

/** A resource's created event and its updated events (the fields after, and `changed`), shaped as the conventions say. */
export function resourceEvents<E extends DomainEvent>(
  types: { readonly created: string; readonly updated: string },
  id: object,
  fields: object,
) {
  return {
    created: { type: types.created, data: { ...id, ...fields } } as unknown as E,
    updated: (changes: object) =>
      ({ type: types.updated, data: { ...id, ...fields, ...changes, changed: Object.keys(changes) } }) as unknown as E,
  };
}
