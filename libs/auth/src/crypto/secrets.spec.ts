import { digestsEqual, dummyHash, generateSecret, hashSecret, sha256, verifySecret } from './secrets';

describe('secrets', () => {
  it('makes 256-bit base64url secrets, never the same twice', () => {
    const a = generateSecret();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a, 'base64url')).toHaveLength(32);
    expect(generateSecret()).not.toBe(a);
  });

  it('hashes with scrypt and a per-secret salt, and verifies only the right secret', async () => {
    const secret = generateSecret();
    const [h1, h2] = await Promise.all([hashSecret(secret), hashSecret(secret)]);
    expect(h1).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]+$/);
    expect(h1).not.toBe(h2);
    expect(h1).not.toContain(secret);
    await expect(verifySecret(secret, h1)).resolves.toBe(true);
    await expect(verifySecret(secret + 'x', h1)).resolves.toBe(false);
    await expect(verifySecret(secret, 'garbage')).resolves.toBe(false);
    await expect(verifySecret(secret, await dummyHash())).resolves.toBe(false);
  });

  it('compares digests in constant time, refusing different lengths', () => {
    expect(digestsEqual(sha256('a'), sha256('a'))).toBe(true);
    expect(digestsEqual(sha256('a'), sha256('b'))).toBe(false);
    expect(digestsEqual(sha256('a'), 'abcd')).toBe(false);
  });
});
