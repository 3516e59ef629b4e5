import type { JsonObject } from '@filing/event-store';
import { ConflictError, NotFoundError, type RecordedEnvelope, extend } from '@filing/platform';
import type { AttemptVerdict } from './outcome';
import { retryDelay } from './retry-schedule';
import { type DeliveryEnd, type DeliveryEvent, DeliveryEvents, type DeliveryFailed } from './delivery.events';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'cancelled';

export interface DeliveryState {
  readonly exists: boolean;
  readonly status: DeliveryStatus;
  readonly accountId: string | null;
  readonly endpointId: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly payload: JsonObject;
  readonly attemptCount: number;
  /** Attempts since it was scheduled or redelivered: indexes the retry schedule. */
  readonly roundAttempts: number;
  readonly nextAttemptAt: string | null;
  /** Until when an instance's claim on the next attempt holds (DeliveryClaimed); null once attempted. */
  readonly claimedUntil: string | null;
}

export const initialDelivery: DeliveryState = {
  exists: false,
  status: 'pending',
  accountId: null,
  endpointId: '',
  eventId: '',
  eventType: '',
  payload: {},
  attemptCount: 0,
  roundAttempts: 0,
  nextAttemptAt: null,
  claimedUntil: null,
};

/** The delivery has ended: nothing more is due or claimed. */
const ended = (state: DeliveryState, status: DeliveryEnd): DeliveryState =>
  extend(state, { status, nextAttemptAt: null, claimedUntil: null });

export function evolveDelivery(state: DeliveryState, event: RecordedEnvelope<DeliveryEvent>): DeliveryState {
  switch (event.type) {
    case DeliveryEvents.DeliveryScheduled:
      return extend(state, {
        exists: true,
        status: 'pending',
        accountId: event.data.account_id,
        endpointId: event.data.endpoint_id,
        eventId: event.data.event_id,
        eventType: event.data.event_type,
        payload: event.data.payload,
        nextAttemptAt: event.data.due_at,
      });
    case DeliveryEvents.DeliveryClaimed:
      return extend(state, { claimedUntil: event.data.lease_until });
    case DeliveryEvents.DeliveryAttempted: {
      const attempted = extend(state, {
        attemptCount: state.attemptCount + 1,
        roundAttempts: state.roundAttempts + 1,
        claimedUntil: null,
      });
      return event.data.outcome === 'succeeded' ? ended(attempted, 'delivered') : attempted;
    }
    case DeliveryEvents.DeliveryRetryScheduled:
      return extend(state, { nextAttemptAt: event.data.next_attempt_at });
    case DeliveryEvents.DeliverySucceeded:
      return ended(state, 'delivered');
    case DeliveryEvents.DeliveryFailed:
      return ended(state, 'failed');
    case DeliveryEvents.DeliveryCancelled:
      return ended(state, 'cancelled');
    case DeliveryEvents.DeliveryRedeliveryRequested:
      return extend(state, {
        status: 'pending',
        roundAttempts: 0,
        nextAttemptAt: event.data.due_at,
        claimedUntil: null,
      });
    default:
      return state;
  }
}

export interface AttemptRecord {
  readonly attemptedAt: Date;
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly durationMs: number;
  readonly verdict: AttemptVerdict;
  /** From a 429/503 `Retry-After`, in ms. */
  readonly retryAfterMs: number | null;
}

export type DeliveryCommand =
  /** The next attempt is this instance's until `now + leaseMs`. */
  | {
      readonly kind: 'claim';
      readonly deliveryId: string;
      readonly instance: string;
      readonly now: Date;
      readonly leaseMs: number;
    }
  | {
      readonly kind: 'record-attempt';
      readonly deliveryId: string;
      readonly attempt: AttemptRecord;
      readonly delaysMs: readonly number[];
      readonly random: number;
    }
  | { readonly kind: 'cancel'; readonly deliveryId: string; readonly reason: string }
  | {
      readonly kind: 'redeliver';
      readonly deliveryId: string;
      readonly accountId: string;
      readonly now: Date;
      readonly target: DeliveryTarget | null;
    };

