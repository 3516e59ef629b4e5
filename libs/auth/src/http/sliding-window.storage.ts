import type { ThrottlerStorage } from '@nestjs/throttler';

/** What `ThrottlerStorage.increment` answers (the library exports the type from its internals only). */
export type ThrottlerRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

interface Budget {
  /** Each counted hit's expiry (epoch ms), oldest first from `head`: a queue without shifting. */
  hits: number[];
  head: number;
  /** The window whose remainder `X-RateLimit-Reset` reports. */
  expiresAt: number;
  blocked: boolean;
  blockExpiresAt: number;
}

/** Below this many spent slots a queue is not compacted: slicing small arrays costs more than it saves. */
const COMPACT_AFTER = 64;

/**
 * @nestjs/throttler's storage contract with the answers of its in-memory `ThrottlerStorageService`
 * (same hits counted, same block after the limit, same times), in O(1) per request: that one keeps
 * every hit's expiry in an array it filters on every request, so a budget of n per window costs
 * O(n) per request and an array of n per request to collect. Here the hits of a key all have the
 * same ttl, so they expire in the order they came and a queue drops them from its front.
 *
 * Expiry uses `Date.now()`, as the library does; if the clock steps back, hits counted before the
 * step leave the window no later than before it, never earlier (the budget errs on the strict side).
 * Keys with no hit, block or window left are dropped as requests come, at most once per `sweepMs`.
 */
export class SlidingWindowStorage implements ThrottlerStorage {
  private readonly budgets = new Map<string, Budget>();
  private nextSweep = 0;

  constructor(private readonly sweepMs = 60_000) {}

  increment(key: string, ttl: number, limit: number, blockDuration: number, name: string): Promise<ThrottlerRecord> {
    return Promise.resolve(this.hit(key, ttl, limit, blockDuration, name));
  }

  /** `increment`, answered synchronously. */
  hit(key: string, ttl: number, limit: number, blockDuration: number, name: string, now = Date.now()): ThrottlerRecord {
    if (now >= this.nextSweep) this.sweep(now);
    const id = `${name}\0${key}`;
    let budget = this.budgets.get(id);
    if (!budget) {
      budget = { hits: [], head: 0, expiresAt: now + ttl, blockExpiresAt: 0, blocked: false };
      this.budgets.set(id, budget);
    }
    prune(budget, now);
    let timeToExpire = seconds(budget.expiresAt - now);
    if (timeToExpire <= 0) {
      budget.expiresAt = now + ttl;
      timeToExpire = seconds(ttl);
    }
    if (blockDuration <= 0) {
      // Never blocked: over the limit the request is refused and not counted.
      const over = count(budget) >= limit;
      if (!over) budget.hits.push(now + ttl);
      return {
        totalHits: count(budget) + (over ? 1 : 0),
        timeToExpire,
        isBlocked: over,
        timeToBlockExpire: !over ? 0 : count(budget) > 0 ? seconds(budget.hits[budget.head] - now) : timeToExpire,
      };
    }
    if (!budget.blocked) budget.hits.push(now + ttl);
    if (!budget.blocked && count(budget) > limit) {
      budget.blocked = true;
      budget.blockExpiresAt = now + blockDuration;
    }
    const timeToBlockExpire = seconds(budget.blockExpiresAt - now);
    if (budget.blocked && timeToBlockExpire <= 0) {
      // The block is over: the budget starts again with this request.
      budget.blocked = false;
      budget.hits = [now + ttl];
      budget.head = 0;
    }
    return { totalHits: count(budget), timeToExpire, isBlocked: budget.blocked, timeToBlockExpire };
  }

  private sweep(now: number): void {
    this.nextSweep = now + this.sweepMs;
    for (const [id, budget] of this.budgets) {
      prune(budget, now);
      const blocking = budget.blocked && budget.blockExpiresAt > now;
      if (count(budget) === 0 && !blocking && budget.expiresAt <= now) this.budgets.delete(id);
    }
  }
}

function prune(budget: Budget, now: number): void {
  const { hits } = budget;
  let head = budget.head;
  while (head < hits.length && hits[head] <= now) head++;
  if (head > COMPACT_AFTER && head * 2 > hits.length) {
    budget.hits = hits.slice(head);
    head = 0;
  }
  budget.head = head;
}

function count(budget: Budget): number {
  return budget.hits.length - budget.head;
}

function seconds(ms: number): number {
  return Math.ceil(ms / 1000);
}
