import type Database from 'better-sqlite3';
import { type Page, type PageRequest, toPage } from '../http/page.dto';
import { cachedStatement } from '../projections/statements';
import { cachedPage } from './page-cache';

/** A condition and its parameter; skipped when the parameter is undefined (an absent filter). */
export type Filter = readonly [sql: string, param: unknown];

interface KeysetQuery {
  readonly table: string;
  /** e.g. `[['account_id = ?', accountId], ['status = ?', query.status]]`. */
  readonly where: readonly Filter[];
  readonly page: PageRequest<string>;
  /** Names the cursor's collection (usually the route's family). */
  readonly collection: string;
  /** The unique, ascending sort column: the UUID v7 id, so oldest first. Default `id`. */
  readonly keyColumn?: string;
}

export interface KeysetPageOptions<Row, T> extends KeysetQuery {
  readonly map: (row: Row) => T;
}

export interface KeysetPageJsonOptions extends KeysetQuery {
  /** The column holding each row's answer as JSON text. */
  readonly jsonColumn: string;
}

/**
 * One keyset query on a read-model table: `WHERE <filters> AND id > :after ORDER BY id LIMIT n`.
 * Index `(account_id, <filter>, id)` to keep it an index range scan at any depth.
 */
export function keysetPage<Row extends object, T>(db: Database.Database, options: KeysetPageOptions<Row, T>): Page<T> {
  const key = options.keyColumn ?? 'id';
  const rows = keysetRows(db, options, '*') as Row[];
  const page = toPage(rows, options.page, options.collection, (row) => (row as Record<string, unknown>)[key] as string);
  return { data: page.data.map(options.map), next_cursor: page.next_cursor };
}

/**
 * The same page as the JSON text `JSON.stringify({data, next_cursor})` gives, as UTF-8, from a column of
 * ready answers, each holding the key column under its own name (`{"id":…}`): only that column is
 * read (one value per row is the cheapest read better-sqlite3 has), the answers are joined as they
 * are, and only the last one is parsed, for the next cursor's key. A page asked for again while the
 * database is unchanged is answered from memory (page-cache.ts).
 */
export function keysetPageJson(db: Database.Database, options: KeysetPageJsonOptions): Buffer {
  const key = options.keyColumn ?? 'id';
  const { sql, params } = keysetQuery(options, `"${options.jsonColumn}"`);
  // The collection names the next cursor; the SQL holds the table, the filters and the column.
  const cacheKey = JSON.stringify([options.collection, sql, params]);
  return cachedPage(db, cacheKey, options.page.cursors, () => {
    const answers = cachedStatement(db, sql)
      .pluck(true)
      .all(...params) as string[];
    const page = toPage(
      answers,
      options.page,
      options.collection,
      (json) => (JSON.parse(json) as Record<string, string>)[key],
    );
    return `{"data":[${page.data.join(',')}],"next_cursor":${JSON.stringify(page.next_cursor)}}`;
  });
}

function keysetRows(db: Database.Database, options: KeysetQuery, columns: string): unknown[] {
  const { sql, params } = keysetQuery(options, columns);
  // A statement per SQL text: the plucked ones (one column) are never read as rows here.
  return cachedStatement(db, sql)
    .pluck(false)
    .all(...params);
}

/** The page's SQL and its parameters, the limit (one more than the page, for the next cursor) last. */
function keysetQuery(options: KeysetQuery, columns: string): { sql: string; params: unknown[] } {
  const key = options.keyColumn ?? 'id';
  const active = options.where.filter(([, param]) => param !== undefined);
  const conditions = active.map(([sql]) => `(${sql})`);
  const params = active.map(([, param]) => param);
  if (options.page.after !== null) {
    conditions.push(`"${key}" > ?`);
    params.push(options.page.after);
  }
  params.push(options.page.limit + 1);
  const sql =
    `SELECT ${columns} FROM "${options.table}"` +
    (conditions.length > 0 ? ` WHERE ${conditions.join(' AND ')}` : '') +
    ` ORDER BY "${key}" LIMIT ?`;
  return { sql, params };
}
