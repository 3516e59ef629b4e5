import { randomBytes, randomUUID } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/** The size of the key in `DATA_DIR/cursor.key`. */
export const KEY_FILE_BYTES = 32;

/**
 * The key in `file`, made on first use: KEY_FILE_BYTES random bytes, mode 0600, written to a temp
 * file and linked into place, so no process ever reads a partial key, and when two start together
 * the second finds the first one's key (EEXIST) and uses it.
 */
export function loadOrCreateKeyFile(file: string): Buffer {
  const existing = readKeyFile(file);
  if (existing) return existing;
  const temp = `${file}.${process.pid}.${randomUUID()}.tmp`;
  const fd = openSync(temp, 'wx', 0o600);
  try {
    writeSync(fd, randomBytes(KEY_FILE_BYTES));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(temp, file);
    syncDirectory(dirname(file));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    unlinkSync(temp);
  }
  const key = readKeyFile(file);
  if (!key) throw new Error(`key file ${file} vanished while it was being made`);
  return key;
}

/** The key in `file`, or null when there is none yet; a file that is not a key is an error. */
function readKeyFile(file: string): Buffer | null {
  let key: Buffer;
  try {
    key = readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  if (key.length !== KEY_FILE_BYTES) {
    throw new Error(
      `key file ${file} holds ${key.length} bytes, not ${KEY_FILE_BYTES}: remove it to make a new key ` +
        '(the pagination cursors and sign-in forms given out so far then stop working)',
    );
  }
  return key;
}

function syncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
