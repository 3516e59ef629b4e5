import type Database from 'better-sqlite3';

const caches = new WeakMap<Database.Database, Map<string, Database.Statement>>();

/**
 * Prepares `sql` once per database handle. Keyed by handle, not held by the projection, so the
 * same code also serves a scratch database (rebuild audits) and never outlives a closed handle.
 * Prepare lazily: a projection's tables exist only once the runner has started.
 */
export function cachedStatement(db: Database.Database, sql: string): Database.Statement {
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = new Map<string, Database.Statement>()));
  let statement = cache.get(sql);
  if (!statement) cache.set(sql, (statement = db.prepare(sql)));
  return statement;
}
