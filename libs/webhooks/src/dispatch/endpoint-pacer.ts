import { RETRY_AFTER_CAP_MS } from '../deliveries/retry-schedule';

/**
 * The window of `rate_limit_per_second`: at most N requests to an endpoint begin in any window
 * this long. A little over a second, so that jitter between a request leaving and arriving (a new
 * TLS connection for one, a pooled one for the next) never lets the receiver count N + 1 in one
 * of its seconds.
 */
export const RATE_WINDOW_MS = 1_050;

interface Pace {
  /** The endpoint's limit as last read (null: none). */
  limit: number | null;
  /** When its recent requests began (the last RATE_WINDOW_MS), oldest first. */
  readonly sent: number[];
  /** Picked, not yet sent (nor dropped): they count against the limit meanwhile. */
  pending: number;
  /** No request begins before then (a 429's Retry-After); 0: not paused. */
  pausedUntil: number;
}

/**
 * Per endpoint, this instance's pace of sending (CONTRACT.md §5): the rate limit, a sliding
 * window of the times its requests began, and the pause a 429 with `Retry-After` asks for. The
 * dispatcher asks it how many deliveries an endpoint may take when it picks them, tells it when
 * each one goes out (or is dropped before), and consults it again just before an attempt is
 * claimed. A delivery held back is only left due: nothing is dropped. Times are epoch ms passed
 * in, so it is pure apart from its own state.
 *
 * Invariant: a pick counts from its pick until it is sent, then from its actual send time, so
 * however long the steps in between take, no RATE_WINDOW_MS of send times holds more than the limit.
 */
export class EndpointPacer {
  private readonly paces = new Map<string, Pace>();

  /** How many requests to the endpoint may be picked now: 0 while paused; unbounded without a limit. */
  available(endpointId: string, limit: number | null, now: number): number {
    const pace = this.paces.get(endpointId);
    if (pace) pace.limit = limit;
    if (pace && pace.pausedUntil > now) return 0;
    if (limit === null) return Number.POSITIVE_INFINITY;
    const p = pace ?? this.pace(endpointId, limit);
    this.forget(p, now);
    return Math.max(0, limit - p.sent.length - p.pending);
  }

  /** One request to the endpoint was picked. */
  reserve(endpointId: string): void {
    const pace = this.paces.get(endpointId);
    if (pace) pace.pending++;
  }

  /** The picked request begins now. */
  sent(endpointId: string, now: number): void {
    const pace = this.paces.get(endpointId);
    if (!pace) return;
    pace.pending = Math.max(0, pace.pending - 1);
    if (pace.limit !== null) pace.sent.push(now);
  }

  /** The picked request will not be sent after all (skipped, cancelled, claimed elsewhere, paused). */
  release(endpointId: string): void {
    const pace = this.paces.get(endpointId);
    if (pace) pace.pending = Math.max(0, pace.pending - 1);
  }

  /** The receiver asked every request to wait `ms` (capped at an hour, like a retry's Retry-After). */
  pause(endpointId: string, now: number, ms: number): void {
    const pace = this.paces.get(endpointId) ?? this.pace(endpointId, null);
    pace.pausedUntil = Math.max(pace.pausedUntil, now + Math.min(Math.max(ms, 0), RETRY_AFTER_CAP_MS));
  }

  paused(endpointId: string, now: number): boolean {
    return (this.paces.get(endpointId)?.pausedUntil ?? 0) > now;
  }

  /** Endpoints held back now (paused, or with no room under their limit): the dispatcher lists that many more. */
  held(now: number): number {
    let n = 0;
    for (const pace of this.paces.values()) if (this.isHeld(pace, now)) n++;
    return n;
  }

  /**
   * The earliest time after `now` when a held-back endpoint may send again (its pause ends, or its
   * oldest request leaves the window); null when none is held back for a time. Forgets endpoints
   * with nothing left to remember.
   */
  nextOpening(now: number): number | null {
    let next: number | null = null;
    for (const [id, pace] of this.paces) {
      this.forget(pace, now);
      if (pace.pending === 0 && pace.sent.length === 0 && pace.pausedUntil <= now) {
        this.paces.delete(id);
        continue;
      }
      if (!this.isHeld(pace, now)) continue;
      const at =
        pace.pausedUntil > now ? pace.pausedUntil : pace.sent.length > 0 ? pace.sent[0] + RATE_WINDOW_MS : null;
      if (at !== null && (next === null || at < next)) next = at;
    }
    return next;
  }

  private isHeld(pace: Pace, now: number): boolean {
    if (pace.pausedUntil > now) return true;
    if (pace.limit === null) return false;
    this.forget(pace, now);
    return pace.sent.length + pace.pending >= pace.limit;
  }

  private pace(endpointId: string, limit: number | null): Pace {
    const pace: Pace = { limit, sent: [], pending: 0, pausedUntil: 0 };
    this.paces.set(endpointId, pace);
    return pace;
  }

  /** Drops send times that have left the window. */
  private forget(pace: Pace, now: number): void {
    let stale = 0;
    while (stale < pace.sent.length && pace.sent[stale] <= now - RATE_WINDOW_MS) stale++;
    if (stale > 0) pace.sent.splice(0, stale);
  }
}
