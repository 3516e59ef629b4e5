import { ApiPropertyOptional } from '@nestjs/swagger';
import type Database from 'better-sqlite3';
import { IsOptional, IsString, ValidateBy } from 'class-validator';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { KEY_FILE_BYTES, loadOrCreateKeyFile } from '../crypto/key-file';
import type { ServiceKeys } from '../crypto/service-keys';
import { type FieldError, ValidationError } from '../errors/domain-errors';
import { cachedStatement } from '../projections/statements';

/** CONTRACT.md conventions: `?limit=1..200 (default 50)&cursor=<opaque>` → `{data, next_cursor}`, oldest first. */
export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 200;
/** 2: signed (1 was unsigned JSON, and is refused like any cursor this service did not issue). */
const CURSOR_VERSION = 2;
const CURSOR_KEY_BYTES = KEY_FILE_BYTES;
/** The ServiceKeys purpose of the cursor key when the root is SECRETS_KEY. */
const CURSOR_KEY_PURPOSE = 'pagination.cursor';
/** HMAC-SHA256 truncated to 128 bits: forging one takes ~2^128 guesses, each a request. */
const CURSOR_MAC_BYTES = 16;
const CURSOR_PATTERN = /^[A-Za-z0-9_-]{1,1024}$/;
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
  /** Issues the next page's cursor (the codec that checked this one). */
  readonly cursors: CursorCodec;
}

export interface CursorBody {
  readonly v: number;
  /** The collection that issued it, so a cursor of /entities is refused by /tasks. */
  readonly c: string;
  readonly k: CursorKey;
}

/**
 * Issues and checks the opaque `cursor` tokens: base64url of a 16-byte HMAC-SHA256 tag followed
 * by the versioned JSON body it covers (version, collection, key). Only a cursor this service
 * issued verifies, so a client cannot jump to a key of its choosing by writing its own.
 *
 * One per app, from the ServiceKeys ({@link CursorCodec.fromServiceKeys}, wired by
 * ResourceApiModule): with `SECRETS_KEY` every instance signs with the same derived key, so a
 * cursor from one instance pages on another; without it, `DATA_DIR/cursor.key` signs, so a restart
 * on the same DATA_DIR keeps accepting the cursors it gave out. Keys stay in this object (private
 * fields: not in `inspect`, JSON, a log or an error).
 */
export class CursorCodec {
  readonly #key: Buffer;
  /** Keys whose cursors are still accepted (a rotated-out SECRETS_KEY_PREVIOUS); never used to sign. */
  readonly #accepted: readonly Buffer[];

  constructor(key: Uint8Array, accepted: readonly Uint8Array[] = []) {
    for (const k of [key, ...accepted]) {
      if (k.length !== CURSOR_KEY_BYTES) throw new Error(`a cursor key is ${CURSOR_KEY_BYTES} bytes, not ${k.length}`);
    }
    this.#key = Buffer.from(key);
    this.#accepted = accepted.map((k) => Buffer.from(k));
  }

  /**
   * From SECRETS_KEY: a derived key (and the previous root's, accepted). From the key file: the
   * file's own bytes, as before derived keys existed, so cursors issued earlier stay valid.
   */
  static fromServiceKeys(keys: ServiceKeys): CursorCodec {
    if (keys.source === 'key-file') return new CursorCodec(keys.legacyRoot());
    const [current, ...accepted] = keys.deriveAccepted(CURSOR_KEY_PURPOSE);
    return new CursorCodec(current, accepted);
  }

  /** A codec with a fresh random key: for unit tests, and nothing that must survive a restart. */
  static random(): CursorCodec {
    return new CursorCodec(randomBytes(CURSOR_KEY_BYTES));
  }

  /** The key in `file` (`DATA_DIR/cursor.key`), made on first use ({@link loadOrCreateKeyFile}). */
  static fromKeyFile(file: string): CursorCodec {
    return new CursorCodec(loadOrCreateKeyFile(file));
  }

  encode(collection: string, key: CursorKey): string {
    const body: CursorBody = { v: CURSOR_VERSION, c: collection, k: key };
    const payload = Buffer.from(JSON.stringify(body));
    return Buffer.concat([this.tag(payload), payload]).toString('base64url');
  }

  /** The cursor's body, or null for anything this codec did not issue (the tag compared in constant time). */
  decode(text: unknown): CursorBody | null {
    const token = splitToken(text);
    if (!token) return null;
    const valid = [this.#key, ...this.#accepted].some((key) => timingSafeEqual(token.tag, tag(key, token.payload)));
    return valid ? token.body : null;
  }

  private tag(payload: Buffer): Buffer {
    return tag(this.#key, payload);
  }
}

function tag(key: Buffer, payload: Buffer): Buffer {
  return createHmac('sha256', key).update(payload).digest().subarray(0, CURSOR_MAC_BYTES);
}

interface CursorToken {
  readonly tag: Buffer;
  readonly payload: Buffer;
  readonly body: CursorBody;
}

/** A cursor's parts when `text` has the form of one (whatever its tag), else null. */
function splitToken(text: unknown): CursorToken | null {
  if (typeof text !== 'string' || !CURSOR_PATTERN.test(text)) return null;
  const bytes = Buffer.from(text, 'base64url');
  const payload = bytes.subarray(CURSOR_MAC_BYTES);
  const body = bytes.length > CURSOR_MAC_BYTES ? parseBody(payload) : null;
  return body && { tag: bytes.subarray(0, CURSOR_MAC_BYTES), payload, body };
}

function parseBody(payload: Buffer): CursorBody | null {
  let body: unknown;
  try {
    body = JSON.parse(payload.toString('utf8'));
  } catch {
    return null;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const { v, c, k } = body as Record<string, unknown>;
  if (v !== CURSOR_VERSION || typeof c !== 'string' || Object.keys(body).length !== 3) return null;
  const validKey =
    (typeof k === 'string' && k.length > 0 && k.length <= 200) || (typeof k === 'number' && Number.isSafeInteger(k) && k >= 0);
  return validKey ? { v, c, k } : null;
}

/**
 * Whether `text` has the form of a cursor (base64url of a tag and a cursor body). Only the form:
 * whether this service issued it takes the key, so it is for {@link CursorCodec.decode}, which
 * `pageRequest` calls.
 */
export function isCursorToken(text: unknown): text is string {
  return splitToken(text) !== null;
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
