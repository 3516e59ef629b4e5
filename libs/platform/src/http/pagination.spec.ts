import Database from 'better-sqlite3';
import { validateSync } from 'class-validator';
import { plainToInstance } from 'class-transformer';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type * as NodeFs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { ServiceKeys } from '../crypto/service-keys';
import { ValidationError } from '../errors/domain-errors';
import { CursorCodec, keysetPage, PageQueryDto, pageRequest, toPage } from './pagination';

const cursors = CursorCodec.random();
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
/** A token as the codec lays it out (16-byte tag, then the JSON body), with the tag given. */
const withTag = (tag: Buffer, body: unknown) => Buffer.concat([tag, Buffer.from(JSON.stringify(body))]).toString('base64url');

function fieldsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ValidationError) return err.errors.map((e) => e.field);
    throw err;
  }
  throw new Error('expected a ValidationError');
}

describe('cursors', () => {
  it('round-trip an id or a revision, opaque and URL-safe', () => {
    const id = '0193a5b2-0000-7000-8000-000000000001';
    const cursor = cursors.encode('entities', id);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(cursors.decode(cursor)).toEqual({ v: 2, c: 'entities', k: id });
    expect(cursors.decode(cursors.encode('entities/history', 7))).toEqual({ v: 2, c: 'entities/history', k: 7 });
  });

  it.each([
    ['not base64url', 'abc$%'],
    ['empty', ''],
    ['too short to hold a tag', Buffer.alloc(16).toString('base64url')],
    ['too long', 'A'.repeat(2000)],
    ['not a string', 42],
  ])('refuse %s', (_, text) => {
    expect(cursors.decode(text)).toBeNull();
  });

  it.each([
    ['an unsigned body (the old v1 cursors)', b64({ v: 1, c: 'entities', k: 'zzz' })],
    ['a zero tag', withTag(Buffer.alloc(16), { v: 2, c: 'entities', k: '00000000-0000-0000-0000-000000000000' })],
    ['a body with a tag of another key', CursorCodec.random().encode('entities', 'zzz')],
  ])('refuse a forged cursor: %s', (_, text) => {
    expect(cursors.decode(text)).toBeNull();
    expect(fieldsOf(() => pageRequest({ cursor: text }, 'entities', 'string', cursors))).toEqual(['cursor']);
  });

  it('refuse a cursor whose body or tag was changed in any byte', () => {
    const bytes = Buffer.from(cursors.encode('entities', 'abc'), 'base64url');
    for (let i = 0; i < bytes.length; i++) {
      const changed = Buffer.from(bytes);
      changed[i] ^= 0x01;
      expect(cursors.decode(changed.toString('base64url'))).toBeNull();
    }
    // The tag is HMAC-SHA256 of the body, truncated to 16 bytes.
    const body = bytes.subarray(16);
    const tagOfOtherKey = createHmac('sha256', Buffer.alloc(32)).update(body).digest().subarray(0, 16);
    expect(cursors.decode(Buffer.concat([tagOfOtherKey, body]).toString('base64url'))).toBeNull();
    expect(new CursorCodec(Buffer.alloc(32)).decode(Buffer.concat([tagOfOtherKey, body]).toString('base64url'))).toEqual({
      v: 2,
      c: 'entities',
      k: 'abc',
    });
  });

  it.each([
    ['a JSON array', [1, 'entities', 'x']],
    ['another version', { v: 1, c: 'entities', k: 'x' }],
    ['no key', { v: 2, c: 'entities' }],
    ['an extra property', { v: 2, c: 'entities', k: 'x', admin: true }],
    ['a negative revision', { v: 2, c: 'h', k: -1 }],
    ['a fractional revision', { v: 2, c: 'h', k: 1.5 }],
    ['an object key', { v: 2, c: 'h', k: {} }],
  ])('refuse a correctly signed body that is not a cursor: %s', (_, body) => {
    const key = Buffer.alloc(32, 7);
    const payload = Buffer.from(JSON.stringify(body));
    const tag = createHmac('sha256', key).update(payload).digest().subarray(0, 16);
    expect(new CursorCodec(key).decode(withTag(tag, body))).toBeNull();
  });

  it('need a 32-byte key, and keep it out of inspect and JSON', () => {
    expect(() => new CursorCodec(Buffer.alloc(16))).toThrow('32 bytes');
    const key = Buffer.alloc(32, 0xab);
    const codec = new CursorCodec(key);
    expect(inspect(codec, { showHidden: true, depth: 5 })).not.toContain('ab ab');
    expect(JSON.stringify(codec)).toBe('{}');
  });
});

