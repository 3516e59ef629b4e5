import { hash, randomBytes, scrypt, type ScryptOptions, timingSafeEqual } from 'node:crypto';

/**
 * Secrets, passwords and tokens. Client secrets and access tokens are 256 random bits
 * (base64url, 43 characters). Secrets and passwords are stored as scrypt hashes with a per-secret
 * salt; tokens as SHA-256 (a 256-bit random token cannot be guessed, so a fast hash is enough,
 * and the bearer guard looks tokens up by their hash).
 */
export const SCRYPT = { N: 16384, r: 8, p: 1, keyLength: 32, saltLength: 16 } as const;
const MAXMEM = 64 * 1024 * 1024;

export function generateSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** One-shot `crypto.hash`: a third of `createHash`'s cost, and the bearer guard hashes on every request. */
export function sha256(value: string): string {
  return hash('sha256', value, 'hex');
}

function scryptAsync(secret: string, salt: Buffer, keyLength: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(secret, salt, keyLength, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** `scrypt$N$r$p$<salt base64url>$<hash base64url>` */
export async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(SCRYPT.saltLength);
  const { N, r, p, keyLength } = SCRYPT;
  const key = await scryptAsync(secret, salt, keyLength, { N, r, p, maxmem: MAXMEM });
  return `scrypt$${N}$${r}$${p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** Constant-time comparison; a malformed stored hash verifies nothing. */
export async function verifySecret(secret: string, encoded: string): Promise<boolean> {
  const parts = encoded.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  if (![N, r, p].every((n) => Number.isInteger(n) && n > 0)) return false;
  const salt = Buffer.from(parts[4], 'base64url');
  const expected = Buffer.from(parts[5], 'base64url');
  if (expected.length === 0) return false;
  const actual = await scryptAsync(secret, salt, expected.length, { N, r, p, maxmem: MAXMEM });
  return timingSafeEqual(actual, expected);
}

let dummy: Promise<string> | undefined;
/** The hash an unknown client_id is checked against, so it costs as much time as a wrong secret. */
export function dummyHash(): Promise<string> {
  dummy ??= hashSecret(generateSecret());
  return dummy;
}

/** Constant-time equality of two hex digests of the same length. */
export function digestsEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}
