import type Database from 'better-sqlite3';
import { perHandle, setBounded } from './per-handle';

/** Ids kept per table and handle; past it the table's ids start over rather than evict one by one. */
const MAX_KNOWN_IDS = 10_000;

/**
 * The ids a read of a declared table found, with their account, per read-model handle: a
 * reference check (`ResourceQueries.exists`) that finds one here skips SQLite — a read
 * transaction and its locks, the largest single cost of `POST /orders` after the projections.
 * Only a `deletedBy` event removes a row, and the projection forgets the id as it deletes it,
 * in the same synchronous transaction, so an id kept here exists in the read model as the next
 * read would see it; a table (re)created by `setup` starts with none. A replay writes a file of
 * its own, swapped in as a new handle, with none either.
 */
const known = perHandle(() => new Map<string, Map<unknown, string>>());

function idsOf(db: Database.Database, table: string): Map<unknown, string> {
  const tables = known.of(db);
  let ids = tables.get(table);
  if (!ids) tables.set(table, (ids = new Map<unknown, string>()));
  return ids;
}

/** Whether `id` was found in `accountId`'s rows of `table`, and not deleted since. */
export function isKnownId(db: Database.Database, table: string, accountId: string, id: unknown): boolean {
  return known.peek(db)?.get(table)?.get(id) === accountId;
}

/** Keeps an id just read from `table` in `accountId` (call it in the same tick as the read). */
export function rememberId(db: Database.Database, table: string, accountId: string, id: unknown): void {
  setBounded(idsOf(db, table), id, accountId, MAX_KNOWN_IDS);
}

/** Forgets one id (its row is being deleted), or the table's every id (it is being created). */
export function forgetIds(db: Database.Database, table: string, id?: unknown): void {
  const ids = known.peek(db)?.get(table);
  if (id === undefined) ids?.clear();
  else ids?.delete(id);
}