describe('CursorCodec.fromKeyFile', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cursor-key-'));
  });
  afterEach(() => {
    jest.restoreAllMocks();
    rmSync(dir, { recursive: true, force: true });
  });

  it('makes a 32-byte key readable by the owner only on first use, and leaves no temp file', () => {
    const file = join(dir, 'cursor.key');
    CursorCodec.fromKeyFile(file);
    expect(readFileSync(file)).toHaveLength(32);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['cursor.key']);
  });

  it('gives the same key to every codec on the same file (a restart, another process), another to another file', () => {
    const first = CursorCodec.fromKeyFile(join(dir, 'cursor.key'));
    const again = CursorCodec.fromKeyFile(join(dir, 'cursor.key'));
    const other = CursorCodec.fromKeyFile(join(dir, 'other.key'));
    const cursor = first.encode('entities', 'abc');
    expect(again.decode(cursor)).toEqual({ v: 2, c: 'entities', k: 'abc' });
    expect(other.decode(cursor)).toBeNull();
  });

  it('takes the key of a process that made it first (EEXIST), not its own', () => {
    const file = join(dir, 'cursor.key');
    const theirs = Buffer.alloc(32, 9);
    // The module object pagination.ts calls through (an `import * as` here would be a copy).
    const fs = jest.requireActual<typeof NodeFs>('node:fs');
    const link = fs.linkSync;
    jest.spyOn(fs, 'linkSync').mockImplementationOnce((from, to) => {
      writeFileSync(file, theirs, { mode: 0o600 });
      link(from, to);
    });
    const codec = CursorCodec.fromKeyFile(file);
    expect(readFileSync(file)).toEqual(theirs);
    expect(new CursorCodec(theirs).decode(codec.encode('n', 1))).toEqual({ v: 2, c: 'n', k: 1 });
    expect(readdirSync(dir)).toEqual(['cursor.key']);
  });

  it('refuses a file that is not a key, without showing what it holds', () => {
    const file = join(dir, 'cursor.key');
    writeFileSync(file, 'secret-ish text');
    expect(() => CursorCodec.fromKeyFile(file)).toThrow(/holds 15 bytes, not 32/);
    expect(() => CursorCodec.fromKeyFile(file)).not.toThrow(/secret-ish/);
  });
});

