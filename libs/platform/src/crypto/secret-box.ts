import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

const FORMAT = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const SEALED_PATTERN = /^v1\.([0-9a-f]{8})\.([A-Za-z0-9_-]+)$/;

/** A sealed secret is refused: malformed, sealed under a key this process lacks, or altered. Never holds the plaintext. */
export class SecretBoxError extends Error {
  override readonly name = 'SecretBoxError';
}

/** The key id a sealed secret names: the first 8 hex digits of the SHA-256 of the root key (SECRETS_KEY's bytes). */
export function secretKeyId(root: Uint8Array): string {
  return createHash('sha256').update(root).digest('hex').slice(0, 8);
}

interface BoxKey {
  readonly id: string;
  readonly key: Buffer;
}

/**
 * Encrypts small secrets (webhook signing secrets) for storage in events: AES-256-GCM with a
 * random 12-byte IV, as `v1.<key id>.<base64url(iv | ciphertext | tag)>`. The AES key is derived
 * from the root (HKDF, so the root itself only ever keys derivations); the key id names the root,
 * so after a rotation (SECRETS_KEY_PREVIOUS) each secret is opened with the key it was sealed
 * under and {@link SecretBox.isCurrent} says which to re-seal.
 *
 * `context` is authenticated, not encrypted (GCM's additional data): seal a secret with what it
 * belongs to (e.g. `webhook-endpoint:<id>`) and it cannot be moved to another owner's event.
 *
 * Keys stay in private fields (not in `inspect`, JSON, a log or an error); errors name key ids,
 * never plaintext or ciphertext.
 */
export class SecretBox {
  readonly #current: BoxKey;
  readonly #keys: ReadonlyMap<string, BoxKey>;

  /** `current` seals and opens; `previous` roots only open (keys being rotated out). */
  constructor(current: Uint8Array, previous: readonly Uint8Array[] = []) {
    this.#current = boxKey(current);
    const keys = new Map<string, BoxKey>([[this.#current.id, this.#current]]);
    for (const root of previous) {
      const key = boxKey(root);
      if (!keys.has(key.id)) keys.set(key.id, key);
    }
    this.#keys = keys;
  }

  /** The id of the key that seals: operators match it against `sha256(base64 -d SECRETS_KEY)`. */
  get keyId(): string {
    return this.#current.id;
  }

  seal(plaintext: string, context = ''): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#current.key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const sealed = Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
    return `${FORMAT}.${this.#current.id}.${sealed}`;
  }

  /** The plaintext of `sealed`, checked against the `context` it was sealed with. */
  open(sealed: string, context = ''): string {
    const { id, bytes } = parseSealed(sealed);
    const key = this.#keys.get(id);
    if (!key) {
      const known = [...this.#keys.keys()].join(', ');
      throw new SecretBoxError(
        `This secret was sealed with key ${id}, which this instance does not have (it has ${known}): ` +
          'set SECRETS_KEY_PREVIOUS to the key it was sealed with',
      );
    }
    if (bytes.length < IV_BYTES + TAG_BYTES) throw new SecretBoxError(`This secret sealed with key ${id} is truncated`);
    const decipher = createDecipheriv('aes-256-gcm', key.key, bytes.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    try {
      return Buffer.concat([
        decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new SecretBoxError(
        `This secret does not verify under key ${id}: it was altered, or sealed for another owner`,
      );
    }
  }

  /** Whether `sealed` is under the current key (false: re-seal it after a rotation). */
  isCurrent(sealed: string): boolean {
    return parseSealed(sealed).id === this.#current.id;
  }

  toJSON(): Record<string, never> {
    return {};
  }
}

function boxKey(root: Uint8Array): BoxKey {
  if (root.length !== 32) throw new Error(`a secrets key is 32 bytes, not ${root.length}`);
  return {
    id: secretKeyId(root),
    key: Buffer.from(hkdfSync('sha256', root, Buffer.alloc(0), 'filing-service/secret-box.v1', 32)),
  };
}

function parseSealed(sealed: string): { id: string; bytes: Buffer } {
  const match = typeof sealed === 'string' ? SEALED_PATTERN.exec(sealed) : null;
  // Never echo the input: a plaintext secret passed by mistake must not reach an error or a log.
  if (!match) throw new SecretBoxError('Not a sealed secret (expected v1.<key id>.<base64url>)');
  return { id: match[1], bytes: Buffer.from(match[2], 'base64url') };
}
