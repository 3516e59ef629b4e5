import type Database from 'better-sqlite3';
import { type Page, type PageRequest, toPage } from '../http/page.dto';
import { cachedStatement } from '../projections/statements';

/** A condition and its parameter; skipped when the parameter is undefined (an absent filter). */
export type Filter = readonly [sql: string, param: unknown];

export interface KeysetPageOptions<Row, T> {
  readonly table: string;
  /** e.g. `[['account_id = ?', accountId], ['status = ?', query.status]]`. */
  readonly where: readonly Filter[];
  readonly page: PageRequest<string>;
  /** Names the cursor's collection (usually the route's family). */
  readonly collection: string;
  /** The unique, ascending sort column: the UUID v7 id, so oldest first. Default `id`. */
  readonly keyColumn?: string;
  readonly map: (row: Row) => T;
}

/**
 * One keyset query on a read-model table: `WHERE <filters> AND id > :after ORDER BY id LIMIT n`.
 * Index `(account_id, <filter>, id)` to keep it an index range scan at any depth.
 */
export function keysetPage<Row extends object, T>(db: Database.Database, options: KeysetPageOptions<Row, T>): Page<T> {
  const key = options.keyColumn ?? 'id';
  const active = options.where.filter(([, param]) => param !== undefined);
  const conditions = active.map(([sql]) => `(${sql})`);
  const params = active.map(([, param]) => param);
  if (options.page.after !== null) {
    conditions.push(`"${key}" > ?`);
    params.push(options.page.after);
  }
  const sql =
    `SELECT * FROM "${options.table}"` +
    (conditions.length > 0 ? ` WHERE ${conditions.join(' AND ')}` : '') +
    ` ORDER BY "${key}" LIMIT ?`;
  const rows = cachedStatement(db, sql).all(...params, options.page.limit + 1) as Row[];
  const page = toPage(rows, options.page, options.collection, (row) => (row as Record<string, unknown>)[key] as string);
  return { data: page.data.map(options.map), next_cursor: page.next_cursor };
}
