import type Database from 'better-sqlite3';

/** Enough for every live token of a busy instance; past it the cache starts over rather than evict one by one. */
const MAX_CACHED_TOKENS = 10_000;

interface TokenCache {
  /** Token rows by token hash. */
  readonly rows: Map<string, object>;
  /** The bearer guard's verdicts by the hash of an Authorization header passport accepted. */
  readonly verdicts: Map<string, object>;
}

/**
 * The token rows the bearer guard has read, per read-model database handle (a replay swaps the
 * handle, and two apps in one process have one each). A row holds what can change a token's fate
 * — revoked, its client's status and secret generation — so the auth projections forget the
 * handle's rows whenever they apply a token or client event, inside the same synchronous
 * transaction: the next request reads the table again, so a revocation takes effect at once.
 * Expiry is checked on every request (isTokenLive). Unknown tokens are never cached. The
 * verdicts made from those rows are kept, and forgotten, with them.
 */
const caches = new WeakMap<Database.Database, TokenCache>();

function cacheOf(db: Database.Database): TokenCache {
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = { rows: new Map<string, object>(), verdicts: new Map<string, object>() }));
  return cache;
}

export function cachedToken<Row extends object>(
  db: Database.Database,
  tokenHash: string,
  read: () => Row | undefined,
): Row | undefined {
  const { rows } = cacheOf(db);
  let row = rows.get(tokenHash) as Row | undefined;
  if (row === undefined) {
    row = read();
    if (row === undefined) return undefined;
    if (rows.size >= MAX_CACHED_TOKENS) rows.clear();
    rows.set(tokenHash, row);
  }
  return row;
}

/** Keeps a verdict drawn from a row this cache holds now (call it in the same tick as the read). */
export function rememberVerdict(db: Database.Database, key: string, verdict: object): void {
  const { verdicts } = cacheOf(db);
  if (verdicts.size >= MAX_CACHED_TOKENS) verdicts.clear();
  verdicts.set(key, verdict);
}

export function recallVerdict<Verdict extends object>(db: Database.Database, key: string): Verdict | undefined {
  return caches.get(db)?.verdicts.get(key) as Verdict | undefined;
}

/** Called by the projections of oauth_tokens and oauth_clients on every event they apply. */
export function forgetCachedTokens(db: Database.Database): void {
  const cache = caches.get(db);
  cache?.rows.clear();
  cache?.verdicts.clear();
}
