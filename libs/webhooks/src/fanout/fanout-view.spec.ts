import { MemoryFanOutView } from './fanout-view';

describe('fan-out view: deliveries', () => {
  const view = () => {
    const v = new MemoryFanOutView();
    for (const [id, accountId] of [
      ['E1', 'A'],
      ['E2', 'A'],
      ['E3', 'B'],
    ])
      v.putEndpoint({ id, accountId, enabled: true, deleted: false, eventTypes: [] });
    return v;
  };

  it('holds only what is open: closing forgets a delivery, so it is bounded by the pending ones', () => {
    const v = view();
    const owner = v.owner('E1', 'A');
    for (let i = 0; i < 1000; i++) v.openDelivery(`d${i}`, owner);
    for (let i = 0; i < 990; i++) expect(v.closeDelivery(`d${i}`)).toBe(owner);
    expect(v.openCount).toBe(10);
    expect(v.openOwner('d5')).toBeUndefined();
    expect(v.closeDelivery('d5')).toBeUndefined();
    expect(v.openDeliveries({ endpointId: 'E1' })).toEqual(Array.from({ length: 10 }, (_, i) => `d${990 + i}`));
  });

  it('shares one owner record per endpoint instead of copying its ids per delivery', () => {
    const v = view();
    expect(v.owner('E1', 'A')).toBe(v.owner('E1', 'A'));
    expect(v.owner('E1', 'A')).not.toBe(v.owner('E2', 'A'));
  });

  it("answers an account's open deliveries endpoint by endpoint, each in the order they opened", () => {
    const v = view();
    v.openDelivery('a', v.owner('E2', 'A'));
    v.openDelivery('b', v.owner('E1', 'A'));
    v.openDelivery('c', v.owner('E3', 'B'));
    v.openDelivery('d', v.owner('E2', 'A'));
    v.openDelivery('e', v.owner('E1', 'A'));
    v.closeDelivery('b');
    v.openDelivery('b', v.owner('E1', 'A')); // a redelivery: open again, now the latest
    expect(v.openDeliveries({ accountId: 'A' })).toEqual(['e', 'b', 'a', 'd']);
    expect(v.openDeliveries({ accountId: 'B' })).toEqual(['c']);
    expect(v.openDeliveries({ accountId: 'nobody' })).toEqual([]);
  });
});
