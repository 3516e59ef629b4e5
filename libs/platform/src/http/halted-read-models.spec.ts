import type { HttpAdapterHost } from '@nestjs/core';
import type { HaltReport } from '../processors/processor-types';
import type { Projection } from '../projections/projection';
import type { ProjectionRunner } from '../projections/projection-runner';
import { HaltedReadModelHooks, haltedReadModelProblem } from './halted-read-models';

const report = (eventId: string): HaltReport => ({
  eventId,
  eventType: 'orders.OrderSubmitted',
  streamId: 'order-1',
  position: '7/7',
  error: 'bad',
});

function hooksWith(projections: Array<Pick<Projection, 'name' | 'serves'>>, halted: Record<string, HaltReport>) {
  const runner = {
    registered: projections,
    haltedProjections: () => Object.entries(halted).map(([projection, r]) => ({ projection, ...r })),
  } as unknown as ProjectionRunner;
  return new HaltedReadModelHooks(runner, {} as HttpAdapterHost);
}

describe('which requests need a halted read model', () => {
  const projections = [
    { name: 'orders' },
    { name: 'entities' },
    { name: 'auth.tokens', serves: 'authentication' as const },
    { name: 'webhooks.notifications', serves: ['/external-api/v1/events'] },
  ];

  it('a read model serves the collection named like it in both APIs, and nothing else', () => {
    const hooks = hooksWith(projections, { orders: report('e1') });
    for (const path of [
      '/external-api/v1/orders',
      '/external-api/v1/orders/0193?x=1',
      '/internal-api/v1/orders/1/complete',
    ]) {
      expect(hooks.haltedFor(path).map((h) => h.projection)).toEqual(['orders']);
    }
    for (const path of ['/external-api/v1/entities', '/external-api/v1/ordersx', '/healthz', '/o/token/']) {
      expect(hooks.haltedFor(path)).toEqual([]);
    }
  });

  it('a declared read model serves the paths it names', () => {
    const hooks = hooksWith(projections, { 'webhooks.notifications': report('e2') });
    expect(hooks.haltedFor('/external-api/v1/events?after_event_id=x')).toHaveLength(1);
    expect(hooks.haltedFor('/external-api/v1/webhook-endpoints')).toEqual([]);
  });

  it("authentication's read models fail closed on every request but the public probes and documents", () => {
    const hooks = hooksWith(projections, { 'auth.tokens': report('e3') });
    for (const path of ['/external-api/v1/entities', '/o/token/', '/internal-api/v1/accounts', '/settings/sign-in']) {
      expect(hooks.haltedFor(path).map((h) => h.projection)).toEqual(['auth.tokens']);
    }
    for (const path of [
      '/healthz',
      '/readyz',
      '/metrics',
      '/docs',
      '/external-api/v1/openapi.json',
      '/.well-known/oauth-authorization-server',
    ]) {
      expect(hooks.haltedFor(path)).toEqual([]);
    }
  });

  it('the 503 names the read model and the event, and lists every halted one the request needs', () => {
    const problem = haltedReadModelProblem([
      { projection: 'orders', ...report('e1') },
      { projection: 'auth.tokens', ...report('e3') },
    ]);
    expect(problem).toMatchObject({
      type: 'about:blank',
      status: 503,
      read_model: 'orders',
      event_id: 'e1',
      event_type: 'orders.OrderSubmitted',
      halted: [
        { read_model: 'orders', event_id: 'e1', event_type: 'orders.OrderSubmitted' },
        { read_model: 'auth.tokens', event_id: 'e3', event_type: 'orders.OrderSubmitted' },
      ],
    });
    expect(JSON.stringify(problem)).not.toContain('bad'); // the handler's error stays in the operator's view
  });
});