describe('CursorCodec.fromServiceKeys', () => {
  const secretsKey = randomBytes(32);

  it('with SECRETS_KEY: a cursor from one instance pages on another, and not on a deployment with another key', () => {
    const a = CursorCodec.fromServiceKeys(ServiceKeys.fromSecretsKey(Buffer.from(secretsKey)));
    const b = CursorCodec.fromServiceKeys(ServiceKeys.fromSecretsKey(Buffer.from(secretsKey)));
    const cursor = a.encode('entities', 'abc');
    expect(b.decode(cursor)).toEqual({ v: 2, c: 'entities', k: 'abc' });
    expect(CursorCodec.fromServiceKeys(ServiceKeys.fromSecretsKey(randomBytes(32))).decode(cursor)).toBeNull();
    // Signed with a derived key, not with SECRETS_KEY itself.
    expect(new CursorCodec(secretsKey).decode(cursor)).toBeNull();
  });

  it('during a rotation accepts cursors signed under SECRETS_KEY_PREVIOUS, and signs with the new key', () => {
    const next = randomBytes(32);
    const before = CursorCodec.fromServiceKeys(ServiceKeys.fromSecretsKey(secretsKey)).encode('entities', 'abc');
    const rotated = CursorCodec.fromServiceKeys(ServiceKeys.fromSecretsKey(next, secretsKey));
    expect(rotated.decode(before)).toEqual({ v: 2, c: 'entities', k: 'abc' });
    const after = rotated.encode('entities', 'abd');
    expect(CursorCodec.fromServiceKeys(ServiceKeys.fromSecretsKey(next)).decode(after)).not.toBeNull();
    expect(CursorCodec.fromServiceKeys(ServiceKeys.fromSecretsKey(next)).decode(before)).toBeNull();
  });

  it('without SECRETS_KEY: DATA_DIR/cursor.key signs as it always has, so cursors issued before stay valid', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cursor-key-'));
    try {
      const file = join(dir, 'cursor.key');
      const issuedBefore = CursorCodec.fromKeyFile(file).encode('entities', 'abc');
      expect(CursorCodec.fromServiceKeys(ServiceKeys.fromKeyFile(file)).decode(issuedBefore)).toEqual({ v: 2, c: 'entities', k: 'abc' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('pageRequest', () => {
  it('defaults to 50 items from the start', () => {
    expect(pageRequest({}, 'entities', 'string', cursors)).toEqual({ limit: 50, after: null, cursors });
  });

  it('takes a limit from 1 to 200 and a cursor of the same collection', () => {
    const cursor = cursors.encode('entities', 'abc');
    expect(pageRequest({ limit: '1', cursor }, 'entities', 'string', cursors)).toEqual({ limit: 1, after: 'abc', cursors });
    expect(pageRequest({ limit: '200' }, 'entities', 'string', cursors).limit).toBe(200);
  });

  it.each(['0', '201', '-1', '1.5', 'ten', '', ' 5', '1000'])('refuses limit %j naming limit', (limit) => {
    expect(fieldsOf(() => pageRequest({ limit }, 'entities', 'string', cursors))).toEqual(['limit']);
  });

  it('refuses a cursor of another collection or with another kind of key, naming cursor', () => {
    expect(fieldsOf(() => pageRequest({ cursor: cursors.encode('tasks', 'abc') }, 'entities', 'string', cursors))).toEqual(['cursor']);
    expect(fieldsOf(() => pageRequest({ cursor: cursors.encode('entities', 3) }, 'entities', 'string', cursors))).toEqual(['cursor']);
    expect(fieldsOf(() => pageRequest({ cursor: cursors.encode('h', 'x') }, 'h', 'number', cursors))).toEqual(['cursor']);
  });

  it('refuses a cursor another codec issued (another DATA_DIR), naming cursor', () => {
    const cursor = CursorCodec.random().encode('entities', 'abc');
    expect(fieldsOf(() => pageRequest({ cursor }, 'entities', 'string', cursors))).toEqual(['cursor']);
  });

  it('lists a bad limit and a bad cursor together', () => {
    expect(fieldsOf(() => pageRequest({ limit: '0', cursor: 'zzz' }, 'entities', 'string', cursors))).toEqual(['limit', 'cursor']);
  });
});

describe('PageQueryDto', () => {
  const errorsOf = (query: object) =>
    validateSync(plainToInstance(PageQueryDto, query)).map((e) => [e.property, Object.values(e.constraints ?? {})[0]]);

  it('accepts an absent limit and cursor, a valid limit and a cursor of any key (the form only: pageRequest checks the tag)', () => {
    expect(errorsOf({})).toEqual([]);
    expect(errorsOf({ limit: '10', cursor: cursors.encode('x', 'y') })).toEqual([]);
    expect(errorsOf({ cursor: CursorCodec.random().encode('x', 'y') })).toEqual([]);
  });

  it('names a bad limit, a malformed cursor and a repeated parameter', () => {
    expect(errorsOf({ limit: '500', cursor: 'bad!' })).toEqual([
      ['limit', 'limit must be a whole number from 1 to 200'],
      ['cursor', expect.stringContaining('cursor is not a cursor this service issued')],
    ]);
    for (const cursor of ['x', b64({ v: 1, c: 'x', k: 'y' }), withTag(Buffer.alloc(16), { v: 2, c: 'x' })]) {
      expect(errorsOf({ cursor }).map(([field]) => field)).toEqual(['cursor']);
    }
    expect(errorsOf({ limit: ['1', '2'] }).map(([field]) => field)).toEqual(['limit']);
  });
});

describe('toPage', () => {
  it('gives a next cursor, signed by the request\'s codec, only when there is one more item than the limit', () => {
    const request = { limit: 2, after: null, cursors };
    expect(toPage([1, 2], request, 'n', (n) => n)).toEqual({ data: [1, 2], next_cursor: null });
    const page = toPage([1, 2, 3], request, 'n', (n) => n);
    expect(page.data).toEqual([1, 2]);
    expect(cursors.decode(page.next_cursor)).toMatchObject({ c: 'n', k: 2 });
    expect(CursorCodec.random().decode(page.next_cursor)).toBeNull();
  });
});

describe('keysetPage', () => {
  let db: Database.Database;
  beforeEach(() => {
    db = new Database(':memory:');
    db.exec('CREATE TABLE things (id TEXT PRIMARY KEY, account_id TEXT, color TEXT)');
    const insert = db.prepare('INSERT INTO things VALUES (?, ?, ?)');
    for (let i = 0; i < 7; i++) insert.run(`id-${i}`, i % 2 === 0 ? 'a' : 'b', i < 3 ? 'red' : 'blue');
  });
  afterEach(() => db.close());

  const list = (after: string | null, color?: string) =>
    keysetPage<{ id: string; color: string }, string>(db, {
      table: 'things',
      where: [
        ['account_id = ?', 'a'],
        ['color = ?', color],
      ],
      page: { limit: 2, after, cursors },
      collection: 'things',
      map: (row) => row.id,
    });

  it('walks the account\'s rows in key order, page by page, skipping absent filters', () => {
    const seen: string[] = [];
    let after: string | null = null;
    for (let i = 0; i < 5; i++) {
      const page = list(after);
      seen.push(...page.data);
      if (!page.next_cursor) break;
      after = pageRequest<string>({ cursor: page.next_cursor }, 'things', 'string', cursors).after;
    }
    expect(seen).toEqual(['id-0', 'id-2', 'id-4', 'id-6']);
  });

  it('applies a present filter', () => {
    expect(list(null, 'blue')).toEqual({ data: ['id-4', 'id-6'], next_cursor: null });
  });

  it('keeps working when the table is dropped and made again (a projection rebuild)', () => {
    expect(list(null).data).toHaveLength(2);
    db.exec('DROP TABLE things; CREATE TABLE things (id TEXT PRIMARY KEY, account_id TEXT, color TEXT)');
    expect(list(null)).toEqual({ data: [], next_cursor: null });
  });
});
