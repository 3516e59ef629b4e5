import type Database from 'better-sqlite3';

const caches = new WeakMap<Database.Database, Map<string, Database.Statement>>();
const runners = new WeakMap<Database.Database, Database.Transaction<(work: () => void) => void>>();

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

/**
 * Runs `work` in one `BEGIN IMMEDIATE` transaction on `db` (a savepoint when already in one):
 * committed if it returns, rolled back if it throws. One wrapper per handle: better-sqlite3's
 * `db.transaction()` builds five functions and their properties each call, which a projection
 * batch or a fan-out save would otherwise pay every time.
 */
export function inImmediateTransaction(db: Database.Database, work: () => void): void {
  let run = runners.get(db);
  if (!run) runners.set(db, (run = db.transaction((w: () => void) => w())));
  run.immediate(work);
}
