/**
 * Stream metadata (`$$<stream>` events) read the way EventStoreDB (23.10, 24.10) reads it
 * (EventStore.Core/Data/StreamMetadata.cs, FromJsonReader): strict, all or nothing. A value of
 * the wrong JSON type, an integer outside int64, or an unknown key inside `$acl` makes the whole
 * metadata "empty" (TryFromJsonBytes swallows the error). Non-positive `$maxCount`, `$maxAge`,
 * `$cacheControl` and negative `$tb` are ignored one by one.
 *
 * JSON.parse cannot do this: it loses integers above 2^53 (soft delete writes `$tb` =
 * 9223372036854775807) and cannot tell `1` from `1.0`, which Newtonsoft reads as a float and
 * refuses. Hence the small scanner below.
 */

/** EventNumber.DeletedStream (long.MaxValue): `$tb` with this value means "soft-deleted". */
export const DELETED_STREAM = 9223372036854775807n;
const INT64_MIN = -9223372036854775808n;
/** TimeSpan.FromSeconds overflows beyond TimeSpan.MaxValue (≈ 922337203685 s). */
const MAX_TIMESPAN_SECONDS = 922337203685n;

export interface StreamMetadata {
  readonly maxCount?: bigint;
  readonly maxAgeSeconds?: bigint;
  readonly truncateBefore?: bigint;
  readonly tempStream?: boolean;
  readonly cacheControlSeconds?: bigint;
  readonly acl?: Readonly<Record<string, readonly string[]>>;
}

export const EMPTY_METADATA: StreamMetadata = Object.freeze({});

type Kind = 'object' | 'array' | 'string' | 'integer' | 'float' | 'true' | 'false' | 'null';

interface Value {
  readonly kind: Kind;
  readonly raw: string;
}

interface Entry {
  readonly key: string;
  readonly value: Value;
}

class Invalid extends Error {}

/** A strict RFC 8259 scanner that keeps each value's source text. */
class Scanner {
  private i = 0;
  constructor(private readonly text: string) {}

  /** The members of a top-level object, in order (duplicates kept). */
  topLevelObject(): Entry[] {
    this.ws();
    if (this.text[this.i] !== '{') throw new Invalid();
    return this.members();
  }

  private members(): Entry[] {
    this.i++; // {
    const entries: Entry[] = [];
    this.ws();
    if (this.text[this.i] === '}') {
      this.i++;
      return entries;
    }
    for (;;) {
      this.ws();
      const key = this.value();
      if (key.kind !== 'string') throw new Invalid();
      this.ws();
      if (this.text[this.i++] !== ':') throw new Invalid();
      this.ws();
      entries.push({ key: JSON.parse(key.raw) as string, value: this.value() });
      this.ws();
      const c = this.text[this.i++];
      if (c === '}') return entries;
      if (c !== ',') throw new Invalid();
    }
  }

  private value(): Value {
    const start = this.i;
    const c = this.text[this.i];
    let kind: Kind;
    if (c === '{') {
      this.members();
      kind = 'object';
    } else if (c === '[') {
      this.elements();
      kind = 'array';
    } else if (c === '"') {
      this.string();
      kind = 'string';
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      kind = this.number();
    } else {
      kind = this.literal();
    }
    return { kind, raw: this.text.slice(start, this.i) };
  }

  private elements(): void {
    this.i++; // [
    this.ws();
    if (this.text[this.i] === ']') {
      this.i++;
      return;
    }
    for (;;) {
      this.ws();
      this.value();
      this.ws();
      const c = this.text[this.i++];
      if (c === ']') return;
      if (c !== ',') throw new Invalid();
    }
  }

  private string(): void {
    // eslint-disable-next-line no-control-regex -- a JSON string may not hold raw control characters (RFC 8259 §7)
    const match = /^"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/.exec(this.text.slice(this.i));
    if (!match) throw new Invalid();
    this.i += match[0].length;
  }

  private number(): Kind {
    const match = /^-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(this.text.slice(this.i));
    if (!match) throw new Invalid();
    this.i += match[0].length;
    return match[1] || match[2] ? 'float' : 'integer';
  }

  private literal(): Kind {
    for (const word of ['true', 'false', 'null'] as const) {
      if (this.text.startsWith(word, this.i)) {
        this.i += word.length;
        return word;
      }
    }
    throw new Invalid();
  }

  private ws(): void {
    while (this.i < this.text.length && ' \t\n\r'.includes(this.text[this.i])) this.i++;
  }
}

function scan(data: Buffer): Entry[] | null {
  try {
    return new Scanner(data.toString('utf8')).topLevelObject();
  } catch (err) {
    if (err instanceof Invalid || err instanceof SyntaxError) return null;
    throw err;
  }
}