/**
 * Where a delivery would go, as the read models say now (one query: read-model/delivery-target.queries.ts).
 * The dispatcher reads it before every attempt, a redelivery before it is accepted.
 */
export interface DeliveryTarget {
  readonly endpointId: string;
  readonly accountId: string;
  readonly url: string;
  /** A missing endpoint (another account's, or never made) reads as deleted. */
  readonly endpoint: 'enabled' | 'disabled' | 'deleted';
  /** The account switch *Webhook Notifications*. */
  readonly notificationsEnabled: boolean;
  /**
   * The secrets that sign now, sealed (SecretBox): the current one, and the previous one while a
   * rotation's overlap lasts. One an older version never put in the stream (and that was not
   * imported from its webhook-secrets.db) is missing.
   */
  readonly signingSecrets: readonly string[];
}

/** Why nothing may be sent to the target now, or null when it may. */
export type Unsendable = 'endpoint-disabled' | 'endpoint-deleted' | 'notifications-off';

/** null: no such endpoint (of this account) in the read model, i.e. deleted. */
export function unsendable(
  target: Pick<DeliveryTarget, 'endpoint' | 'notificationsEnabled'> | null,
): Unsendable | null {
  const endpoint = target?.endpoint ?? 'deleted';
  if (endpoint !== 'enabled') return endpoint === 'deleted' ? 'endpoint-deleted' : 'endpoint-disabled';
  return target?.notificationsEnabled ? null : 'notifications-off';
}

/** What the dispatcher does with a delivery it picked from the read model. */
export type DispatchDecision =
  | { readonly kind: 'send'; readonly target: DeliveryTarget }
  /** The endpoint was disabled or deleted, or the switch turned off, since it was scheduled. */
  | { readonly kind: 'cancel'; readonly command: Extract<DeliveryCommand, { kind: 'cancel' }> }
  /** Not (or no longer) pending, not yet due, or claimed by an instance: the read model was behind the stream. */
  | { readonly kind: 'skip' };

/** Another instance holds the next attempt: its claim's lease has not run out. */
function claimedAt(state: DeliveryState, now: Date): boolean {
  return state.claimedUntil !== null && Date.parse(state.claimedUntil) > now.getTime();
}

/** The send/cancel rule, checked before every attempt: a stale row is skipped, a stopped target cancels. */
export function decideDispatch(
  state: DeliveryState,
  deliveryId: string,
  target: DeliveryTarget | null,
  now: Date,
): DispatchDecision {
  if (!state.exists || state.status !== 'pending') return { kind: 'skip' };
  if (state.nextAttemptAt !== null && Date.parse(state.nextAttemptAt) > now.getTime()) return { kind: 'skip' };
  if (claimedAt(state, now)) return { kind: 'skip' };
  const why = unsendable(target);
  if (why === null && target !== null) return { kind: 'send', target };
  const reason = why === 'notifications-off' ? 'webhook notifications switched off' : 'endpoint disabled or deleted';
  return { kind: 'cancel', command: { kind: 'cancel', deliveryId, reason } };
}

type DeliveryDecider<K extends DeliveryCommand['kind']> = (
  state: DeliveryState,
  command: Extract<DeliveryCommand, { kind: K }>,
) => DeliveryEvent[];

/** The next attempt is this instance's, unless the delivery is not pending or another instance holds it. */
const decideClaim: DeliveryDecider<'claim'> = (state, command) => {
  if (state.status !== 'pending' || claimedAt(state, command.now)) return [];
  const lease_until = new Date(command.now.getTime() + command.leaseMs).toISOString();
  return [
    {
      type: DeliveryEvents.DeliveryClaimed,
      data: {
        delivery_id: command.deliveryId,
        attempt: state.attemptCount + 1,
        instance: command.instance,
        lease_until,
      },
    },
  ];
};

