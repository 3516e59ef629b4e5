/**
 * Where the sender thread keeps an endpoint's requests (its lane): at most `limit` sending at
 * once, the others waiting in the order they came. When one is answered the next starts at once,
 * on the sender thread, without a round trip through the dispatcher on the main thread: the
 * dispatcher hands over up to a second round per endpoint (DISPATCHER_LIMITS), so the slot is
 * refilled while the main thread is busy with something else.
 *
 * A waiting request is dropped (answered as never sent; its delivery stays due) when the lane is
 * stopped — an answer before it asked the endpoint to wait (a 429's Retry-After) or is gone (a
 * 410) — and when it has waited `maxWaitMs`: a claim's lease must outlast the wait and the
 * request (dispatcher-instance.ts). Pure apart from the two callbacks; times are passed in.
 */
export class SendLanes<C> {
  private readonly lanes = new Map<string, Lane<C>>();
  /** Stopping (the service is shutting down): nothing waits any more. */
  private stopped = false;

  constructor(
    private readonly limit: number,
    private readonly maxWaitMs: number,
    /** Sends the request now. */
    private readonly start: (call: C) => void,
    /** Answers the request as never sent. */
    private readonly drop: (call: C) => void,
  ) {}

  /** A request for the endpoint `lane`: sent now if its lane has room, else it waits. */
  add(lane: string, call: C, now: number): void {
    const l = this.lanes.get(lane) ?? this.open(lane);
    if (l.sending < this.limit) {
      l.sending++;
      this.start(call);
    } else if (this.stopped) this.drop(call);
    else l.waiting.push({ call, since: now });
  }

  /** A request of `lane` was answered; `stop`: its answer asked the endpoint to wait, or said it is gone. */
  answered(lane: string, stop: boolean, now: number): void {
    const l = this.lanes.get(lane);
    if (!l) return;
    l.sending--;
    if (stop) this.dropWaiting(l);
    while (l.sending < this.limit && l.waiting.length > 0) {
      const next = l.waiting.shift()!;
      if (now - next.since > this.maxWaitMs) {
        this.drop(next.call);
        continue;
      }
      l.sending++;
      this.start(next.call);
    }
    if (l.sending === 0 && l.waiting.length === 0) this.lanes.delete(lane);
  }

  /** Drops every waiting request, and from now on any that would wait (shutting down); those sending go on. */
  stop(): void {
    this.stopped = true;
    for (const l of this.lanes.values()) this.dropWaiting(l);
  }

  /** Requests waiting, over all lanes. */
  get waiting(): number {
    let n = 0;
    for (const l of this.lanes.values()) n += l.waiting.length;
    return n;
  }

  private dropWaiting(l: Lane<C>): void {
    const waiting = l.waiting.splice(0);
    for (const { call } of waiting) this.drop(call);
  }

  private open(lane: string): Lane<C> {
    const l: Lane<C> = { sending: 0, waiting: [] };
    this.lanes.set(lane, l);
    return l;
  }
}

interface Lane<C> {
  sending: number;
  readonly waiting: { readonly call: C; readonly since: number }[];
}
