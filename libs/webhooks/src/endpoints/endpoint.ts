import { ConflictError, NotFoundError, type RecordedEnvelope, extend } from '@filing/platform';
import type { EndpointCommand } from './endpoint-command';
import { type DisabledReason, disabledReasonOf, type EndpointEvent, EndpointEvents } from './endpoint.events';

export type { EndpointCommand } from './endpoint-command';

/** How long the previous secret keeps signing after a rotation. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

export interface EndpointState {
  readonly exists: boolean;
  readonly deleted: boolean;
  readonly accountId: string | null;
  readonly enabled: boolean;
  /** null while enabled. */
  readonly disabledReason: DisabledReason | null;
  readonly url: string;
  readonly description: string | null;
  readonly eventTypes: readonly string[];
  /** Sends per second at most; null: no limit. */
  readonly rateLimitPerSecond: number | null;
  /** When it was last enabled (null: never). A failing streak counts from then at the earliest. */
  readonly enabledAt: string | null;
  /** The `failing_since` of the last streak reported as failing (EndpointFailing); null: none. */
  readonly failingReported: string | null;
  readonly secretGeneration: number;
  readonly secretFingerprint: string;
  /** Until the next rotation: the previous secret's fingerprint (null before the first). */
  readonly previousFingerprint: string | null;
  /** Sealed secrets by fingerprint, the current one and the previous one (absent: not sealed in the stream yet). */
  readonly sealedSecrets: Readonly<Record<string, string>>;
}

export const initialEndpoint: EndpointState = {
  exists: false,
  deleted: false,
  accountId: null,
  enabled: false,
  disabledReason: null,
  url: '',
  description: null,
  eventTypes: [],
  rateLimitPerSecond: null,
  enabledAt: null,
  failingReported: null,
  secretGeneration: 0,
  secretFingerprint: '',
  previousFingerprint: null,
  sealedSecrets: {},
};

/** One small function per endpoint event: how it changes the endpoint's state. */
const evolvers: {
  readonly [T in EndpointEvent['type']]: (
    state: EndpointState,
    event: RecordedEnvelope<Extract<EndpointEvent, { type: T }>>,
  ) => EndpointState;
} = {
  [EndpointEvents.EndpointCreated]: (state, { data, metadata }) =>
    extend(state, {
      exists: true,
      // Created disabled: it waits for a user to enable it.
      disabledReason: 'manual',
      accountId: metadata.account_id,
      url: data.url,
      description: data.description,
      eventTypes: data.event_types,
      rateLimitPerSecond: data.rate_limit_per_second ?? null,
      secretGeneration: data.secret_generation,
      secretFingerprint: data.secret_fingerprint,
      sealedSecrets: sealedOnly(data.secret_fingerprint, data.secret_sealed),
    }),
  [EndpointEvents.EndpointUpdated]: (state, { data }) =>
    extend(state, {
      url: data.url ?? state.url,
      description: data.description !== undefined ? data.description : state.description,
      eventTypes: data.event_types ?? state.eventTypes,
      rateLimitPerSecond:
        data.rate_limit_per_second !== undefined ? data.rate_limit_per_second : state.rateLimitPerSecond,
    }),
  [EndpointEvents.EndpointEnabled]: (state, { metadata }) =>
    extend(state, { enabled: true, disabledReason: null, enabledAt: metadata.occurred_at ?? null }),
  [EndpointEvents.EndpointDisabled]: (state, { data }) =>
    extend(state, { enabled: false, disabledReason: disabledReasonOf(data) }),
  [EndpointEvents.EndpointFailing]: (state, { data }) => extend(state, { failingReported: data.failing_since }),
  [EndpointEvents.EndpointDeleted]: (state) => extend(state, { deleted: true, enabled: false }),
  [EndpointEvents.EndpointSecretRotated]: (state, { data }) =>
    extend(state, {
      secretGeneration: data.secret_generation,
      secretFingerprint: data.secret_fingerprint,
      previousFingerprint: state.secretFingerprint,
      sealedSecrets: extend(
        sealedOnly(state.secretFingerprint, state.sealedSecrets[state.secretFingerprint]),
        sealedOnly(data.secret_fingerprint, data.secret_sealed),
      ),
    }),
  [EndpointEvents.EndpointSecretSealed]: (state, { data }) =>
    extend(state, { sealedSecrets: extend(state.sealedSecrets, { [data.secret_fingerprint]: data.secret_sealed }) }),
};

export function evolveEndpoint(state: EndpointState, event: RecordedEnvelope<EndpointEvent>): EndpointState {
  const evolve = evolvers[event.type] as
    ((state: EndpointState, event: RecordedEnvelope<EndpointEvent>) => EndpointState) | undefined;
  return evolve ? evolve(state, event) : state;
}

function sealedOnly(fingerprint: string, sealed: string | undefined): Record<string, string> {
  return sealed === undefined ? {} : { [fingerprint]: sealed };
}

/** The 409 of a create beyond the cap: names the limit and how to make room. */
export function endpointLimitReached(max: number): ConflictError {
  return new ConflictError(
    `This account already has the most webhook endpoints allowed: ${max} (WEBHOOK_MAX_ENDPOINTS_PER_ACCOUNT). Delete one to create another`,
  );
}

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/** The command of kind K (`enable` and `delete` share one shape). */
type CommandOf<K extends EndpointCommand['kind']> = EndpointCommand extends infer C
  ? C extends { readonly kind: infer CK }
    ? K extends CK
      ? C
      : never
    : never
  : never;

type EndpointDecider<K extends EndpointCommand['kind']> = (
  state: EndpointState,
  command: CommandOf<K>,
) => EndpointEvent[];

