/**
 * A collection's page: the `limit` and `cursor` query (PageQueryDto), the request parsed from it
 * and the `{data, next_cursor}` answer.
 */
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, ValidateBy } from 'class-validator';
import { type FieldError, ValidationError } from '../errors/domain-errors';
import { type CursorCodec, type CursorKey, isCursorToken } from './cursor-codec';

/** CONTRACT.md conventions: `?limit=1..200 (default 50)&cursor=<opaque>` → `{data, next_cursor}`, oldest first. */
export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 200;
const LIMIT_MESSAGE = `limit must be a whole number from 1 to ${MAX_PAGE_LIMIT}`;
const CURSOR_MESSAGE = 'cursor is not a cursor this service issued; use next_cursor of the previous page';

export interface Page<T> {
  readonly data: readonly T[];
  readonly next_cursor: string | null;
}

export interface PageRequest<K extends CursorKey = CursorKey> {
  readonly limit: number;
  /** The sort key of the last item of the previous page; null for the first page. */
  readonly after: K | null;
  /** Issues the next page's cursor (the codec that checked this one). */
  readonly cursors: CursorCodec;
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
  // Only the form here (so a malformed cursor is listed with the other bad fields): whether the
  // service issued it takes the app's key, which `pageRequest` checks.
  @ValidateBy({ name: 'isCursor', validator: { validate: isCursorToken, defaultMessage: () => CURSOR_MESSAGE } })
  cursor?: string;
}

/** The fields of PageQueryDto. */
export const PAGE_QUERY_FIELDS: readonly string[] = ['limit', 'cursor'];

/**
 * Whether a query holds only PageQueryDto's fields, each valid by PageQueryDto's own rules (the
 * validation pipe's shortcut for an unfiltered page).
 */
export function isPageOnlyQuery(query: unknown): query is { limit?: string; cursor?: string } {
  if (typeof query !== 'object' || query === null) return false;
  for (const [field, value] of Object.entries(query)) {
    if (field === 'limit' ? !isLimit(value) : field !== 'cursor' || !isCursorToken(value)) return false;
  }
  return true;
}

/**
 * Parses `limit` and `cursor` for `collection` (also when the DTO was not validated, e.g. from
 * the CLI); a cursor `cursors` did not issue (forged, altered, of another DATA_DIR), of another
 * collection or with another kind of key is a 400 naming `cursor`. `cursors` is the app's
 * CursorCodec (inject it; ResourceApiModule provides it) and also issues the next page's cursor.
 */
export function pageRequest<K extends CursorKey>(
  query: { limit?: unknown; cursor?: unknown },
  collection: string,
  keyType: K extends number ? 'number' : 'string',
  cursors: CursorCodec,
): PageRequest<K> {
  const errors: FieldError[] = [];
  let limit = DEFAULT_PAGE_LIMIT;
  if (query.limit !== undefined) {
    if (isLimit(query.limit)) limit = Number(query.limit);
    else errors.push({ field: 'limit', message: LIMIT_MESSAGE });
  }
  let after: K | null = null;
  if (query.cursor !== undefined) {
    const body = cursors.decode(query.cursor);
    if (body && body.c === collection && typeof body.k === keyType) after = body.k as K;
    else errors.push({ field: 'cursor', message: CURSOR_MESSAGE });
  }
  if (errors.length > 0) throw new ValidationError(errors);
  return { limit, after, cursors };
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
  return { data, next_cursor: request.cursors.encode(collection, keyOf(data[data.length - 1])) };
}
