import type { ProjectionRunner } from '@filing/platform';
import Database from 'better-sqlite3';
import { endpointDetails } from '../endpoints/endpoint-views';
import type { EndpointEvent, NotificationsSwitched } from '../endpoints/endpoint.events';
import { DeliveryQueue } from './delivery-queue.queries';
import { DeliveryTargets } from './delivery-target.queries';
import { EndpointsProjection } from './endpoints.projection';
import { EndpointsQueries } from './endpoints.queries';

const T0 = Date.parse('2026-11-22T10:00:00.000Z');
const iso = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();

describe('endpoints read model: endpoints, the account switch, delivery targets', () => {
  let db: Database.Database;
  let revision = 0;
  const projection = new EndpointsProjection();
  const runner = () => ({ db }) as unknown as ProjectionRunner;
  const apply = (event: EndpointEvent | NotificationsSwitched, minutes: number, schemaVersion = 1) =>
    projection.apply(db, {
      ...event,
      id: `ev-${revision}`,
      streamId: 's',
      revision: BigInt(revision),
      position: { commit: BigInt(revision), prepare: BigInt(revision++) },
      metadata: {
        account_id: 'A',
        actor: 'client:c',
        correlation_id: 'x',
        causation_id: null,
        occurred_at: iso(minutes),
        schema_version: schemaVersion,
      },
    });

  beforeEach(() => {
    db = new Database(':memory:');
    revision = 0;
    projection.setup(db);
    apply(
      {
        type: 'webhooks.EndpointCreated',
        data: {
          endpoint_id: 'E',
          url: 'https://example.com/hook',
          description: null,
          event_types: [],
          secret_generation: 1,
          secret_fingerprint: 'f1',
          secret_sealed: 's1',
        },
      },
      0,
    );
  });

  const details = () => endpointDetails(new EndpointsQueries(runner()).endpoint('A', 'E')!);

  it('says why and since when an endpoint is disabled; enabling clears both', () => {
    expect(details()).toMatchObject({ enabled: false, disabled_reason: 'manual', disabled_at: iso(0) });
    apply({ type: 'webhooks.EndpointEnabled', data: { endpoint_id: 'E' } }, 1);
    expect(details()).toMatchObject({ enabled: true, disabled_reason: null, disabled_at: null });
    apply({ type: 'webhooks.EndpointDisabled', data: { endpoint_id: 'E', reason: 'gone' } }, 2, 2);
    expect(details()).toMatchObject({ enabled: false, disabled_reason: 'gone', disabled_at: iso(2) });
  });

  it('keeps the rate limit (absent on events before throttling existed: none) and when the endpoint was last enabled', () => {
    expect(details()).toMatchObject({ rate_limit_per_second: null });
    apply({ type: 'webhooks.EndpointUpdated', data: { endpoint_id: 'E', rate_limit_per_second: 5 } }, 1);
    apply({ type: 'webhooks.EndpointUpdated', data: { endpoint_id: 'E', description: 'd' } }, 2);
    expect(details()).toMatchObject({ rate_limit_per_second: 5, description: 'd' });
    apply({ type: 'webhooks.EndpointUpdated', data: { endpoint_id: 'E', rate_limit_per_second: null } }, 3);
    expect(details()).toMatchObject({ rate_limit_per_second: null });
    apply({ type: 'webhooks.EndpointEnabled', data: { endpoint_id: 'E' } }, 4);
    apply({ type: 'webhooks.EndpointDisabled', data: { endpoint_id: 'E', reason: 'manual' } }, 5, 2);
    apply({ type: 'webhooks.EndpointEnabled', data: { endpoint_id: 'E' } }, 6);
    expect(new EndpointsQueries(runner()).endpoint('A', 'E')).toMatchObject({ enabled_at: iso(6) });
  });

  it('replays a disable written before reasons existed (schema 1, no reason) as manual', () => {
    apply({ type: 'webhooks.EndpointEnabled', data: { endpoint_id: 'E' } }, 1);
    apply({ type: 'webhooks.EndpointDisabled', data: { endpoint_id: 'E' } } as unknown as EndpointEvent, 3);
    expect(details()).toMatchObject({ enabled: false, disabled_reason: 'manual', disabled_at: iso(3) });
  });

  it('reads a delivery target in one query: endpoint state, the switch, the signing secrets in use (sealed)', () => {
    const targets = new DeliveryTargets(runner());
    expect(targets.of('A', 'E', new Date(iso(0)))).toEqual({
      endpointId: 'E',
      accountId: 'A',
      url: 'https://example.com/hook',
      endpoint: 'disabled',
      notificationsEnabled: false,
      signingSecrets: ['s1'],
    });
    apply({ type: 'webhooks.EndpointEnabled', data: { endpoint_id: 'E' } }, 1);
    apply({ type: 'webhooks.NotificationsSwitched', data: { account_id: 'A', enabled: true } }, 1);
    apply(
      {
        type: 'webhooks.EndpointSecretRotated',
        data: {
          endpoint_id: 'E',
          secret_generation: 2,
          secret_fingerprint: 'f2',
          secret_sealed: 's2',
          previous_generation: 1,
          previous_fingerprint: 'f1',
          previous_expires_at: iso(60),
        },
      },
      2,
    );
    expect(targets.of('A', 'E', new Date(iso(59)))).toMatchObject({
      endpoint: 'enabled',
      notificationsEnabled: true,
      signingSecrets: ['s2', 's1'],
    });
    expect(targets.of('A', 'E', new Date(iso(60)))?.signingSecrets).toEqual(['s2']);
    apply({ type: 'webhooks.EndpointDeleted', data: { endpoint_id: 'E' } }, 3);
    expect(targets.of('A', 'E')?.endpoint).toBe('deleted');
    expect(targets.of('B', 'E')).toBeNull();
  });

  it('takes a secret sealed into the stream later (imported, or re-sealed under a new key) for the fingerprint it names', () => {
    const targets = new DeliveryTargets(runner());
    const legacy = {
      endpoint_id: 'L',
      url: 'https://example.com/l',
      description: null,
      event_types: [],
      secret_generation: 1,
      secret_fingerprint: 'g1',
    };
    apply({ type: 'webhooks.EndpointCreated', data: legacy }, 0);
    expect(targets.of('A', 'L', new Date(iso(0)))?.signingSecrets).toEqual([]);
    apply(
      {
        type: 'webhooks.EndpointSecretSealed',
        data: { endpoint_id: 'L', secret_fingerprint: 'g1', secret_sealed: 'imported' },
      },
      1,
    );
    expect(targets.of('A', 'L', new Date(iso(1)))?.signingSecrets).toEqual(['imported']);
    apply(
      {
        type: 'webhooks.EndpointSecretRotated',
        data: {
          endpoint_id: 'L',
          secret_generation: 2,
          secret_fingerprint: 'g2',
          secret_sealed: 's2',
          previous_generation: 1,
          previous_fingerprint: 'g1',
          previous_expires_at: iso(60),
        },
      },
      2,
    );
    apply(
      {
        type: 'webhooks.EndpointSecretSealed',
        data: { endpoint_id: 'L', secret_fingerprint: 'g1', secret_sealed: 'resealed' },
      },
      3,
    );
    expect(targets.of('A', 'L', new Date(iso(3)))?.signingSecrets).toEqual(['s2', 'resealed']);
  });
  it('reads each target once until the endpoints projection applies an event, then afresh', () => {
    const targets = new DeliveryTargets(runner());
    const at = new Date(iso(1));
    expect(targets.of('A', 'E', at)).toMatchObject({ url: 'https://example.com/hook', endpoint: 'disabled' });
    expect(targets.of('A', 'nope', at)).toBeNull();
    // Written behind the projection's back: not seen, the row read first is kept.
    db.prepare("UPDATE webhook_endpoints SET url = 'https://elsewhere.example/hook' WHERE id = 'E'").run();
    expect(targets.of('A', 'E', at)?.url).toBe('https://example.com/hook');
    apply({ type: 'webhooks.EndpointEnabled', data: { endpoint_id: 'E' } }, 1);
    expect(targets.of('A', 'E', at)).toMatchObject({ url: 'https://elsewhere.example/hook', endpoint: 'enabled' });
    // The account switch is the same projection's: off counts from the next read.
    apply({ type: 'webhooks.NotificationsSwitched', data: { account_id: 'A', enabled: true } }, 2);
    expect(targets.of('A', 'E', at)?.notificationsEnabled).toBe(true);
    apply({ type: 'webhooks.NotificationsSwitched', data: { account_id: 'A', enabled: false } }, 3);
    expect(targets.of('A', 'E', at)?.notificationsEnabled).toBe(false);
  });

  it("keeps the endpoints' rate limits until the endpoints projection applies an event", () => {
    const queue = new DeliveryQueue(runner());
    expect(queue.rateLimits()).toEqual(new Map());
    apply({ type: 'webhooks.EndpointUpdated', data: { endpoint_id: 'E', rate_limit_per_second: 5 } }, 1);
    expect(queue.rateLimits()).toEqual(new Map([['E', 5]]));
    db.prepare("UPDATE webhook_endpoints SET rate_limit_per_second = 9 WHERE id = 'E'").run();
    expect(queue.rateLimits()).toEqual(new Map([['E', 5]]));
    apply({ type: 'webhooks.EndpointUpdated', data: { endpoint_id: 'E', rate_limit_per_second: null } }, 2);
    expect(queue.rateLimits()).toEqual(new Map());
  });
});
