import { SendLanes } from './send-lanes';

describe('SendLanes: an endpoint’s requests on the sender thread', () => {
  let started: string[];
  let dropped: string[];
  let lanes: SendLanes<string>;
  beforeEach(() => {
    started = [];
    dropped = [];
    lanes = new SendLanes<string>(
      2,
      1_000,
      (call) => started.push(call),
      (call) => dropped.push(call),
    );
  });

  it('sends at most the limit per endpoint; the next waiting starts as each is answered, in order', () => {
    ['a1', 'a2', 'a3', 'a4'].forEach((c) => lanes.add('A', c, 0));
    lanes.add('B', 'b1', 0);
    expect(started).toEqual(['a1', 'a2', 'b1']);
    expect(lanes.waiting).toBe(2);
    lanes.answered('A', false, 10);
    expect(started).toEqual(['a1', 'a2', 'b1', 'a3']);
    lanes.answered('A', false, 20);
    lanes.answered('A', false, 30);
    expect(started).toEqual(['a1', 'a2', 'b1', 'a3', 'a4']);
    expect([lanes.waiting, dropped]).toEqual([0, []]);
  });

  it('drops what waits when an answer stops the lane, and what waited longer than the limit; the lane goes on after', () => {
    ['a1', 'a2', 'a3', 'a4'].forEach((c) => lanes.add('A', c, 0));
    ['b1', 'b2', 'b3'].forEach((c) => lanes.add('B', c, 0));
    lanes.answered('A', true, 10);
    expect(dropped).toEqual(['a3', 'a4']);
    // B's third has waited past the limit when a slot frees.
    lanes.answered('B', false, 1_001);
    expect(dropped).toEqual(['a3', 'a4', 'b3']);
    expect(started).toEqual(['a1', 'a2', 'b1', 'b2']);
    lanes.add('A', 'a5', 2_000);
    expect(started).toEqual(['a1', 'a2', 'b1', 'b2', 'a5']);
  });

  it('stopped (shutting down): drops every waiting request and any that would wait, none of those sending', () => {
    ['a1', 'a2', 'a3'].forEach((c) => lanes.add('A', c, 0));
    ['b1', 'b2', 'b3', 'b4'].forEach((c) => lanes.add('B', c, 0));
    lanes.stop();
    expect(dropped.sort()).toEqual(['a3', 'b3', 'b4']);
    lanes.add('A', 'a4', 1);
    lanes.add('C', 'c1', 1);
    expect(dropped).toContain('a4');
    expect(started).toEqual(['a1', 'a2', 'b1', 'b2', 'c1']);
    expect(lanes.waiting).toBe(0);
  });
});