function int64(value: Value): bigint {
  if (value.kind !== 'integer') throw new Invalid();
  const n = BigInt(value.raw);
  if (n < INT64_MIN || n > DELETED_STREAM) throw new Invalid();
  return n;
}

function seconds(value: Value): bigint {
  const n = int64(value);
  if (n > MAX_TIMESPAN_SECONDS || n < -MAX_TIMESPAN_SECONDS) throw new Invalid();
  return n;
}

const ACL_KEYS = new Set(['$r', '$w', '$d', '$mr', '$mw']);

function acl(value: Value): Record<string, string[]> {
  if (value.kind !== 'object') throw new Invalid();
  const out: Record<string, string[]> = {};
  for (const { key, value: roles } of new Scanner(value.raw).topLevelObject()) {
    // The server's reader has no case for other keys: it then meets the value where it expects a
    // property name and gives up on the whole metadata.
    if (!ACL_KEYS.has(key)) throw new Invalid();
    out[key] = roleList(roles);
  }
  return out;
}

function roleList(value: Value): string[] {
  if (value.kind === 'string') return [JSON.parse(value.raw) as string];
  if (value.kind !== 'array') throw new Invalid();
  const items = JSON.parse(value.raw) as unknown[];
  if (!items.every((r): r is string => typeof r === 'string')) throw new Invalid();
  return items;
}

/**
 * The metadata an event of `$$<stream>` carries. Only JSON events count: the server ignores the
 * data of a binary or empty metadata event.
 */
export function parseStreamMetadata(data: Buffer, isJson: boolean): StreamMetadata {
  if (!isJson || data.length === 0) return EMPTY_METADATA;
  const entries = scan(data);
  if (!entries) return EMPTY_METADATA;
  let maxCount: bigint | undefined;
  let maxAge: bigint | undefined;
  let tb: bigint | undefined;
  let cacheControl: bigint | undefined;
  let tempStream: boolean | undefined;
  let aclRoles: Record<string, string[]> | undefined;
  try {
    for (const { key, value } of entries) {
      switch (key) {
        case '$maxCount':
          maxCount = int64(value);
          break;
        case '$maxAge':
          maxAge = seconds(value);
          break;
        case '$tb':
          tb = int64(value);
          break;
        case '$cacheControl':
          cacheControl = seconds(value);
          break;
        case '$tempStream':
          if (value.kind !== 'true' && value.kind !== 'false') throw new Invalid();
          tempStream = value.kind === 'true';
          break;
        case '$acl':
          aclRoles = acl(value);
          break;
        default:
          break; // custom keys are kept in the event, not interpreted
      }
    }
  } catch (err) {
    if (err instanceof Invalid || err instanceof SyntaxError) return EMPTY_METADATA;
    throw err;
  }
  return {
    ...(maxCount !== undefined && maxCount > 0n && { maxCount }),
    ...(maxAge !== undefined && maxAge > 0n && { maxAgeSeconds: maxAge }),
    ...(tb !== undefined && tb >= 0n && { truncateBefore: tb }),
    ...(tempStream !== undefined && { tempStream }),
    ...(cacheControl !== undefined && cacheControl > 0n && { cacheControlSeconds: cacheControl }),
    ...(aclRoles && { acl: aclRoles }),
  };
}

/**
 * What the server writes to undo a soft delete (StorageWriterService.SoftUndeleteRawMeta): the
 * last raw metadata with `$tb` replaced (or added), re-serialised compactly. `null` when the raw
 * metadata is not a JSON object: the server then leaves the stream deleted.
 */
export function withTruncateBefore(raw: Buffer, truncateBefore: bigint): Buffer | null {
  const entries = scan(raw);
  if (!entries) return null;
  // A JObject keeps one property per name: the last value, at the first one's place.
  const members = new Map<string, string>();
  for (const { key, value } of entries) members.set(key, minify(value.raw));
  members.set('$tb', String(truncateBefore));
  const body = [...members].map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(',');
  return Buffer.from(`{${body}}`, 'utf8');
}

/** The soft-delete metadata (StreamMetadata(truncateBefore: DeletedStream).ToJsonBytes()). */
export function softDeleteMetadata(): Buffer {
  return Buffer.from(`{"$tb":${DELETED_STREAM}}`, 'utf8');
}

/** Drops insignificant whitespace, as Newtonsoft's compact writer would. */
function minify(raw: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (inString) {
      out += c;
      if (c === '\\') out += raw[++i];
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
      out += c;
    } else if (!' \t\n\r'.includes(c)) {
      out += c;
    }
  }
  return out;
}
