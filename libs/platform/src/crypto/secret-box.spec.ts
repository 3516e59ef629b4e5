import { createHash, randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { SecretBox, SecretBoxError, secretKeyId } from './secret-box';

describe('SecretBox', () => {
  const secret = 'whsec_c2VjcmV0LXNpZ25pbmcta2V5LW9mLWFuLWVuZHBvaW50';
  const oldRoot = randomBytes(32);
  const newRoot = randomBytes(32);

  function errorOf(fn: () => unknown): SecretBoxError {
    try {
      fn();
    } catch (err) {
      expect(err).toBeInstanceOf(SecretBoxError);
      return err as SecretBoxError;
    }
    throw new Error('expected a SecretBoxError');
  }

  it('seals as v1.<key id>.<base64url>, naming the key by the first 8 hex of its SHA-256, and opens it again', () => {
    const box = new SecretBox(oldRoot);
    const sealed = box.seal(secret, 'webhook-endpoint:e1');
    const id = createHash('sha256').update(oldRoot).digest('hex').slice(0, 8);
    expect(sealed).toMatch(new RegExp(`^v1\\.${id}\\.[A-Za-z0-9_-]+$`));
    expect(box.keyId).toBe(id);
    expect(secretKeyId(oldRoot)).toBe(id);
    expect(sealed).not.toContain(secret);
    expect(Buffer.from(sealed.split('.')[2], 'base64url').includes(Buffer.from(secret))).toBe(false);
    expect(box.open(sealed, 'webhook-endpoint:e1')).toBe(secret);
    // A fresh IV each time: the same secret never seals the same way twice.
    expect(box.seal(secret, 'webhook-endpoint:e1')).not.toBe(sealed);
  });

  it('opens a secret sealed by another instance with the same key (SECRETS_KEY on every instance)', () => {
    const sealed = new SecretBox(Buffer.from(newRoot)).seal(secret);
    expect(new SecretBox(Buffer.from(newRoot)).open(sealed)).toBe(secret);
  });

  it('refuses a secret moved to another owner (the context is authenticated), or altered, without showing it', () => {
    const box = new SecretBox(oldRoot);
    const sealed = box.seal(secret, 'webhook-endpoint:e1');
    const moved = errorOf(() => box.open(sealed, 'webhook-endpoint:e2'));
    expect(moved.message).toContain(box.keyId);
    expect(moved.message).toMatch(/altered, or sealed for another owner/);

    const bytes = Buffer.from(sealed.split('.')[2], 'base64url');
    bytes[14] ^= 1;
    const altered = `v1.${box.keyId}.${bytes.toString('base64url')}`;
    expect(errorOf(() => box.open(altered, 'webhook-endpoint:e1')).message).toMatch(/does not verify/);
    for (const err of [moved, errorOf(() => box.open(altered, 'webhook-endpoint:e1'))]) {
      expect(err.message).not.toContain(secret);
      expect(err.message).not.toContain(sealed.split('.')[2]);
    }
  });

  it('rotation: a box with the new key and the previous one opens both, seals with the new one, and says which to re-seal', () => {
    const before = new SecretBox(oldRoot).seal(secret, 'c');
    const rotated = new SecretBox(newRoot, [oldRoot]);
    expect(rotated.keyId).toBe(secretKeyId(newRoot));
    expect(rotated.open(before, 'c')).toBe(secret);
    expect(rotated.isCurrent(before)).toBe(false);
    const after = rotated.seal(secret, 'c');
    expect(after.split('.')[1]).toBe(secretKeyId(newRoot));
    expect(rotated.isCurrent(after)).toBe(true);
    // The old key alone cannot open what the new one sealed: only the keys it holds.
    const unknown = errorOf(() => new SecretBox(oldRoot).open(after, 'c'));
    expect(unknown.message).toBe(
      `This secret was sealed with key ${secretKeyId(newRoot)}, which this instance does not have (it has ${secretKeyId(oldRoot)}): ` +
        'set SECRETS_KEY_PREVIOUS to the key it was sealed with',
    );
  });

  it('once the previous key is dropped, a secret still sealed under it names that key', () => {
    const before = new SecretBox(oldRoot).seal(secret);
    const err = errorOf(() => new SecretBox(newRoot).open(before));
    expect(err.message).toContain(`sealed with key ${secretKeyId(oldRoot)}`);
    expect(err.message).not.toContain(secret);
  });

  it('refuses what is not a sealed secret without repeating it (a plaintext secret passed by mistake)', () => {
    const box = new SecretBox(oldRoot);
    for (const text of [secret, '', 'v1.zz.abc', `v2.${box.keyId}.abc`, `v1.${box.keyId}.`]) {
      const err = errorOf(() => box.open(text));
      expect(err.message).toBe('Not a sealed secret (expected v1.<key id>.<base64url>)');
    }
    expect(errorOf(() => box.open(`v1.${box.keyId}.AAAA`)).message).toMatch(/truncated/);
  });

  it('keeps its keys out of inspect and JSON, and refuses a key of the wrong size', () => {
    const root = Buffer.alloc(32, 7);
    const box = new SecretBox(root);
    expect(inspect(box, { depth: 5 })).not.toContain('7, 7, 7');
    expect(JSON.stringify(box)).toBe('{}');
    expect(() => new SecretBox(Buffer.alloc(16))).toThrow('32 bytes, not 16');
  });
});
