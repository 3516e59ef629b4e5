import { hkdfSync, randomBytes } from 'node:crypto';
import { KEY_FILE_BYTES, loadOrCreateKeyFile } from './key-file';

/**
 * The service's root secret and the keys derived from it, one per purpose (HKDF-SHA256, the
 * purpose as `info`): a key serves one purpose only, and none of them reveals the root or
 * another. The root is `DATA_DIR/cursor.key` today ({@link ServiceKeys.fromKeyFile}); a
 * cluster-wide `SECRETS_KEY` only has to change where the root comes from. Provided by
 * ResourceApiModule. The root stays in this object (a private field: not in `inspect`, JSON, a
 * log or an error).
 */
export class ServiceKeys {
  readonly #root: Buffer;

  constructor(root: Uint8Array) {
    if (root.length !== KEY_FILE_BYTES) throw new Error(`a root key is ${KEY_FILE_BYTES} bytes, not ${root.length}`);
    this.#root = Buffer.from(root);
  }

  static fromKeyFile(file: string): ServiceKeys {
    return new ServiceKeys(loadOrCreateKeyFile(file));
  }

  /** Fresh random keys: for unit tests, and nothing that must survive a restart. */
  static random(): ServiceKeys {
    return new ServiceKeys(randomBytes(KEY_FILE_BYTES));
  }

  /** The 32-byte key for `purpose` (a fixed name such as `settings.sign-in-csrf`): the same on every start. */
  derive(purpose: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.#root, Buffer.alloc(0), `filing-service/${purpose}`, 32));
  }
}
