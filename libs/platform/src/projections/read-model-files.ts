import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

/**
 * Which read-model database is live. `DATA_DIR/read.db` until a replay publishes a rebuilt one
 * (`read-<stamp>.db`) by rewriting this pointer; the service watches it and swaps databases, so
 * it answers from the old models until the new ones are complete.
 */
export const READ_MODEL_POINTER = 'read-models.current';
const DEFAULT_FILE = 'read.db';
const FILE_NAME = /^read(-[A-Za-z0-9_.]+)?\.db$/;

export function activeReadModelFile(dataDir: string): string {
  const pointer = join(dataDir, READ_MODEL_POINTER);
  if (existsSync(pointer)) {
    const name = readFileSync(pointer, 'utf8').trim();
    if (FILE_NAME.test(name) && existsSync(join(dataDir, name))) return join(dataDir, name);
  }
  return join(dataDir, DEFAULT_FILE);
}

export function newReadModelFile(dataDir: string): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '_').replace(/\..*$/, '');
  return join(dataDir, `read-${stamp}_${process.pid}.db`);
}

/** Atomically makes `file` (in `dataDir`) the live read-model database. */
export function publishReadModelFile(dataDir: string, file: string): void {
  const name = basename(file);
  if (!FILE_NAME.test(name)) throw new Error(`Not a read-model file name: ${name}`);
  const pointer = join(dataDir, READ_MODEL_POINTER);
  const temp = `${pointer}.${process.pid}.tmp`;
  writeFileSync(temp, name + '\n');
  renameSync(temp, pointer);
}

/** Removes a SQLite database with its WAL and shared-memory files. */
export function removeDatabaseFiles(file: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(file + suffix, { force: true });
}

/** Read-model databases left behind by earlier replays (everything but the live one). */
export function staleReadModelFiles(dataDir: string): string[] {
  if (!existsSync(dataDir)) return [];
  const live = basename(activeReadModelFile(dataDir));
  return readdirSync(dataDir)
    .filter((name) => FILE_NAME.test(name) && name !== live)
    .map((name) => join(dataDir, name));
}
