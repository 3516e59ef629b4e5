import { ConflictError, NotFoundError, type RecordedEnvelope } from '@filing/platform';
import { decideEndpoint, evolveEndpoint, initialEndpoint, type EndpointCommand, type EndpointState } from './endpoint';
import type { EndpointEvent } from './endpoint.events';

const envelope = (e: EndpointEvent, account = 'A') =>
  ({ ...e, metadata: { account_id: account } }) as unknown as RecordedEnvelope<EndpointEvent>;
const run = (state: EndpointState, command: EndpointCommand) => {
  const events = decideEndpoint(state, command);
  return { events, state: events.map((e) => envelope(e)).reduce(evolveEndpoint, state) };
};
const create: EndpointCommand = {
  kind: 'create',
  accountId: 'A',
  endpointId: 'E',
  url: 'https://example.com/hook',
  description: null,
  eventTypes: [],
  rateLimitPerSecond: null,
  secretFingerprint: 'f1',
  secretSealed: 'v1.k1.sealed-1',
  accountEndpoints: 0,
  maxEndpoints: 16,
};

describe('webhook endpoint', () => {
  const created = run(initialEndpoint, create).state;

  it('is created disabled, with secret generation 1 and its secret only sealed in the event', () => {
    const { events } = run(initialEndpoint, create);
    expect(events).toEqual([
      {
        type: 'webhooks.EndpointCreated',
        data: {
          endpoint_id: 'E',
          url: 'https://example.com/hook',
          description: null,
          event_types: [],
          secret_generation: 1,
          secret_fingerprint: 'f1',
          secret_sealed: 'v1.k1.sealed-1',
          rate_limit_per_second: null,
        },
      },
    ]);
    expect(created).toEqual(expect.objectContaining({ exists: true, enabled: false, accountId: 'A' }));
    expect(() => decideEndpoint(created, create)).toThrow(ConflictError);
  });

  it('is refused with a 409 naming the limit once the account has as many endpoints as allowed', () => {
    expect(run(initialEndpoint, { ...create, accountEndpoints: 15 }).events).toHaveLength(1);
    for (const full of [
      { accountEndpoints: 16, maxEndpoints: 16 },
      { accountEndpoints: 3, maxEndpoints: 2 },
    ]) {
      const refused = () => decideEndpoint(initialEndpoint, { ...create, ...full });
      expect(refused).toThrow(ConflictError);
      expect(refused).toThrow(
        new RegExp(`most webhook endpoints allowed: ${full.maxEndpoints} \\(WEBHOOK_MAX_ENDPOINTS_PER_ACCOUNT\\)`),
      );
    }
  });

  it('enables and disables, recording nothing when already there', () => {
    const enabled = run(created, { kind: 'enable', accountId: 'A', endpointId: 'E' });
    expect(enabled.events.map((e) => e.type)).toEqual(['webhooks.EndpointEnabled']);
    expect(run(enabled.state, { kind: 'enable', accountId: 'A', endpointId: 'E' }).events).toEqual([]);
    expect(
      run(enabled.state, { kind: 'disable', accountId: 'A', endpointId: 'E', reason: 'manual' }).state.enabled,
    ).toBe(false);
    expect(run(created, { kind: 'disable', accountId: 'A', endpointId: 'E', reason: 'manual' }).events).toEqual([]);
  });

  it('says why it is disabled: manual from creation, none once enabled, the reason of the disable after', () => {
    expect(created.disabledReason).toBe('manual');
    const enabled = run(created, { kind: 'enable', accountId: 'A', endpointId: 'E' }).state;
    expect(enabled.disabledReason).toBeNull();
    const gone = run(enabled, { kind: 'disable', accountId: 'A', endpointId: 'E', reason: 'gone' });
    expect(gone.events).toEqual([{ type: 'webhooks.EndpointDisabled', data: { endpoint_id: 'E', reason: 'gone' } }]);
    expect(gone.state).toEqual(expect.objectContaining({ enabled: false, disabledReason: 'gone' }));
    // A second disable (a late 410 after a user's) records nothing: the first reason stands.
    const manual = run(enabled, { kind: 'disable', accountId: 'A', endpointId: 'E', reason: 'manual' }).state;
    expect(run(manual, { kind: 'disable', accountId: 'A', endpointId: 'E', reason: 'gone' })).toEqual({
      events: [],
      state: manual,
    });
    expect(run(gone.state, { kind: 'enable', accountId: 'A', endpointId: 'E' }).state.disabledReason).toBeNull();
  });

  it('reads a disable written before reasons existed (schema 1, no reason) as manual', () => {
    const enabled = run(created, { kind: 'enable', accountId: 'A', endpointId: 'E' }).state;
    const old = { type: 'webhooks.EndpointDisabled', data: { endpoint_id: 'E' } } as unknown as EndpointEvent;
    expect(evolveEndpoint(enabled, envelope(old))).toEqual(
      expect.objectContaining({ enabled: false, disabledReason: 'manual' }),
    );
  });

  it('updates only what changed', () => {
    const { events } = run(created, {
      kind: 'update',
      accountId: 'A',
      endpointId: 'E',
      url: 'https://example.com/hook',
      description: 'd',
      eventTypes: ['entity.created'],
    });
    expect(events).toEqual([
      {
        type: 'webhooks.EndpointUpdated',
        data: { endpoint_id: 'E', description: 'd', event_types: ['entity.created'] },
      },
    ]);
    expect(
      run(created, { kind: 'update', accountId: 'A', endpointId: 'E', url: 'https://example.com/hook' }).events,
    ).toEqual([]);
  });

  it('sets, changes and clears the rate limit, recording only a change', () => {
    const limited = run(created, { kind: 'update', accountId: 'A', endpointId: 'E', rateLimitPerSecond: 5 });
    expect(limited.events).toEqual([
      { type: 'webhooks.EndpointUpdated', data: { endpoint_id: 'E', rate_limit_per_second: 5 } },
    ]);
    expect(limited.state.rateLimitPerSecond).toBe(5);
    expect(
      run(limited.state, { kind: 'update', accountId: 'A', endpointId: 'E', rateLimitPerSecond: 5 }).events,
    ).toEqual([]);
    // Absent leaves it; null clears it.
    expect(
      run(limited.state, { kind: 'update', accountId: 'A', endpointId: 'E', description: 'x' }).state
        .rateLimitPerSecond,
    ).toBe(5);
    const cleared = run(limited.state, { kind: 'update', accountId: 'A', endpointId: 'E', rateLimitPerSecond: null });
    expect(cleared.events).toEqual([
      { type: 'webhooks.EndpointUpdated', data: { endpoint_id: 'E', rate_limit_per_second: null } },
    ]);
    expect(cleared.state.rateLimitPerSecond).toBeNull();
    expect(run(initialEndpoint, { ...create, rateLimitPerSecond: 1000 }).state.rateLimitPerSecond).toBe(1000);
  });

  describe('auto-disable (failing)', () => {
    const at = (iso: string) => (e: EndpointEvent) =>
      ({ ...envelope(e), metadata: { account_id: 'A', occurred_at: iso } }) as RecordedEnvelope<EndpointEvent>;
    const enabledAt = (iso: string) =>
      decideEndpoint(created, { kind: 'enable', accountId: 'A', endpointId: 'E' })
        .map(at(iso))
        .reduce(evolveEndpoint, created);
    const failing = (since: string) =>
      ({
        kind: 'disable',
        accountId: 'A',
        endpointId: 'E',
        reason: 'failing',
        failing: { since, lastFailureAt: '2026-11-27T10:00:00.000Z' },
      }) as const;

    it('records the attempts it was judged on', () => {
      const state = enabledAt('2026-11-01T00:00:00.000Z');
      expect(decideEndpoint(state, failing('2026-11-22T10:00:00.000Z'))).toEqual([
        {
          type: 'webhooks.EndpointDisabled',
          data: {
            endpoint_id: 'E',
            reason: 'failing',
            failing_since: '2026-11-22T10:00:00.000Z',
            last_failure_at: '2026-11-27T10:00:00.000Z',
          },
        },
      ]);
    });

    it('does nothing when the endpoint was enabled again after the failing began: enabling starts the count again', () => {
      expect(decideEndpoint(enabledAt('2026-11-23T00:00:00.000Z'), failing('2026-11-22T10:00:00.000Z'))).toEqual([]);
      expect(decideEndpoint(enabledAt('2026-11-22T10:00:00.000Z'), failing('2026-11-22T10:00:00.000Z'))).toEqual([]);
    });
  });

  it('rotates the secret: the previous one keeps signing for 24 h', () => {
    const now = new Date('2026-11-22T10:00:00.000Z');
    const { events, state } = run(created, {
      kind: 'rotate-secret',
      accountId: 'A',
      endpointId: 'E',
      secretFingerprint: 'f2',
      secretSealed: 'v1.k1.sealed-2',
      now,
    });
    expect(events[0].data).toEqual({
      endpoint_id: 'E',
      secret_generation: 2,
      secret_fingerprint: 'f2',
      secret_sealed: 'v1.k1.sealed-2',
      previous_generation: 1,
      previous_fingerprint: 'f1',
      previous_expires_at: '2026-11-23T10:00:00.000Z',
    });
    expect(state.secretGeneration).toBe(2);
    expect(state.secretFingerprint).toBe('f2');
    expect(state.sealedSecrets).toEqual({ f2: 'v1.k1.sealed-2', f1: 'v1.k1.sealed-1' });
    const again = run(state, {
      kind: 'rotate-secret',
      accountId: 'A',
      endpointId: 'E',
      secretFingerprint: 'f3',
      secretSealed: 'v1.k1.sealed-3',
      now,
    }).state;
    expect(again.sealedSecrets).toEqual({ f3: 'v1.k1.sealed-3', f2: 'v1.k1.sealed-2' });
  });

  describe('sealing a secret anew (import from webhook-secrets.db, re-seal under a new key)', () => {
    const seal = (state: EndpointState, fingerprint: string, sealed: string, replaces: string | null) =>
      run(state, { kind: 'seal-secret', endpointId: 'E', fingerprint, sealed, replaces });
    // Written by an older version: no sealed secret in the event.
    const legacy = evolveEndpoint(
      initialEndpoint,
      envelope({
        type: 'webhooks.EndpointCreated',
        data: {
          endpoint_id: 'E',
          url: 'https://example.com/hook',
          description: null,
          event_types: [],
          secret_generation: 1,
          secret_fingerprint: 'f1',
        },
      }),
    );

    it('imports the secret an older version kept in its file, once', () => {
      expect(legacy.sealedSecrets).toEqual({});
      const imported = seal(legacy, 'f1', 'v1.k1.imported', null);
      expect(imported.events).toEqual([
        {
          type: 'webhooks.EndpointSecretSealed',
          data: { endpoint_id: 'E', secret_fingerprint: 'f1', secret_sealed: 'v1.k1.imported' },
        },
      ]);
      expect(imported.state.sealedSecrets).toEqual({ f1: 'v1.k1.imported' });
      // A second instance (or start) importing it too writes nothing.
      expect(seal(imported.state, 'f1', 'v1.k1.other', null).events).toEqual([]);
    });

    it('re-seals only what it read: of two instances re-sealing at once, the second writes nothing', () => {
      const first = seal(created, 'f1', 'v1.k2.resealed', 'v1.k1.sealed-1');
      expect(first.state.sealedSecrets).toEqual({ f1: 'v1.k2.resealed' });
      expect(seal(first.state, 'f1', 'v1.k2.again', 'v1.k1.sealed-1').events).toEqual([]);
    });

    it('seals only the current or previous secret of an endpoint that is still there', () => {
      expect(seal(created, 'f0', 'v1.k1.x', null).events).toEqual([]);
      const deleted = run(created, { kind: 'delete', accountId: 'A', endpointId: 'E' }).state;
      expect(seal(deleted, 'f1', 'v1.k2.x', 'v1.k1.sealed-1').events).toEqual([]);
      expect(() => seal(initialEndpoint, 'f1', 'v1.k1.x', null)).toThrow(NotFoundError);
      const rotated = run(created, {
        kind: 'rotate-secret',
        accountId: 'A',
        endpointId: 'E',
        secretFingerprint: 'f2',
        secretSealed: 'v1.k1.sealed-2',
        now: new Date(),
      }).state;
      expect(seal(rotated, 'f1', 'v1.k2.prev', 'v1.k1.sealed-1').events).toHaveLength(1);
    });
  });

  it('answers another account, a missing and a deleted endpoint alike: not found', () => {
    expect(() => decideEndpoint(created, { kind: 'enable', accountId: 'B', endpointId: 'E' })).toThrow(NotFoundError);
    expect(() => decideEndpoint(initialEndpoint, { kind: 'enable', accountId: 'A', endpointId: 'E' })).toThrow(
      NotFoundError,
    );
    const deleted = run(created, { kind: 'delete', accountId: 'A', endpointId: 'E' }).state;
    expect(() => decideEndpoint(deleted, { kind: 'enable', accountId: 'A', endpointId: 'E' })).toThrow(NotFoundError);
  });
});
