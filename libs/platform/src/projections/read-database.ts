import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { checkpointOffTheLoop, type WalCheckpointer } from './wal-checkpointer';

/** Opens a read database (`DATA_DIR/read.db`, a rebuild's scratch file, or `:memory:`) with its checkpoint table. */
export function openReadDatabase(file: string, bulk = false): Database.Database {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file);
  if (bulk) {
    // A rebuild writes a scratch file that is published only once complete: a crash throws it
    // away, so it needs neither a journal nor fsync. The service reopens it in WAL mode.
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    // For a load without the writer thread (its rows then go through this connection).
    db.pragma('cache_size = -262144');
  } else {
    db.pragma('journal_mode = WAL');
  }
  // Read models are rebuildable, and the checkpoint rides in the same transaction as the rows.
  if (!bulk) db.pragma('synchronous = NORMAL');
  // A row rewritten in place (a webhook secret re-sealed under a new SECRETS_KEY) leaves no old
  // bytes in its page: FAST zeroes them where that costs no extra I/O.
  if (!bulk) db.pragma('secure_delete = FAST');
  db.pragma('busy_timeout = 5000');
  db.exec(`CREATE TABLE IF NOT EXISTS projection_checkpoints (
    name TEXT PRIMARY KEY, version INTEGER NOT NULL, position TEXT)`);
  return db;
}

/**
 * The runner's read database, swapped for a rebuilt one by `open` again. A live one (WAL) is
 * checkpointed by a thread, off the event loop.
 */
export class ReadDatabase {
  private current: Database.Database;
  private walCheckpointer: WalCheckpointer | null = null;

  constructor(
    file: string,
    bulk: boolean,
    private readonly warn: (message: string) => void,
  ) {
    this.current = this.openFile(file, bulk);
  }

  get db(): Database.Database {
    return this.current;
  }

  /** Opens `file` in place of the current one, which it returns (still open: the caller closes it). */
  open(file: string): Database.Database {
    const old = this.current;
    this.current = this.openFile(file, false);
    return old;
  }

  async close(): Promise<void> {
    await this.walCheckpointer?.stop();
    this.walCheckpointer = null;
    if (this.current.open) this.current.close();
  }

  private openFile(file: string, bulk: boolean): Database.Database {
    // The old file stays where it is (a swap closes it after): no need to wait for the thread.
    void this.walCheckpointer?.stop();
    this.walCheckpointer = null;
    const db = openReadDatabase(file, bulk);
    if (!bulk && file !== ':memory:') {
      this.walCheckpointer = checkpointOffTheLoop(db, file, (message) => {
        this.warn(`Read-model WAL checkpoint: ${message}`);
      });
    }
    return db;
  }
}
