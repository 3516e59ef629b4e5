import Database from 'better-sqlite3';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { threadNames, threadsNamed } from '../../../../test/support/thread-names';
import { eventually } from '../../../../test/support/webhooks';
import { WalCheckpointer } from './wal-checkpointer';

describe('WalCheckpointer', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'wal-checkpointer-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('copies what the WAL holds into the database file, from a thread named wal-checkpoint', async () => {
    const file = join(dir, 'read.db');
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('wal_autocheckpoint = 0');
    db.exec('CREATE TABLE t (x TEXT)');
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    db.transaction(() => {
      for (let i = 0; i < 1_000; i++) insert.run('x'.repeat(1_000));
    })();
    const before = statSync(file).size;
    // The rows are in the WAL alone until something checkpoints it.
    expect(before).toBeLessThan(100_000);
    // Specs run before this one in the same Jest worker may have left checkpointer threads of their own.
    const othersRunning = threadsNamed('wal-checkpoint');
    const errors: string[] = [];
    const checkpointer = new WalCheckpointer(file, (message) => errors.push(message), 10);
    try {
      await eventually(() => (statSync(file).size > 1_000_000 ? true : undefined), 10, 5_000);
      expect(threadNames() ?? ['wal-checkpoint']).toContain('wal-checkpoint');
    } finally {
      await checkpointer.stop();
      db.close();
    }
    expect(errors).toEqual([]);
    // stop() resolves once its thread is gone.
    expect(threadsNamed('wal-checkpoint')).toBeLessThanOrEqual(othersRunning);
  });
});
