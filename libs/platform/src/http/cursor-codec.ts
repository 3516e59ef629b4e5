import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { KEY_FILE_BYTES, loadOrCreateKeyFile } from '../crypto/key-file';
import type { ServiceKeys } from '../crypto/service-keys';

/** 2: signed (1 was unsigned JSON, and is refused like any cursor this service did not issue). */
const CURSOR_VERSION = 2;
const CURSOR_KEY_BYTES = KEY_FILE_BYTES;
/** The ServiceKeys purpose of the cursor key when the root is SECRETS_KEY. */
const CURSOR_KEY_PURPOSE = 'pagination.cursor';
/** HMAC-SHA256 truncated to 128 bits: forging one takes ~2^128 guesses, each a request. */
const CURSOR_MAC_BYTES = 16;
const CURSOR_PATTERN = /^[A-Za-z0-9_-]{1,1024}$/;
/** How many issued cursors a codec remembers. */
const ISSUED_KEPT = 1024;

/** A cursor's sort key: a UUID v7 id (read-model collections) or a stream revision (history). */
export type CursorKey = string | number;

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
  /** The last cursors issued, by their JSON body and by their text (the oldest dropped first). */
  readonly #issued = new Map<string, { readonly cursor: string; readonly body: CursorBody }>();
  readonly #issuedBodies = new Map<string, CursorBody>();

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
    const body: CursorBody = Object.freeze({ v: CURSOR_VERSION, c: collection, k: key });
    const json = JSON.stringify(body);
    // A page's cursor is the same until its last row changes (the first page of a list, above
    // all): the HMAC of a cursor issued recently is not computed again.
    const known = this.#issued.get(json);
    if (known !== undefined) return known.cursor;
    const payload = Buffer.from(json);
    const cursor = Buffer.concat([this.tag(payload), payload]).toString('base64url');
    remember(this.#issued, json, { cursor, body });
    remember(this.#issuedBodies, cursor, body);
    return cursor;
  }

  /** The cursor's body, or null for anything this codec did not issue (the tag compared in constant time). */
  decode(text: unknown): CursorBody | null {
    // One this codec issued recently, exactly as it was issued: its tag needs no second check.
    const issued = typeof text === 'string' ? this.#issuedBodies.get(text) : undefined;
    if (issued !== undefined) return issued;
    const token = splitToken(text);
    if (!token) return null;
    const valid = [this.#key, ...this.#accepted].some((key) => timingSafeEqual(token.tag, tag(key, token.payload)));
    return valid ? token.body : null;
  }

  private tag(payload: Buffer): Buffer {
    return tag(this.#key, payload);
  }
}

/** Sets `key` in a map of at most ISSUED_KEPT entries, dropping the oldest when full. */
function remember<V>(map: Map<string, V>, key: string, value: V): void {
  if (map.size >= ISSUED_KEPT) map.delete(map.keys().next().value!);
  map.set(key, value);
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
    (typeof k === 'string' && k.length > 0 && k.length <= 200) ||
    (typeof k === 'number' && Number.isSafeInteger(k) && k >= 0);
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
