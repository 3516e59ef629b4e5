/**
 * Failed client authentications, counted in a sliding window per client_id and per remote
 * address. When either key is at its limit, the token endpoint answers 429 with Retry-After
 * (seconds until the oldest counted failure leaves the window) without checking the secret.
 * Successes are not counted and not throttled. In memory, per process: the limits are per
 * instance, and a restart forgets them (acceptable for a brute-force brake on 256-bit secrets).
 */
export interface ThrottleLimits {
  readonly windowMs: number;
  readonly perClient: number;
  readonly perAddress: number;
  /** Keys kept at most (oldest dropped first), so a flood of made-up client_ids cannot exhaust memory. */
  readonly maxKeys: number;
}

export const DEFAULT_THROTTLE_LIMITS: ThrottleLimits = {
  windowMs: 5 * 60_000,
  perClient: 10,
  perAddress: 30,
  maxKeys: 100_000,
};

export class FailedAuthThrottle {
  private readonly failures = new Map<string, number[]>();

  constructor(
    readonly limits: ThrottleLimits = DEFAULT_THROTTLE_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds to wait when the client_id or the address is at its limit; null when neither is. */
  retryAfter(clientId: string | null, address: string): number | null {
    const now = this.now();
    let wait = 0;
    for (const [key, limit] of this.keys(clientId, address)) {
      const times = this.recent(key, now);
      if (times.length >= limit) wait = Math.max(wait, times[times.length - limit] + this.limits.windowMs - now);
    }
    return wait > 0 ? Math.max(1, Math.ceil(wait / 1000)) : null;
  }

  recordFailure(clientId: string | null, address: string): void {
    const now = this.now();
    for (const [key] of this.keys(clientId, address)) {
      const times = this.recent(key, now);
      times.push(now);
      // Re-inserted so the map's order is least recently failed first.
      this.failures.delete(key);
      this.failures.set(key, times);
    }
    while (this.failures.size > this.limits.maxKeys) {
      const oldest = this.failures.keys().next().value as string;
      this.failures.delete(oldest);
    }
  }

  /** Forgets every failure (tests). */
  reset(): void {
    this.failures.clear();
  }

  private keys(clientId: string | null, address: string): Array<[string, number]> {
    const keys: Array<[string, number]> = [[`address:${address}`, this.limits.perAddress]];
    if (clientId) keys.push([`client:${clientId}`, this.limits.perClient]);
    return keys;
  }

  private recent(key: string, now: number): number[] {
    const times = this.failures.get(key);
    if (!times) return [];
    const from = now - this.limits.windowMs;
    let drop = 0;
    while (drop < times.length && times[drop] <= from) drop++;
    if (drop > 0) times.splice(0, drop);
    if (times.length === 0) this.failures.delete(key);
    return times;
  }
}
