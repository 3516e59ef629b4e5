import type Database from 'better-sqlite3';

/** Enough for every endpoint a busy instance sends to; past it the cache starts over rather than evict one by one. */
const MAX_CACHED_TARGETS = 10_000;

interface EndpointsCache {
  /** DeliveryTargets' rows by `<account> <endpoint>` (undefined: no such endpoint). */
  readonly targets: Map<string, unknown>;
  /** The endpoints with a `rate_limit_per_second`, all of them; null: read them again. */
  rateLimits: ReadonlyMap<string, number> | null;
  /** Every endpoint's account; null: read them again. */
  accounts: ReadonlyMap<string, string> | null;
}

/**
 * What the dispatcher reads of `webhook_endpoints` and `webhook_settings` before every attempt
 * (each endpoint's target, the rate limits), per read-model database handle (a replay swaps the
 * handle, and two apps in one process have one each). Only the endpoints projection writes those
 * tables, and it forgets the handle's entries whenever it applies an event, inside the same
 * synchronous transaction: the next read goes to the table again, so a disable, a rotation or a
 * new limit counts from the next attempt on, as when every attempt read the row.
 */
const caches = new WeakMap<Database.Database, EndpointsCache>();

function cacheOf(db: Database.Database): EndpointsCache {
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = { targets: new Map(), rateLimits: null, accounts: null }));
  return cache;
}

/** The row `read` gives for the key, read once until the endpoints change. */
export function cachedTarget<Row>(db: Database.Database, key: string, read: () => Row | undefined): Row | undefined {
  const { targets } = cacheOf(db);
  if (targets.has(key)) return targets.get(key) as Row | undefined;
  const row = read();
  if (targets.size >= MAX_CACHED_TARGETS) targets.clear();
  targets.set(key, row);
  return row;
}

type WholeTables = Pick<EndpointsCache, 'rateLimits' | 'accounts'>;

/** What `read` gives of every endpoint (the rate limits, the accounts), read once until the endpoints change. */
export function cachedForAllEndpoints<K extends keyof WholeTables>(
  db: Database.Database,
  key: K,
  read: () => NonNullable<WholeTables[K]>,
): NonNullable<WholeTables[K]> {
  const cache = cacheOf(db);
  return (cache[key] ??= read());
}

/** Called by the endpoints projection on every event it applies. */
export function forgetCachedEndpoints(db: Database.Database): void {
  const cache = caches.get(db);
  if (!cache) return;
  cache.targets.clear();
  cache.rateLimits = null;
  cache.accounts = null;
}
