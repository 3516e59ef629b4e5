import type { RecordedEvent } from '@filing/event-store';
import type { ResourceFacts } from '../notifications/notification-mapper';
import { deliveryId } from './delivery-id';
import { fanOutStep } from './fanout-step';
import { MemoryFanOutView } from './fanout-view';

const AT = new Date('2026-11-22T10:00:00.000Z');
let pos = 0n;
function ev(type: string, data: RecordedEvent['data'], account = 'A', streamId = 'entity-X'): RecordedEvent {
  pos++;
  return {
    id: `0193a000-0000-7000-8000-${String(pos).padStart(12, '0')}`,
    type,
    streamId,
    revision: 0n,
    position: { commit: pos, prepare: pos },
    data,
    metadata: { account_id: account, occurred_at: AT.toISOString() },
    created: new Date(),
  };
}

/** Runs events through a fresh view, as the fan-out does; returns the delivery ids scheduled. */
function replay(events: RecordedEvent[]): string[] {
  const view = new MemoryFanOutView();
  const facts = new Map<string, ResourceFacts>();
  const ids: string[] = [];
  for (const e of events) {
    const step = fanOutStep(view, (s) => facts.get(s), e);
    if (step.facts) facts.set(step.facts[0], step.facts[1]);
    ids.push(...step.scheduled.map((s) => s.data.delivery_id));
  }
  return ids;
}

const entity = (account = 'A') => ev('entities.EntityCreated', { entity_id: 'X', status: 'active' }, account);

describe('fan-out step', () => {
  const created = (id: string, types: string[] = []) =>
    ev('webhooks.EndpointCreated', { endpoint_id: id, event_types: types });
  const enabled = (id: string) => ev('webhooks.EndpointEnabled', { endpoint_id: id });
  const disabled = (id: string) => ev('webhooks.EndpointDisabled', { endpoint_id: id });
  const switched = (on: boolean, account = 'A') =>
    ev('webhooks.NotificationsSwitched', { account_id: account, enabled: on });

  it('schedules only while the switch is on and the endpoint enabled, decided at the event', () => {
    const e1 = entity(); // before anything: nothing
    const setup = [created('E1'), enabled('E1')];
    const e2 = entity(); // switch still off
    const on = switched(true);
    const e3 = entity(); // delivered
    const off = disabled('E1');
    const e4 = entity(); // endpoint disabled
    const ids = replay([e1, ...setup, e2, on, e3, off, e4]);
    expect(ids).toEqual([deliveryId(e3.id, 'E1', AT)]);
  });

  it('follows the event-type selection and the account', () => {
    const events = [created('E1', ['order.submitted']), enabled('E1'), created('E2'), enabled('E2'), switched(true)];
    const mine = entity();
    const theirs = entity('B');
    expect(replay([...events, mine, theirs])).toEqual([deliveryId(mine.id, 'E2', AT)]);
  });

  it('a replay from scratch schedules exactly the same deliveries', () => {
    const events = [
      created('E1'),
      enabled('E1'),
      created('E2'),
      enabled('E2'),
      switched(true),
      entity(),
      entity(),
      disabled('E2'),
      entity(),
    ];
    const first = replay(events);
    expect(first).toHaveLength(5);
    expect(replay(events)).toEqual(first);
  });

  it('asks to cancel what is pending when an endpoint is disabled or the switch goes off', () => {
    const view = new MemoryFanOutView();
    fanOutStep(view, () => undefined, created('E1'));
    expect(fanOutStep(view, () => undefined, disabled('E1')).cancel).toEqual({ endpointId: 'E1' });
    expect(fanOutStep(view, () => undefined, switched(false)).cancel).toEqual({ accountId: 'A' });
    expect(fanOutStep(view, () => undefined, switched(true)).cancel).toBeNull();
  });

  it('sends a disable by the service as webhook_endpoint.disabled to the other enabled endpoints that named it, and to no other', () => {
    const byService = (id: string, reason: string) =>
      ev('webhooks.EndpointDisabled', { endpoint_id: id, reason }, 'A', `webhookendpoint-${id}`);
    const setup = [
      ...[
        created('FAILING'),
        created('WATCHER', ['webhook_endpoint.disabled']),
        created('ALL'),
        created('ORDERS', ['order.submitted']),
      ],
      ...[
        created('OFF', ['webhook_endpoint.disabled', 'entity.created']),
        created('OTHER', ['webhook_endpoint.disabled']),
      ],
      ...['FAILING', 'WATCHER', 'ALL', 'ORDERS', 'OTHER'].map(enabled),
      switched(true),
    ];
    setup[5] = ev(
      'webhooks.EndpointCreated',
      { endpoint_id: 'OTHER', event_types: ['webhook_endpoint.disabled'] },
      'B',
    );
    const failing = byService('FAILING', 'failing');
    const manual = byService('ORDERS', 'manual');
    const gone = byService('ALL', 'gone');
    const view = new MemoryFanOutView();
    const steps = [...setup, failing, manual, gone].map((e) => fanOutStep(view, () => undefined, e));
    const scheduled = steps.flatMap((s) =>
      s.scheduled.map((d) => [d.data.event_id, d.data.endpoint_id, d.data.payload]),
    );
    expect(scheduled).toEqual([
      [
        failing.id,
        'WATCHER',
        {
          event_id: failing.id,
          event_type: 'webhook_endpoint.disabled',
          timestamp: AT.toISOString(),
          endpoint_id: 'FAILING',
          reason: 'failing',
          status: 'disabled',
          resource_version: 0,
        },
      ],
      [
        gone.id,
        'WATCHER',
        {
          event_id: gone.id,
          event_type: 'webhook_endpoint.disabled',
          timestamp: AT.toISOString(),
          endpoint_id: 'ALL',
          reason: 'gone',
          status: 'disabled',
          resource_version: 0,
        },
      ],
    ]);
    // The disabled endpoint's own pending deliveries are still cancelled.
    expect(steps[steps.length - 1].cancel).toEqual({ endpointId: 'ALL' });
  });

  it('makes one stable delivery id per (event, endpoint): a UUID v7 carrying the event time', () => {
    const id = deliveryId('a', 'b', AT);
    expect(id).toBe(deliveryId('A', 'B', AT));
    expect(id).not.toBe(deliveryId('a', 'c', AT));
    expect(id).not.toBe(deliveryId('b', 'b', AT));
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(AT.getTime());
    // Later events' deliveries sort after earlier ones', like every other id.
    expect(deliveryId('z', 'b', AT) < deliveryId('a', 'b', new Date(AT.getTime() + 1))).toBe(true);
  });

  it('makes the same delivery ids as every earlier release: a replay schedules nothing twice', () => {
    // Ids the first implementation made (Buffer-built); a different id would be a second delivery.
    expect(deliveryId('0193a0b0-1234-7abc-8def-0123456789ab', '0193A0B0-5678-7ABC-9DEF-FEDCBA987654', AT)).toBe(
      '01a202b2-c500-72d0-8b77-9eaf8f77f548',
    );
    expect(deliveryId('a', 'b', new Date(0))).toBe('00000000-0000-7171-96d5-6db07c39899a');
    expect(deliveryId('x', 'y', new Date(2 ** 48 - 1))).toBe('ffffffff-ffff-7ccc-ad6d-58227917f7d1');
    // 48 bits of milliseconds: a later time has no id.
    expect(() => deliveryId('x', 'y', new Date(2 ** 48))).toThrow(RangeError);
  });
});
