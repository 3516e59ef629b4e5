import { EndpointStates, nextDelay } from './endpoint-states';

describe('nextDelay: when the dispatcher wakes next', () => {
  const NOW = 1_000_000;
  const TICK = 1_000;
  it.each([
    ['nothing waits', null, null, null],
    ['a retry due in 200 ms', NOW + 200, null, 201],
    ['an endpoint opening in 50 ms, a retry later', NOW + 500, NOW + 50, 51],
    ['the earlier of the two, whichever it is', NOW + 30, NOW + 700, 31],
    ['a time already passed: at once', NOW - 5_000, null, 1],
    ['exactly a tick away', NOW + TICK, null, TICK + 1],
    ['beyond the tick: left to the tick', NOW + TICK + 1, NOW + 5 * TICK, null],
  ] as const)('%s', (_, retry, opening, expected) => {
    expect(nextDelay(NOW, retry, opening, TICK)).toBe(expected);
  });
});

describe('EndpointStates', () => {
  const at = (n: number) => ({ commit: BigInt(n), prepare: BigInt(n) });

  it('holds an endpoint in flight and settling until the read model reaches its attempts, then forgets it', () => {
    const states = new EndpointStates();
    const e = states.of('E');
    e.launched = 2;
    e.inFlight.add('d1');
    e.settling.set('d2', at(5));
    expect([states.launched('E'), states.held('E'), states.holds('E', 'd1'), states.holds('E', 'd2')]).toEqual([
      2,
      2,
      true,
      true,
    ]);
    expect(states.holds('F', 'd1')).toBe(false);
    expect(states.sendingAtLimit(2)).toBe(1);
    expect(states.sendingAtLimit(3)).toBe(0);

    states.pruneSettled(at(4));
    expect(states.holds('E', 'd2')).toBe(true);
    states.pruneSettled(at(5));
    expect(states.holds('E', 'd2')).toBe(false);

    e.launched = 0;
    e.inFlight.delete('d1');
    states.dropIfIdle('E');
    expect(states.of('E')).not.toBe(e);
  });
});
