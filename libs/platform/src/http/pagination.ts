import { ApiPropertyOptional } from '@nestjs/swagger';
import type Database from 'better-sqlite3';
import { IsOptional, IsString, ValidateBy } from 'class-validator';
import { type FieldError, ValidationError } from '../errors/domain-errors';
import { cachedStatement } from '../projections/statements';

/** CONTRACT.md conventions: `?limit=1..200 (default 50)&cursor=<opaque>` → `{data, next_cursor}`, oldest first. */
export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 200;
const CURSOR_VERSION = 1;
const LIMIT_MESSAGE = `limit must be a whole number from 1 to ${MAX_PAGE_LIMIT}`;
const CURSOR_MESSAGE = 'cursor is not a cursor this service issued; use next_cursor of the previous page';

export interface Page<T> {
  readonly data: readonly T[];
  readonly next_cursor: string | null;
}

/** A cursor's sort key: a UUID v7 id (read-model collections) or a stream revision (history). */
export type CursorKey = string | number;

export interface PageRequest<K extends CursorKey = CursorKey> {
  readonly limit: number;
  /** The sort key of the last item of the previous page; null for the first page. */
  readonly after: K | null;
}

interface CursorBody {
  readonly v: number;
  /** The collection that issued it, so a cursor of /entities is refused by /tasks. */
  readonly c: string;
  readonly k: CursorKey;
}

/** base64url of a versioned JSON: opaque to clients, and easy to change behind `v`. */
export function encodeCursor(collection: string, key: CursorKey): string {
  const body: CursorBody = { v: CURSOR_VERSION, c: collection, k: key };
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

/** The cursor's body, or null for anything this service could not have issued. */
export function decodeCursor(text: unknown): CursorBody | null {
  if (typeof text !== 'string' || !/^[A-Za-z0-9_-]{1,1024}$/.test(text)) return null;
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const { v, c, k } = body as Record<string, unknown>;
  if (v !== CURSOR_VERSION || typeof c !== 'string' || Object.keys(body).length !== 3) return null;
  const validKey =
    (typeof k === 'string' && k.length > 0 && k.length <= 200) || (typeof k === 'number' && Number.isSafeInteger(k) && k >= 0);
  return validKey ? { v, c, k: k as CursorKey } : null;
}

function isLimit(value: unknown): boolean {
  return typeof value === 'string' && /^\d{1,3}$/.test(value) && Number(value) >= 1 && Number(value) <= MAX_PAGE_LIMIT;
}

/**
 * The query of every collection route. A family's list DTO extends it with its filters, so a
 * bad filter, limit and cursor are all listed in one 400.
 */
export class PageQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_PAGE_LIMIT, default: DEFAULT_PAGE_LIMIT })
  @IsOptional()
  @ValidateBy({ name: 'isPageLimit', validator: { validate: isLimit, defaultMessage: () => LIMIT_MESSAGE } })
  limit?: string;

  @ApiPropertyOptional({ description: 'next_cursor of the previous page' })
  @IsOptional()
  @IsString()
  @ValidateBy({ name: 'isCursor', validator: { validate: (v) => decodeCursor(v) !== null, defaultMessage: () => CURSOR_MESSAGE } })
  cursor?: string;
}

/**
 * Parses `limit` and `cursor` for `collection` (also when the DTO was not validated, e.g. from
 * the CLI); a cursor of another collection or with another kind of key is a 400 naming `cursor`.
 */
export function pageRequest<K extends CursorKey>(
  query: { limit?: unknown; cursor?: unknown },
  collection: string,
  keyType: K extends number ? 'number' : 'string',
): PageRequest<K> {
  const errors: FieldError[] = [];
  let limit = DEFAULT_PAGE_LIMIT;
  if (query.limit !== undefined) {
    if (isLimit(query.limit)) limit = Number(query.limit);
    else errors.push({ field: 'limit', message: LIMIT_MESSAGE });
  }
  let after: K | null = null;
  if (query.cursor !== undefined) {
    const body = decodeCursor(query.cursor);
    if (body && body.c === collection && typeof body.k === keyType) after = body.k as K;
    else errors.push({ field: 'cursor', message: CURSOR_MESSAGE });
  }
  if (errors.length > 0) throw new ValidationError(errors);
  return { limit, after };
}

/**
 * Builds a page from `limit + 1` items read after the cursor: the extra one only tells whether
 * there is a next page.
 */
export function toPage<T, K extends CursorKey>(
  items: readonly T[],
  request: PageRequest<K>,
  collection: string,
  keyOf: (item: T) => K,
): Page<T> {
  if (items.length <= request.limit) return { data: items, next_cursor: null };
  const data = items.slice(0, request.limit);
  return { data, next_cursor: encodeCursor(collection, keyOf(data[data.length - 1])) };
}

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
export function keysetPage<Row extends object, T>(
  db: Database.Database,
  options: KeysetPageOptions<Row, T>,
): Page<T> {
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
