import type { Clock } from '../clock';
import { systemClock } from '../clock';

export type Awaitable<T> = T | Promise<T>;

/**
 * `claimed`: first sight of this id (or its earlier claim lapsed): process it.
 * `duplicate`: already processed: acknowledge, do nothing.
 * `in_progress`: another request is processing it right now: ask the sender to retry later.
 */
export type ClaimResult = 'claimed' | 'duplicate' | 'in_progress';

/**
 * Where processed `webhook-id`s are remembered. Implementations must make `claim` atomic: of
 * two concurrent claims of one id, exactly one gets `claimed`.
 */
export interface DedupeStore {
  /** Records `id` as being processed until `leaseUntil` (ms), unless it is done or being processed. */
  claim(id: string, now: number, leaseUntil: number): Awaitable<ClaimResult>;
  /** Processing succeeded: remember `id` as done until `expiresAt` (ms). */
  complete(id: string, expiresAt: number): Awaitable<void>;
  /** Processing failed: forget the claim so the sender's retry is processed. */
  release(id: string): Awaitable<void>;
  close?(): Awaitable<void>;
}

export interface MemoryDedupeStoreOptions {
  /** Upper bound on remembered ids; the oldest are forgotten first (default 100 000). */
  readonly maxEntries?: number;
}

interface Entry {
  done: boolean;
  expiresAt: number;
}

/**
 * A DedupeStore in this process's memory: fine for one receiver process; forgets on restart
 * (use the SQLite store, or your own over Redis/SQL, to survive restarts or share between
 * processes).
 */
export class MemoryDedupeStore implements DedupeStore {
  private readonly entries = new Map<string, Entry>();
  private readonly maxEntries: number;
  private lastNow = 0;

  constructor(options: MemoryDedupeStoreOptions = {}) {
    this.maxEntries = options.maxEntries ?? 100_000;
  }

  get size(): number {
    return this.entries.size;
  }

  claim(id: string, now: number, leaseUntil: number): ClaimResult {
    this.lastNow = now;
    this.prune(now);
    const entry = this.entries.get(id);
    if (entry && entry.expiresAt > now) return entry.done ? 'duplicate' : 'in_progress';
    this.entries.delete(id);
    this.entries.set(id, { done: false, expiresAt: leaseUntil });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    return 'claimed';
  }

  complete(id: string, expiresAt: number): void {
    this.entries.delete(id);
    if (expiresAt > this.lastNow) this.entries.set(id, { done: true, expiresAt });
  }

  release(id: string): void {
    const entry = this.entries.get(id);
    if (entry && !entry.done) this.entries.delete(id);
  }

  /** Drops expired entries from the oldest end (amortized O(1) per claim). */
  private prune(now: number): void {
    for (const [id, entry] of this.entries) {
      if (entry.expiresAt > now) break;
      this.entries.delete(id);
    }
  }
}

export interface DeduplicatorOptions {
  readonly store: DedupeStore;
  /** How long a processed id is remembered (default 3 days: longer than the service's ~45 h of retries). */
  readonly ttlMs?: number;
  /** How long a claim protects an id being processed before a retry may take over (default 60 s). */
  readonly leaseMs?: number;
  readonly clock?: Clock;
}

export type DedupeOutcome<R> =
  { readonly status: 'processed'; readonly result: R } | { readonly status: 'duplicate' | 'in_progress' };

/** The service retries for about 45 h in total (10 s, 1 min, … 24 h): 3 days covers every retry. */
export const DEFAULT_DEDUPE_TTL_MS = 3 * 24 * 60 * 60 * 1000;
/** A claim outlives a crashed handler by this much; the sender's next retry then processes the event. */
export const DEFAULT_LEASE_MS = 60 * 1000;

/**
 * Runs `work` at most once per id (per store TTL): `claim → work → complete`, or `release` if
 * `work` throws (the error is rethrown, so the sender retries and the retry runs `work` again).
 */
export class Deduplicator {
  private readonly store: DedupeStore;
  private readonly ttlMs: number;
  private readonly leaseMs: number;
  private readonly clock: Clock;

  constructor(options: DeduplicatorOptions) {
    this.store = options.store;
    this.ttlMs = options.ttlMs ?? DEFAULT_DEDUPE_TTL_MS;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.clock = options.clock ?? systemClock;
  }

  async run<R>(id: string, work: () => Promise<R> | R): Promise<DedupeOutcome<R>> {
    const now = this.clock.now();
    const claim = await this.store.claim(id, now, now + this.leaseMs);
    if (claim !== 'claimed') return { status: claim };
    let result: R;
    try {
      result = await work();
    } catch (err) {
      await this.store.release(id);
      throw err;
    }
    await this.store.complete(id, this.clock.now() + this.ttlMs);
    return { status: 'processed', result };
  }
}
