import { hkdfSync, randomBytes } from 'node:crypto';
import { KEY_FILE_BYTES, loadOrCreateKeyFile } from './key-file';
import { SecretBox } from './secret-box';

/** Where the root came from: `SECRETS_KEY` (the same on every instance) or a key file in DATA_DIR. */
export type RootKeySource = 'secrets-key' | 'key-file';

/**
 * The service's root secret and the keys derived from it, one per purpose (HKDF-SHA256, the
 * purpose as `info`): a key serves one purpose only, and none of them reveals the root or
 * another. The root is `SECRETS_KEY` when set ({@link ServiceKeys.fromSecretsKey}: every instance
 * derives the same keys, so a cursor or sign-in form of one instance works on another), else
 * `DATA_DIR/cursor.key` ({@link ServiceKeys.fromKeyFile}, made on first start). `previous` roots
 * (`SECRETS_KEY_PREVIOUS`) are still accepted where something sealed or signed earlier is checked.
 * Provided by ResourceApiModule. Roots stay in this object (private fields: not in `inspect`,
 * JSON, a log or an error).
 */
export class ServiceKeys {
  readonly #root: Buffer;
  readonly #previous: readonly Buffer[];
  readonly source: RootKeySource;

  constructor(
    root: Uint8Array,
    options: { readonly previous?: readonly Uint8Array[]; readonly source?: RootKeySource } = {},
  ) {
    for (const key of [root, ...(options.previous ?? [])]) {
      if (key.length !== KEY_FILE_BYTES) throw new Error(`a root key is ${KEY_FILE_BYTES} bytes, not ${key.length}`);
    }
    this.#root = Buffer.from(root);
    this.#previous = (options.previous ?? []).map((key) => Buffer.from(key)).filter((key) => !key.equals(this.#root));
    this.source = options.source ?? 'key-file';
  }

  static fromKeyFile(file: string): ServiceKeys {
    return new ServiceKeys(loadOrCreateKeyFile(file), { source: 'key-file' });
  }

  /** `SECRETS_KEY` (and `SECRETS_KEY_PREVIOUS`, being rotated out), decoded. */
  static fromSecretsKey(current: Uint8Array, previous: Uint8Array | null = null): ServiceKeys {
    return new ServiceKeys(current, { previous: previous ? [previous] : [], source: 'secrets-key' });
  }

  /** Fresh random keys: for unit tests, and nothing that must survive a restart. */
  static random(): ServiceKeys {
    return new ServiceKeys(randomBytes(KEY_FILE_BYTES));
  }

  /** The 32-byte key for `purpose` (a fixed name such as `settings.sign-in-csrf`): the same on every start. */
  derive(purpose: string): Buffer {
    return derive(this.#root, purpose);
  }

  /** The key for `purpose` from the current root, then from each previous one: what a check accepts during a rotation. */
  deriveAccepted(purpose: string): Buffer[] {
    return [this.#root, ...this.#previous].map((root) => derive(root, purpose));
  }

  /** Seals with the current root, opens with it or a previous one (crypto/secret-box.ts). */
  secretBox(): SecretBox {
    return new SecretBox(this.#root, this.#previous);
  }

  /**
   * The root itself, for the one legacy use that predates derivation: a key-file deployment signs
   * pagination cursors with `cursor.key`'s own bytes, so cursors it issued stay valid.
   */
  legacyRoot(): Buffer {
    return Buffer.from(this.#root);
  }

  toJSON(): Record<string, never> {
    return {};
  }
}

function derive(root: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', root, Buffer.alloc(0), `filing-service/${purpose}`, 32));
}
