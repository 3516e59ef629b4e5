import { RETRY_AFTER_CAP_MS } from '../deliveries/retry-schedule';
import { EndpointPacer, RATE_WINDOW_MS } from './endpoint-pacer';

/** Picks what the pacer allows at `now` and sends each at once; returns how many. */
function pickAndSend(pacer: EndpointPacer, id: string, limit: number | null, now: number, wanted: number): number {
  const n = Math.min(wanted, pacer.available(id, limit, now));
  for (let i = 0; i < n; i++) {
    pacer.reserve(id);
    pacer.sent(id, now);
  }
  return n;
}

describe('endpoint pacer', () => {
  it('lets at most the limit begin in any window, and no more once the window has moved on than it frees', () => {
    const pacer = new EndpointPacer();
    const sends: number[] = [];
    // A backlog of 40 polled every 7 ms for 8 s at 5 per second.
    let backlog = 40;
    for (let t = 0; t < 8_000 && backlog > 0; t += 7) {
      const n = pickAndSend(pacer, 'E', 5, t, backlog);
      for (let i = 0; i < n; i++) sends.push(t);
      backlog -= n;
    }
    expect(backlog).toBe(0);
    for (const start of sends)
      expect(sends.filter((s) => s >= start && s < start + RATE_WINDOW_MS).length).toBeLessThanOrEqual(5);
    // Each receiver second (of 1,000 ms) sees at most 5 as well.
    const perSecond = new Map<number, number>();
    for (const s of sends) perSecond.set(Math.floor(s / 1000), (perSecond.get(Math.floor(s / 1000)) ?? 0) + 1);
    expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(5);
  });

  it('counts a picked request from its pick until it is sent or dropped, then from when it was sent', () => {
    const pacer = new EndpointPacer();
    expect(pacer.available('E', 2, 0)).toBe(2);
    pacer.reserve('E');
    pacer.reserve('E');
    expect(pacer.available('E', 2, 500)).toBe(0);
    // The first went out late (its claim took a while), the second was dropped.
    pacer.sent('E', 900);
    pacer.release('E');
    expect(pacer.available('E', 2, 901)).toBe(1);
    expect(pacer.available('E', 2, 900 + RATE_WINDOW_MS - 1)).toBe(1);
    expect(pacer.available('E', 2, 900 + RATE_WINDOW_MS)).toBe(2);
  });

  it('holds nothing back without a limit, and follows a limit that changes', () => {
    const pacer = new EndpointPacer();
    expect(pickAndSend(pacer, 'E', null, 0, 500)).toBe(500);
    expect(pickAndSend(pacer, 'E', 3, 10, 10)).toBe(3);
    expect(pacer.available('E', 4, 20)).toBe(1);
    expect(pacer.available('E', null, 20)).toBe(Number.POSITIVE_INFINITY);
  });

  it('pauses every request of the endpoint until the Retry-After has passed (capped at an hour), and only that endpoint', () => {
    const pacer = new EndpointPacer();
    pacer.pause('E', 1_000, 2_000);
    expect([pacer.paused('E', 2_999), pacer.available('E', null, 2_999), pacer.available('E', 5, 2_999)]).toEqual([
      true,
      0,
      0,
    ]);
    expect([pacer.paused('E', 3_000), pacer.available('E', null, 3_000)]).toEqual([false, Number.POSITIVE_INFINITY]);
    expect(pacer.available('OTHER', null, 2_000)).toBe(Number.POSITIVE_INFINITY);
    // A shorter pause heard later does not shorten it.
    pacer.pause('E', 10_000, 5_000);
    pacer.pause('E', 11_000, 1_000);
    expect(pacer.paused('E', 14_999)).toBe(true);
    pacer.pause('X', 0, 10 * RETRY_AFTER_CAP_MS);
    expect([pacer.paused('X', RETRY_AFTER_CAP_MS - 1), pacer.paused('X', RETRY_AFTER_CAP_MS)]).toEqual([true, false]);
  });

  it('says when a held-back endpoint may send again, and how many are held back', () => {
    const pacer = new EndpointPacer();
    expect([pacer.nextOpening(0), pacer.held(0)]).toEqual([null, 0]);
    pickAndSend(pacer, 'LIMITED', 2, 100, 2);
    pickAndSend(pacer, 'LIMITED', 2, 300, 2);
    pacer.pause('PAUSED', 0, 2_000);
    pickAndSend(pacer, 'ROOMY', 10, 0, 1);
    expect([pacer.nextOpening(400), pacer.held(400)]).toEqual([100 + RATE_WINDOW_MS, 2]);
    expect([pacer.nextOpening(100 + RATE_WINDOW_MS), pacer.held(100 + RATE_WINDOW_MS)]).toEqual([2_000, 1]);
    expect([pacer.nextOpening(5_000), pacer.held(5_000)]).toEqual([null, 0]);
  });
});
