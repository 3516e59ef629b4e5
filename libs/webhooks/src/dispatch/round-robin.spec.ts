import { roundRobin } from './round-robin';

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