/** An attempt, and what it leads to: delivered, failed for good, or a retry at the schedule's next slot. */
const decideAttempt: DeliveryDecider<'record-attempt'> = (state, command) => {
  const { deliveryId: delivery_id, attempt: a } = command;
  const attempted = {
    type: DeliveryEvents.DeliveryAttempted,
    data: {
      delivery_id,
      attempt: state.attemptCount + 1,
      attempted_at: a.attemptedAt.toISOString(),
      status_code: a.statusCode,
      error: a.error,
      duration_ms: Math.round(a.durationMs),
    },
  } satisfies DeliveryEvent;
  // Cancelled (or finished) while the request was in flight: the attempt is still a fact.
  if (state.status !== 'pending') return [attempted];
  // One event, not Attempted + Succeeded: each event costs every projection and subscriber.
  if (a.verdict === 'delivered')
    return [{ type: attempted.type, data: extend(attempted.data, { outcome: 'succeeded' }) }];
  if (a.verdict === 'failed') {
    const reason = a.statusCode !== null ? `the receiver answered ${a.statusCode}` : (a.error ?? 'the attempt failed');
    return [attempted, { type: DeliveryEvents.DeliveryFailed, data: failedData(state, delivery_id, reason) }];
  }
  const delay = retryDelay(state.roundAttempts + 1, command.delaysMs, a.retryAfterMs, () => command.random);
  if (delay === null) {
    return [
      attempted,
      { type: DeliveryEvents.DeliveryFailed, data: failedData(state, delivery_id, 'retries exhausted') },
    ];
  }
  const next = new Date(a.attemptedAt.getTime() + Math.round(a.durationMs) + delay).toISOString();
  return [attempted, { type: DeliveryEvents.DeliveryRetryScheduled, data: { delivery_id, next_attempt_at: next } }];
};

const decideCancel: DeliveryDecider<'cancel'> = (state, command) =>
  state.status === 'pending'
    ? [{ type: DeliveryEvents.DeliveryCancelled, data: { delivery_id: command.deliveryId, reason: command.reason } }]
    : [];

/** Only a failed or cancelled delivery of the caller's account, to a target that would take it. */
const decideRedelivery: DeliveryDecider<'redeliver'> = (state, command) => {
  if (state.accountId !== command.accountId) throw NotFoundError.of('webhook delivery', command.deliveryId);
  if (state.status !== 'failed' && state.status !== 'cancelled') {
    throw new ConflictError(`Only a failed or cancelled delivery can be redelivered; this one is ${state.status}`);
  }
  // Sent now it would only be cancelled again: say why instead of accepting it.
  refuseUnsendable(command.target, "The delivery's endpoint");
  const data = { delivery_id: command.deliveryId, due_at: command.now.toISOString() };
  return [{ type: DeliveryEvents.DeliveryRedeliveryRequested, data }];
};

/** One decider per command (an unhandled kind does not compile). */
const DELIVERY_DECIDERS: { readonly [K in DeliveryCommand['kind']]: DeliveryDecider<K> } = {
  claim: decideClaim,
  'record-attempt': decideAttempt,
  cancel: decideCancel,
  redeliver: decideRedelivery,
};

export function decideDelivery(state: DeliveryState, command: DeliveryCommand): DeliveryEvent[] {
  if (!state.exists) throw NotFoundError.of('webhook delivery', command.deliveryId);
  const decide = DELIVERY_DECIDERS[command.kind] as DeliveryDecider<DeliveryCommand['kind']>;
  return decide(state, command);
}

/** A failure names what failed, so `webhook_delivery.failed` is mapped from its event alone. */
function failedData(state: DeliveryState, delivery_id: string, reason: string): DeliveryFailed['data'] {
  return {
    delivery_id,
    reason,
    account_id: state.accountId,
    endpoint_id: state.endpointId,
    event_id: state.eventId,
    event_type: state.eventType,
  };
}

/** A 409 saying what to change when a delivery to `target` would only be cancelled (a redelivery, a replay). */
export function refuseUnsendable(target: Parameters<typeof unsendable>[0], endpoint: string): void {
  switch (unsendable(target)) {
    case 'endpoint-deleted':
      throw new ConflictError(`${endpoint} is deleted`);
    case 'endpoint-disabled':
      throw new ConflictError(`${endpoint} is disabled: enable it first`);
    case 'notifications-off':
      throw new ConflictError('Webhook Notifications are off for this account: switch them on first');
    case null:
      return;
  }
}
