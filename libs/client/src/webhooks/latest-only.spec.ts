import type { WebhookEvent } from './events';
import { createWebhookHandler } from './handler';
import { MemoryDedupeStore } from './dedupe';
import { latestOnly, MemoryVersionStore, resourceOf } from './latest-only';

const order = (status: 'submitted' | 'completed', version: number, id = 'o1'): WebhookEvent =>
  ({
    event_id: `${id}-${version}`,
    event_type: `order.${status}`,
    timestamp: '2026-11-22T10:00:00.000Z',
    order_id: id,
    entity_id: 'e1',
    status,
    resource_version: version,
  }) as WebhookEvent;

describe('latestOnly', () => {
  it('hands over a newer version of a resource and drops an older one that arrives late', async () => {
    const seen: string[] = [];
    const stale: number[] = [];
    const handle = latestOnly((e) => void seen.push(e.event_id), { onStale: (_e, latest) => void stale.push(latest) });
    for (const event of [
      order('completed', 2),
      order('submitted', 0),
      order('completed', 2),
      order('submitted', 0, 'o2'),
    ])
      await handle(event);
    expect(seen).toEqual(['o1-2', 'o2-0']);
    expect(stale).toEqual([2, 2]);
  });

  it('records nothing when the handler throws, so a retry is handled again', async () => {
    const store = new MemoryVersionStore();
    let fail = true;
    const handle = latestOnly(
      () => {
        if (fail) throw new Error('database down');
      },
      { store },
    );
    await expect(handle(order('submitted', 1))).rejects.toThrow('database down');
    expect(store.get('order:o1')).toBeUndefined();
    fail = false;
    await handle(order('submitted', 1));
    expect(store.get('order:o1')).toBe(1);
  });

  it("fits createWebhookHandler's onEvent", () => {
    expect(
      typeof createWebhookHandler({
        secrets: ['whsec_AAAA'],
        store: new MemoryDedupeStore(),
        onEvent: latestOnly(() => {}),
      }),
    ).toBe('function');
  });

  it('keys operational notifications by the endpoint or delivery they are about', () => {
    const base = { event_id: 'x', timestamp: '2026-11-22T10:00:00.000Z', resource_version: 3 };
    expect(
      resourceOf({ ...base, event_type: 'webhook_endpoint.failing', endpoint_id: 'w1', failing_since: base.timestamp }),
    ).toBe('webhook_endpoint:w1');
    expect(
      resourceOf({
        ...base,
        event_type: 'webhook_delivery.failed',
        delivery_id: 'd1',
        endpoint_id: 'w1',
        failed_event_id: 'e',
        failed_event_type: 'order.submitted',
      }),
    ).toBe('webhook_delivery:d1');
  });
});
