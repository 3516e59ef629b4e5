/**
 * Helpers for the families' unit tests of decide/evolve and of their projections, without Nest
 * or a store. Specs import them as `@filing/platform/testing` (./index.ts), never the apps.
 */
import { ValidationError } from '../errors/domain-errors';
import type { DomainEvent, RecordedEnvelope } from '../events/envelope';

export interface RecordedOptions {
  readonly streamId: string;
  readonly revision: number;
  readonly occurredAt?: string;
  readonly accountId?: string;
  /** The global position; the revision when not given. */
  readonly position?: number;
}

/** What the store gives evolve() and projections: the event with its revision and metadata. */
export function recorded<E extends DomainEvent>(event: E, options: RecordedOptions): RecordedEnvelope<E> {
  const position = BigInt(options.position ?? options.revision);
  return {
    ...event,
    id: `event-${options.streamId}-${options.revision}`,
    streamId: options.streamId,
    revision: BigInt(options.revision),
    position: { commit: position, prepare: position },
    metadata: {
      account_id: options.accountId ?? 'acc-1',
      actor: 'client:c1',
      correlation_id: 'r',
      causation_id: null,
      occurred_at: options.occurredAt ?? '2026-01-01T00:00:00.000Z',
      schema_version: 1,
    },
  };
}

/**
 * `(state, command, occurredAt?) => state after it`: decide, then evolve over what it decided at
 * the next revisions of `streamId`, as handleCommand does. State is null or carries `version`.
 */
export function decideThenEvolve<S extends { readonly version: number } | null, E extends DomainEvent, C>(
  domain: { decide: (state: S, command: C) => readonly E[]; evolve: (state: S, event: RecordedEnvelope<E>) => S },
  streamId: string,
  accountId = 'acc-1',
) {
  return (state: S, command: C, occurredAt = '2026-01-01T00:00:00.000Z'): S => {
    const base = state === null ? 0 : state.version + 1;
    return domain
      .decide(state, command)
      .reduce(
        (s, e, i) => domain.evolve(s, recorded(e, { streamId, revision: base + i, occurredAt, accountId })),
        state,
      );
  };
}

/** The fields a ValidationError thrown by `fn` names, in order; fails if `fn` throws nothing or something else. */
export function validationFields(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ValidationError) return err.errors.map((e) => e.field);
    throw err;
  }
  throw new Error('expected a ValidationError');
}
