import { perHandle, setBounded } from '@filing/platform';
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
const caches = perHandle<TokenCache>(() => ({ rows: new Map(), verdicts: new Map() }));

export function cachedToken<Row extends object>(
  db: Database.Database,
  tokenHash: string,
  read: () => Row | undefined,
): Row | undefined {
  const { rows } = caches.of(db);
  let row = rows.get(tokenHash) as Row | undefined;
  if (row === undefined) {
    row = read();
    if (row === undefined) return undefined;
    setBounded(rows, tokenHash, row, MAX_CACHED_TOKENS);
  }
  return row;
}

/** Keeps a verdict drawn from a row this cache holds now (call it in the same tick as the read). */
export function rememberVerdict(db: Database.Database, key: string, verdict: object): void {
  setBounded(caches.of(db).verdicts, key, verdict, MAX_CACHED_TOKENS);
}

export function recallVerdict<Verdict extends object>(db: Database.Database, key: string): Verdict | undefined {
  return caches.peek(db)?.verdicts.get(key) as Verdict | undefined;
}

/** Called by the projections of oauth_tokens and oauth_clients on every event they apply. */
export function forgetCachedTokens(db: Database.Database): void {
  const cache = caches.peek(db);
  cache?.rows.clear();
  cache?.verdicts.clear();
}
