import type Database from 'better-sqlite3';
import { cachedStatement } from '../projections/statements';
import { perHandle, setBounded } from './per-handle';

/** Pages kept per database; past it the cache starts over rather than evict one by one. */
const MAX_PAGES = 256;

interface Cached {
  /** UTF-8: the bytes an answer sends, encoded once rather than on every send. */
  readonly bytes: Buffer;
  /** What the page was made with besides the query (the codec that signed its next_cursor). */
  readonly madeWith: object;
}

interface PageCache {
  /** The handle's `total_changes()` when the pages were read. */
  changes: number;
  readonly pages: Map<string, Cached>;
}

/**
 * Collection pages as answered, per read-model handle, kept while the database has not changed
 * since they were read. SQLite counts that itself, so no writer has to remember to clear the
 * cache: `total_changes()` counts every row the handle inserted, updated or deleted (any table,
 * any code, in a transaction rolled back or not). It is read in the same synchronous call as the
 * page, and the projections write in synchronous transactions, so a page served is never older
 * than the database at that moment: a write's read-your-writes wait ends after its commit, and the
 * next read sees the count moved. The key holds the whole query, account included.
 *
 * What makes the count enough: a read model is written only through the ProjectionRunner's handle
 * (a replay writes a file of its own, swapped in as a new handle, with an empty cache), and its
 * resets delete the projection's checkpoint row with its tables. A commit through another handle,
 * or tables dropped with no row written, would not move it; SQLite's `data_version` and
 * `schema_version` would, but each costs a read transaction, as much as the page read itself.
 */
const caches = perHandle<PageCache>(() => ({ changes: -1, pages: new Map() }));

/** The page under `key` as UTF-8, read with `read` when the database changed since, or it was never read. */
export function cachedPage(db: Database.Database, key: string, madeWith: object, read: () => string): Buffer {
  const changes = cachedStatement(db, 'SELECT total_changes()').pluck().get() as number;
  const cache = caches.of(db);
  if (cache.changes !== changes) {
    cache.pages.clear();
    cache.changes = changes;
  }
  const hit = cache.pages.get(key);
  if (hit !== undefined && hit.madeWith === madeWith) return hit.bytes;
  const bytes = Buffer.from(read());
  setBounded(cache.pages, key, { bytes, madeWith }, MAX_PAGES);
  return bytes;
}
