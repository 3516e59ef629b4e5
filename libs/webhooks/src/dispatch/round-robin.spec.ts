import { byAccount, roundRobin } from './round-robin';

describe('roundRobin', () => {
  it('gives every queue a turn before any gets a second', () => {
    expect(roundRobin([['a1', 'a2', 'a3'], ['b1'], ['c1', 'c2']], 10)).toEqual(['a1', 'b1', 'c1', 'a2', 'c2', 'a3']);
  });

  it('stops at the free slots, in the queues’ order: a long first queue takes one slot, not all', () => {
    const backlog = Array.from({ length: 2000 }, (_, i) => `a${i}`);
    expect(roundRobin([backlog, ['b1', 'b2'], ['c1']], 4)).toEqual(['a0', 'b1', 'c1', 'a1']);
    expect(roundRobin([backlog, ['b1']], 1)).toEqual(['a0']);
  });

  it('takes nothing when there are no slots or no work', () => {
    expect(roundRobin([['a1']], 0)).toEqual([]);
    expect(roundRobin([[], []], 5)).toEqual([]);
  });
});

describe('byAccount', () => {
  const accounts: Record<string, string> = { a1: 'A', a2: 'A', a3: 'A', b1: 'B', c1: 'C' };
  const queue = (endpointId: string, n: number) => ({
    endpointId,
    items: Array.from({ length: n }, (_, i) => `${endpointId}.${i}`),
  });
  const cases: Array<[string, Array<ReturnType<typeof queue>>, number, string[]]> = [
    [
      'an account with three busy endpoints takes one slot per round beside one with one',
      [queue('a1', 3), queue('a2', 3), queue('a3', 3), queue('b1', 3)],
      4,
      ['a1.0', 'b1.0', 'a2.0', 'b1.1'],
    ],
    [
      "accounts in the order their first endpoint comes, each one's endpoints in turn",
      [queue('b1', 1), queue('a1', 2), queue('a2', 1), queue('c1', 1)],
      10,
      ['b1.0', 'a1.0', 'c1.0', 'a2.0', 'a1.1'],
    ],
    ['an endpoint of no known account is one of its own', [queue('x', 1), queue('a1', 1)], 10, ['x.0', 'a1.0']],
  ];
  it.each(cases)('%s', (_, queues, free, expected) => {
    expect(
      roundRobin(
        byAccount(queues, (id) => accounts[id]),
        free,
      ),
    ).toEqual(expected);
  });
});
