import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inImmediateTransaction } from './statements';

describe('inImmediateTransaction', () => {
  let dir: string;
  let db: Database.Database;
  let other: Database.Database;
  const values = (d: Database.Database) => d.prepare('SELECT v FROM t ORDER BY v').pluck().all();

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'statements-'));
    db = new Database(join(dir, 'x.db'));
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (v INTEGER NOT NULL)');
    other = new Database(join(dir, 'x.db'), { timeout: 0 });
  });
  afterEach(() => {
    db.close();
    other.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('commits what the work wrote once it returns: another connection sees it', () => {
    inImmediateTransaction(db, () => {
      db.prepare('INSERT INTO t (v) VALUES (1), (2)').run();
    });
    expect(values(other)).toEqual([1, 2]);
  });

  it('writes nothing when the work throws, and throws its error', () => {
    inImmediateTransaction(db, () => db.prepare('INSERT INTO t (v) VALUES (1)').run());
    expect(() =>
      inImmediateTransaction(db, () => {
        db.prepare('INSERT INTO t (v) VALUES (2)').run();
        throw new Error('halfway');
      }),
    ).toThrow('halfway');
    expect(values(db)).toEqual([1]);
    expect(db.inTransaction).toBe(false);
  });

  it('holds the write lock from its start (BEGIN IMMEDIATE), before the work writes anything', () => {
    let otherWrite: unknown = null;
    inImmediateTransaction(db, () => {
      try {
        other.prepare('INSERT INTO t (v) VALUES (9)').run();
      } catch (err) {
        otherWrite = err;
      }
    });
    expect((otherWrite as { code?: string } | null)?.code).toBe('SQLITE_BUSY');
  });

  it('inside another, is a savepoint: a failing inner work undoes only its own writes', () => {
    inImmediateTransaction(db, () => {
      db.prepare('INSERT INTO t (v) VALUES (1)').run();
      expect(() =>
        inImmediateTransaction(db, () => {
          db.prepare('INSERT INTO t (v) VALUES (2)').run();
          throw new Error('inner');
        }),
      ).toThrow('inner');
      db.prepare('INSERT INTO t (v) VALUES (3)').run();
    });
    expect(values(other)).toEqual([1, 3]);
  });

  it('serves each database handle on its own', () => {
    const second = new Database(':memory:');
    try {
      second.exec('CREATE TABLE t (v INTEGER NOT NULL)');
      inImmediateTransaction(db, () => db.prepare('INSERT INTO t (v) VALUES (1)').run());
      inImmediateTransaction(second, () => second.prepare('INSERT INTO t (v) VALUES (2)').run());
      expect(values(db)).toEqual([1]);
      expect(values(second)).toEqual([2]);
    } finally {
      second.close();
    }
  });
});
