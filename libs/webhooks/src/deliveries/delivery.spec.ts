import { ConflictError, NotFoundError, type RecordedEnvelope } from '@filing/platform';
import {
  decideDelivery,
  decideDispatch,
  evolveDelivery,
  initialDelivery,
  type AttemptRecord,
  type DeliveryState,
  type DeliveryTarget,
} from './delivery';
import type { DeliveryEvent } from './delivery.events';

let rev = 0;
const envelope = (e: DeliveryEvent) =>
  ({
    ...e,
    id: `id-${rev}`,
    revision: BigInt(rev++),
    streamId: 's',
    position: { commit: 1n, prepare: 1n },
    metadata: { account_id: 'A' },
  }) as unknown as RecordedEnvelope<DeliveryEvent>;
const fold = (state: DeliveryState, events: DeliveryEvent[]) => events.map(envelope).reduce(evolveDelivery, state);

const scheduled: DeliveryEvent = {
  type: 'webhooks.DeliveryScheduled',
  data: {
    delivery_id: 'D',
    endpoint_id: 'E',
    account_id: 'A',
    event_id: 'EV',
    event_type: 'entity.created',
    source_position: '5/5',
    payload: { event_id: 'EV' },
    due_at: '2026-11-22T10:00:00.000Z',
  },
};
const pending = fold(initialDelivery, [scheduled]);
const sendable: DeliveryTarget = {
  endpointId: 'E',
  accountId: 'A',
  url: 'https://example.com/hook',
  endpoint: 'enabled',
  notificationsEnabled: true,
  signingSecrets: ['v1.k1.s1'],
};
const at = new Date('2026-11-22T10:00:01.000Z');
const attempt = (over: Partial<AttemptRecord>): AttemptRecord => ({
  attemptedAt: at,
  statusCode: 503,
  error: null,
  durationMs: 10,
  verdict: 'retry',
  retryAfterMs: null,
  ...over,
});
const record = (state: DeliveryState, a: AttemptRecord, delaysMs = [100, 200]) =>
  decideDelivery(state, { kind: 'record-attempt', deliveryId: 'D', attempt: a, delaysMs, random: 0.5 });
const LEASE_MS = 15_000;
const claim = (state: DeliveryState, instance: string, now: Date) =>
  decideDelivery(state, { kind: 'claim', deliveryId: 'D', instance, now, leaseMs: LEASE_MS });

