import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type * as NodeFs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { ServiceKeys } from '../crypto/service-keys';
import { validationFields } from '../testing/domain';
import { CursorCodec } from './cursor-codec';
import { pageRequest } from './page.dto';

const cursors = CursorCodec.random();
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
/** A token as the codec lays it out (16-byte tag, then the JSON body), with the tag given. */
const withTag = (tag: Buffer, body: unknown) =>
  Buffer.concat([tag, Buffer.from(JSON.stringify(body))]).toString('base64url');

describe('cursors', () => {
  it('round-trip an id or a revision, opaque and URL-safe', () => {
    const id = '0193a5b2-0000-7000-8000-000000000001';
    const cursor = cursors.encode('entities', id);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(cursors.decode(cursor)).toEqual({ v: 2, c: 'entities', k: id });
    expect(cursors.decode(cursors.encode('entities/history', 7))).toEqual({ v: 2, c: 'entities/history', k: 7 });
  });

  it('issue the same cursor for the same key, remembered or not', () => {
    const codec = CursorCodec.random();
    const first = codec.encode('entities', 'a');
    for (let i = 0; i < 2_000; i++) codec.encode('entities', `k${i}`);
    expect(codec.encode('entities', 'a')).toBe(first);
    expect(codec.encode('entities', 'a')).toBe(first);
    expect(codec.decode(first)).toEqual({ v: 2, c: 'entities', k: 'a' });
    expect(codec.decode(codec.encode('entities', 'b'))).toEqual({ v: 2, c: 'entities', k: 'b' });
    // Remembered or not, another codec's cursor is refused.
    expect(CursorCodec.random().decode(first)).toBeNull();
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
    expect(validationFields(() => pageRequest({ cursor: text }, 'entities', 'string', cursors))).toEqual(['cursor']);
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
    expect(
      new CursorCodec(Buffer.alloc(32)).decode(Buffer.concat([tagOfOtherKey, body]).toString('base64url')),
    ).toEqual({
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
    // The module object key-file.ts calls through (an `import * as` here would be a copy).
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
      expect(CursorCodec.fromServiceKeys(ServiceKeys.fromKeyFile(file)).decode(issuedBefore)).toEqual({
        v: 2,
        c: 'entities',
        k: 'abc',
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