const decideCreate: EndpointDecider<'create'> = (state, command) => {
  const endpoint_id = command.endpointId;
  if (state.exists) throw new ConflictError(`A webhook endpoint with id ${endpoint_id} already exists`);
  if (command.accountEndpoints >= command.maxEndpoints) throw endpointLimitReached(command.maxEndpoints);
  return [
    {
      type: EndpointEvents.EndpointCreated,
      data: {
        endpoint_id,
        url: command.url,
        description: command.description,
        event_types: [...command.eventTypes],
        secret_generation: 1,
        secret_fingerprint: command.secretFingerprint,
        ...(command.secretSealed !== undefined && { secret_sealed: command.secretSealed }),
        rate_limit_per_second: command.rateLimitPerSecond,
      },
    },
  ];
};

const decideSeal: EndpointDecider<'seal-secret'> = (state, command) => {
  const endpoint_id = command.endpointId;
  if (!state.exists) throw NotFoundError.of('webhook endpoint', endpoint_id);
  const live = command.fingerprint === state.secretFingerprint || command.fingerprint === state.previousFingerprint;
  if (state.deleted || !live || (state.sealedSecrets[command.fingerprint] ?? null) !== command.replaces) return [];
  return [
    {
      type: EndpointEvents.EndpointSecretSealed,
      data: { endpoint_id, secret_fingerprint: command.fingerprint, secret_sealed: command.sealed },
    },
  ];
};

const decideUpdate: EndpointDecider<'update'> = (state, command) => {
  const data: Extract<EndpointEvent, { type: typeof EndpointEvents.EndpointUpdated }>['data'] = {
    endpoint_id: command.endpointId,
  };
  if (command.url !== undefined && command.url !== state.url) data.url = command.url;
  if (command.description !== undefined && command.description !== state.description)
    data.description = command.description;
  if (command.eventTypes !== undefined && !sameList(command.eventTypes, state.eventTypes))
    data.event_types = [...command.eventTypes];
  if (command.rateLimitPerSecond !== undefined && command.rateLimitPerSecond !== state.rateLimitPerSecond) {
    data.rate_limit_per_second = command.rateLimitPerSecond;
  }
  return Object.keys(data).length > 1 ? [{ type: EndpointEvents.EndpointUpdated, data }] : [];
};

const decideEnable: EndpointDecider<'enable'> = (state, command) =>
  state.enabled ? [] : [{ type: EndpointEvents.EndpointEnabled, data: { endpoint_id: command.endpointId } }];

const decideDisable: EndpointDecider<'disable'> = (state, command) => {
  const endpoint_id = command.endpointId;
  // Already disabled: the first reason stands (a late 410 does not relabel a user's disable).
  if (!state.enabled) return [];
  const failing = command.failing;
  if (!failing) return [{ type: EndpointEvents.EndpointDisabled, data: { endpoint_id, reason: command.reason } }];
  // Judged on attempts from before the last enable (a read model behind the stream): enabling starts the count again.
  if (state.enabledAt !== null && Date.parse(state.enabledAt) >= Date.parse(failing.since)) return [];
  return [
    {
      type: EndpointEvents.EndpointDisabled,
      data: {
        endpoint_id,
        reason: command.reason,
        failing_since: failing.since,
        last_failure_at: failing.lastFailureAt,
      },
    },
  ];
};

const decideDelete: EndpointDecider<'delete'> = (_state, command) => [
  { type: EndpointEvents.EndpointDeleted, data: { endpoint_id: command.endpointId } },
];

const decideRotation: EndpointDecider<'rotate-secret'> = (state, command) => [
  {
    type: EndpointEvents.EndpointSecretRotated,
    data: {
      endpoint_id: command.endpointId,
      secret_generation: state.secretGeneration + 1,
      secret_fingerprint: command.secretFingerprint,
      ...(command.secretSealed !== undefined && { secret_sealed: command.secretSealed }),
      previous_generation: state.secretGeneration,
      previous_fingerprint: state.secretFingerprint,
      previous_expires_at: new Date(command.now.getTime() + ROTATION_OVERLAP_MS).toISOString(),
    },
  },
];

type OwnedKind = Exclude<EndpointCommand['kind'], 'create' | 'seal-secret'>;

/** One decider per command acting on the account's own endpoint (an unhandled kind does not compile). */
const OWNED_DECIDERS: { readonly [K in OwnedKind]: EndpointDecider<K> } = {
  update: decideUpdate,
  enable: decideEnable,
  disable: decideDisable,
  delete: decideDelete,
  'report-failing': (state, command) => decideFailing(state, command.endpointId, command.failing),
  'rotate-secret': decideRotation,
};

export function decideEndpoint(state: EndpointState, command: EndpointCommand): EndpointEvent[] {
  if (command.kind === 'create') return decideCreate(state, command);
  if (command.kind === 'seal-secret') return decideSeal(state, command);
  if (!state.exists || state.deleted || state.accountId !== command.accountId) {
    throw NotFoundError.of('webhook endpoint', command.endpointId);
  }
  const decide = OWNED_DECIDERS[command.kind] as EndpointDecider<OwnedKind>;
  return decide(state, command);
}

/**
 * A streak is reported once: not again for the same first failure, not while disabled, and not
 * for attempts from before the last enable (a read model behind the stream; enabling starts over).
 */
function decideFailing(
  state: EndpointState,
  endpoint_id: string,
  failing: { readonly since: string; readonly lastFailureAt: string },
): EndpointEvent[] {
  if (!state.enabled || state.failingReported === failing.since) return [];
  if (state.enabledAt !== null && Date.parse(state.enabledAt) >= Date.parse(failing.since)) return [];
  return [
    {
      type: EndpointEvents.EndpointFailing,
      data: { endpoint_id, failing_since: failing.since, last_failure_at: failing.lastFailureAt },
    },
  ];
}