describe('delivery', () => {
  it('is pending and due when scheduled', () => {
    expect(pending).toEqual(
      expect.objectContaining({ exists: true, status: 'pending', nextAttemptAt: '2026-11-22T10:00:00.000Z' }),
    );
  });

  it('a 2xx attempt delivers it, in one event that says so', () => {
    const events = record(pending, attempt({ statusCode: 200, verdict: 'delivered' }));
    expect(events).toEqual([
      {
        type: 'webhooks.DeliveryAttempted',
        data: {
          delivery_id: 'D',
          attempt: 1,
          attempted_at: at.toISOString(),
          status_code: 200,
          error: null,
          duration_ms: 10,
          outcome: 'succeeded',
        },
      },
    ]);
    expect(fold(pending, events)).toEqual(
      expect.objectContaining({ status: 'delivered', attemptCount: 1, nextAttemptAt: null, claimedUntil: null }),
    );
  });

  it('an older stream, its attempt then DeliverySucceeded, folds to the same state as the one event', () => {
    const claimed = fold(pending, claim(pending, 'i-1', at));
    const [attempted] = record(claimed, attempt({ statusCode: 200, verdict: 'delivered' }));
    const { outcome, ...withoutOutcome } = attempted.data as { outcome?: string };
    expect(outcome).toBe('succeeded');
    const older: DeliveryEvent[] = [
      { ...attempted, data: withoutOutcome } as DeliveryEvent,
      { type: 'webhooks.DeliverySucceeded', data: { delivery_id: 'D', attempt: 1 } },
    ];
    const afterAttemptAlone = fold(claimed, older.slice(0, 1));
    expect(afterAttemptAlone).toEqual(expect.objectContaining({ status: 'pending', attemptCount: 1 }));
    expect(fold(claimed, older)).toEqual(fold(claimed, [attempted]));
  });

  it('a failed or retried attempt states no outcome: the next event is its outcome', () => {
    for (const a of [attempt({}), attempt({ statusCode: 404, verdict: 'failed' })]) {
      const [attempted, outcome] = record(pending, a);
      expect(attempted.data).not.toHaveProperty('outcome');
      expect(['webhooks.DeliveryRetryScheduled', 'webhooks.DeliveryFailed']).toContain(outcome.type);
    }
  });

  it('retries on the schedule, with growing gaps, then fails when exhausted', () => {
    const first = record(pending, attempt({}));
    expect(first[1]).toEqual({
      type: 'webhooks.DeliveryRetryScheduled',
      data: { delivery_id: 'D', next_attempt_at: '2026-11-22T10:00:01.110Z' },
    });
    const s1 = fold(pending, first);
    const second = record(s1, attempt({}));
    expect(second[1].data).toEqual({ delivery_id: 'D', next_attempt_at: '2026-11-22T10:00:01.210Z' });
    const s2 = fold(s1, second);
    const third = record(s2, attempt({}));
    expect(third[1]).toEqual({
      type: 'webhooks.DeliveryFailed',
      data: {
        delivery_id: 'D',
        reason: 'retries exhausted',
        account_id: 'A',
        endpoint_id: 'E',
        event_id: 'EV',
        event_type: 'entity.created',
      },
    });
    expect(fold(s2, third)).toEqual(expect.objectContaining({ status: 'failed', attemptCount: 3 }));
  });

  it('honours Retry-After', () => {
    const events = record(pending, attempt({ statusCode: 429, retryAfterMs: 5000 }));
    expect(events[1].data).toEqual({ delivery_id: 'D', next_attempt_at: '2026-11-22T10:00:06.010Z' });
  });

  it('fails at once on a 4xx or 3xx', () => {
    const events = record(pending, attempt({ statusCode: 404, verdict: 'failed' }));
    expect(events[1]).toEqual({
      type: 'webhooks.DeliveryFailed',
      data: {
        delivery_id: 'D',
        reason: 'the receiver answered 404',
        account_id: 'A',
        endpoint_id: 'E',
        event_id: 'EV',
        event_type: 'entity.created',
      },
    });
  });

  it('cancels a pending delivery only; an attempt that raced the cancel is recorded alone', () => {
    const cancel = decideDelivery(pending, { kind: 'cancel', deliveryId: 'D', reason: 'endpoint disabled or deleted' });
    expect(cancel.map((e) => e.type)).toEqual(['webhooks.DeliveryCancelled']);
    const cancelled = fold(pending, cancel);
    expect(decideDelivery(cancelled, { kind: 'cancel', deliveryId: 'D', reason: 'x' })).toEqual([]);
    const late = record(cancelled, attempt({ statusCode: 200, verdict: 'delivered' }));
    expect(late.map((e) => e.type)).toEqual(['webhooks.DeliveryAttempted']);
    // Not a success of the delivery: it stays cancelled.
    expect(late[0].data).not.toHaveProperty('outcome');
    expect(fold(cancelled, late).status).toBe('cancelled');
  });

  it('redelivers failed or cancelled deliveries of the same account, with a fresh schedule', () => {
    const now = new Date('2026-11-22T11:00:00.000Z');
    const failed = fold(pending, record(pending, attempt({ statusCode: 410, verdict: 'failed' })));
    const events = decideDelivery(failed, {
      kind: 'redeliver',
      deliveryId: 'D',
      accountId: 'A',
      now,
      target: sendable,
    });
    expect(events).toEqual([
      { type: 'webhooks.DeliveryRedeliveryRequested', data: { delivery_id: 'D', due_at: now.toISOString() } },
    ]);
    expect(fold(failed, events)).toEqual(
      expect.objectContaining({ status: 'pending', roundAttempts: 0, attemptCount: 1 }),
    );
    expect(() =>
      decideDelivery(failed, { kind: 'redeliver', deliveryId: 'D', accountId: 'B', now, target: sendable }),
    ).toThrow(NotFoundError);
    expect(() =>
      decideDelivery(pending, { kind: 'redeliver', deliveryId: 'D', accountId: 'A', now, target: sendable }),
    ).toThrow(ConflictError);
  });

  it('refuses a redelivery that could not be sent, saying why: endpoint disabled or deleted, notifications off', () => {
    const now = new Date('2026-11-22T11:00:00.000Z');
    const failed = fold(pending, record(pending, attempt({ statusCode: 410, verdict: 'failed' })));
    const redeliver = (target: Partial<DeliveryTarget> | null) => () =>
      decideDelivery(failed, {
        kind: 'redeliver',
        deliveryId: 'D',
        accountId: 'A',
        now,
        target: target && { ...sendable, ...target },
      });
    expect(redeliver({ endpoint: 'disabled' })).toThrow(/endpoint is disabled: enable it first/);
    expect(redeliver({ endpoint: 'deleted' })).toThrow(/endpoint is deleted/);
    expect(redeliver(null)).toThrow(/endpoint is deleted/);
    expect(redeliver({ notificationsEnabled: false })).toThrow(/Webhook Notifications are off/);
    expect(redeliver({ endpoint: 'deleted', notificationsEnabled: false })).toThrow(ConflictError);
  });

  describe('before an attempt (decideDispatch)', () => {
    const due = new Date('2026-11-22T10:00:00.000Z');
    const dispatch = (state: DeliveryState, target: Partial<DeliveryTarget> | null, now = due) =>
      decideDispatch(state, 'D', target && { ...sendable, ...target }, now);

    it('sends a pending, due delivery to an enabled endpoint of an account whose switch is on', () => {
      expect(dispatch(pending, {})).toEqual({ kind: 'send', target: sendable });
    });

    it('cancels it when the endpoint was disabled or deleted, or the switch turned off, since it was scheduled', () => {
      const cancel = (reason: string) => ({ kind: 'cancel', command: { kind: 'cancel', deliveryId: 'D', reason } });
      expect(dispatch(pending, { endpoint: 'disabled' })).toEqual(cancel('endpoint disabled or deleted'));
      expect(dispatch(pending, { endpoint: 'deleted' })).toEqual(cancel('endpoint disabled or deleted'));
      expect(dispatch(pending, null)).toEqual(cancel('endpoint disabled or deleted'));
      expect(dispatch(pending, { notificationsEnabled: false })).toEqual(cancel('webhook notifications switched off'));
    });

    it('skips what the read model showed too early: not yet due, no longer pending, or not there', () => {
      expect(dispatch(pending, {}, new Date(due.getTime() - 1))).toEqual({ kind: 'skip' });
      const delivered = fold(pending, record(pending, attempt({ statusCode: 200, verdict: 'delivered' })));
      expect(dispatch(delivered, {})).toEqual({ kind: 'skip' });
      expect(dispatch(delivered, { endpoint: 'disabled' })).toEqual({ kind: 'skip' });
      expect(dispatch(initialDelivery, {})).toEqual({ kind: 'skip' });
    });

    it("skips a delivery another instance has claimed until the claim's lease runs out", () => {
      const claimed = fold(pending, claim(pending, 'other', due));
      expect(dispatch(claimed, {}, new Date(due.getTime() + LEASE_MS - 1))).toEqual({ kind: 'skip' });
      expect(dispatch(claimed, { endpoint: 'disabled' }, new Date(due.getTime() + LEASE_MS - 1))).toEqual({
        kind: 'skip',
      });
      expect(dispatch(claimed, {}, new Date(due.getTime() + LEASE_MS))).toEqual({ kind: 'send', target: sendable });
    });
  });

  describe('claiming the next attempt (several instances)', () => {
    const now = new Date('2026-11-22T10:00:00.000Z');

    it('names the attempt, the instance and the end of the lease', () => {
      expect(claim(pending, 'i-1', now)).toEqual([
        {
          type: 'webhooks.DeliveryClaimed',
          data: { delivery_id: 'D', attempt: 1, instance: 'i-1', lease_until: '2026-11-22T10:00:15.000Z' },
        },
      ]);
      const retried = fold(pending, record(pending, attempt({})));
      expect(claim(retried, 'i-1', now)[0].data).toEqual(expect.objectContaining({ attempt: 2 }));
    });

    it('is refused while a lease holds, and allowed again once it ran out (its claimer died mid-attempt)', () => {
      const claimed = fold(pending, claim(pending, 'i-1', now));
      expect(claim(claimed, 'i-2', new Date(now.getTime() + LEASE_MS - 1))).toEqual([]);
      const later = new Date(now.getTime() + LEASE_MS);
      expect(claim(claimed, 'i-2', later)).toEqual([
        expect.objectContaining({ data: expect.objectContaining({ instance: 'i-2', attempt: 1 }) }),
      ]);
    });

    it('ends with the attempt it claimed: the next one can be claimed at once', () => {
      const claimed = fold(pending, claim(pending, 'i-1', now));
      const attempted = fold(claimed, record(claimed, attempt({})));
      expect(attempted.claimedUntil).toBeNull();
      expect(claim(attempted, 'i-2', now)[0].data).toEqual(expect.objectContaining({ attempt: 2 }));
    });

    it('claims only a pending delivery', () => {
      const delivered = fold(pending, record(pending, attempt({ statusCode: 200, verdict: 'delivered' })));
      const cancelled = fold(pending, decideDelivery(pending, { kind: 'cancel', deliveryId: 'D', reason: 'x' }));
      expect(claim(delivered, 'i-1', now)).toEqual([]);
      expect(claim(cancelled, 'i-1', now)).toEqual([]);
      expect(() => claim(initialDelivery, 'i-1', now)).toThrow(NotFoundError);
    });

    it('a redelivery is claimable at once, whatever lease its last round left', () => {
      const claimed = fold(pending, claim(pending, 'i-1', now));
      const cancelled = fold(claimed, decideDelivery(claimed, { kind: 'cancel', deliveryId: 'D', reason: 'x' }));
      const again = fold(
        cancelled,
        decideDelivery(cancelled, { kind: 'redeliver', deliveryId: 'D', accountId: 'A', now, target: sendable }),
      );
      expect(claim(again, 'i-2', now)).toHaveLength(1);
    });
  });
});
