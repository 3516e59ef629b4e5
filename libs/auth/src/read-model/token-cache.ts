import type Database from 'better-sqlite3';

/** Enough for every live token of a busy instance; past it the cache starts over rather than evict one by one. */
const MAX_CACHED_TOKENS = 10_000;

/**
 * The token rows the bearer guard has read, per read-model database handle (a replay swaps the
 * handle, and two apps in one process have one each). A row holds what can change a token's fate
 * — revoked, its client's status and secret generation — so the auth projections forget the
 * handle's rows whenever they apply a token or client event, inside the same synchronous
 * transaction: the next request reads the table again, so a revocation takes effect at once.
 * Expiry is checked on every request (isTokenLive). Unknown tokens are never cached.
 */
const caches = new WeakMap<Database.Database, Map<string, object>>();

export function cachedToken<Row extends object>(
  db: Database.Database,
  tokenHash: string,
  read: () => Row | undefined,
): Row | undefined {
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = new Map<string, object>()));
  let row = cache.get(tokenHash) as Row | undefined;
  if (row === undefined) {
    row = read();
    if (row === undefined) return undefined;
    if (cache.size >= MAX_CACHED_TOKENS) cache.clear();
    cache.set(tokenHash, row);
  }
  return row;
}

/** Called by the projections of oauth_tokens and oauth_clients on every event they apply. */
export function forgetCachedTokens(db: Database.Database): void {
  caches.get(db)?.clear();
}
