import { type DynamicModule, Module, type OnApplicationShutdown } from '@nestjs/common';
import Database from 'better-sqlite3';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * One service process per DATA_DIR (CONTRACT.md §6). Two would both run the projections, the
 * webhook fan-out and the dispatcher on the same files.
 *
 * The lock is an exclusive SQLite transaction on `DATA_DIR/service.lock`, held for the process's
 * life. SQLite takes it with an fcntl lock, which the kernel drops when the process dies however
 * it dies, so a SIGKILLed service never blocks the next start (a pid file checked with kill(pid, 0)
 * would: pids are reused, and in a container the restarted service is pid 1 again). SQLite also
 * tracks its locks per connection within a process, so a second service in the same process (the
 * in-process e2e services) is refused too. better-sqlite3 is already the store's driver: no new
 * dependency. The holder writes its pid to `service.pid` once it holds the lock; that file only
 * names the holder in the refusal, it decides nothing.
 */
export class DataDirLockedError extends Error {
  override readonly name = 'DataDirLockedError';
  constructor(
    readonly dataDir: string,
    readonly holderPid: number | null,
  ) {
    super(
      `DATA_DIR ${dataDir} is in use by another service process (${holderPid === null ? 'pid unknown' : `pid ${holderPid}`}): ` +
        'one service process per DATA_DIR. Stop that process first, or give this one a DATA_DIR of its own.',
    );
  }
}

export interface DataDirLock {
  /** Idempotent. */
  release(): void;
}

/** Takes the DATA_DIR lock (creating the directory) or throws DataDirLockedError at once. */
export function lockDataDir(dataDir: string): DataDirLock {
  mkdirSync(dataDir, { recursive: true });
  const pidFile = join(dataDir, 'service.pid');
  // timeout 0: refuse at once instead of waiting for the holder (better-sqlite3 waits 5 s by default).
  const db = new Database(join(dataDir, 'service.lock'), { timeout: 0 });
  try {
    db.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY') throw new DataDirLockedError(dataDir, readPid(pidFile));
    throw err;
  }
  // Written whole or not at all (rename), so a contender never reads half a pid.
  writeFileSync(`${pidFile}.${process.pid}`, `${process.pid}\n`);
  renameSync(`${pidFile}.${process.pid}`, pidFile);
  return {
    release() {
      if (!db.open) return;
      // Removed while still held, so it never removes the next holder's file.
      rmSync(pidFile, { force: true });
      db.close();
    },
  };
}

function readPid(pidFile: string): number | null {
  try {
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/**
 * The module that releases `lock` when the app closes: at onApplicationShutdown, which Nest runs
 * after every beforeApplicationShutdown hook, where the projections and webhook workers stop.
 */
export function dataDirLockModule(lock: DataDirLock): DynamicModule {
  return {
    module: DataDirLockModule,
    providers: [
      {
        provide: DATA_DIR_LOCK,
        useValue: { onApplicationShutdown: () => lock.release() } satisfies OnApplicationShutdown,
      },
    ],
  };
}

@Module({})
class DataDirLockModule {}

const DATA_DIR_LOCK = Symbol('DATA_DIR_LOCK');
