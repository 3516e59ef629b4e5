import Database from 'better-sqlite3';
import { MultiRowInsert } from './multi-row-insert';

describe('MultiRowInsert', () => {
  const rows = (db: Database.Database) => db.prepare('SELECT rowid, * FROM kv ORDER BY rowid').all();
  const setup = () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE kv (k TEXT NOT NULL UNIQUE, v TEXT NOT NULL, n INTEGER)');
    return db;
  };

  it('leaves the rows, numbered in order, that one INSERT per row leaves (a conflict clause per row)', () => {
    const tail = 'ON CONFLICT (k) DO UPDATE SET v = excluded.v || v';
    const one = setup();
    const many = setup();
    const insert = new MultiRowInsert('INSERT INTO kv (k, v, n)', 3, tail, 4);
    try {
      // Keys repeat within a statement's rows and across statements.
      const added = Array.from({ length: 23 }, (_, i) => [`k${Math.floor(i / 2) % 7}`, `v${i}`, i] as const);
      const oneByOne = (row: (typeof added)[number]) =>
        one.prepare(`INSERT INTO kv (k, v, n) VALUES (?, ?, ?) ${tail}`).run(...row);
      for (const row of added) insert.add(many, ...row);
      // 5 full statements are written; the last 3 rows wait for flush.
      added.slice(0, 20).forEach(oneByOne);
      expect(rows(many)).toEqual(rows(one));
      added.slice(20).forEach(oneByOne);
      insert.flush(many);
      expect(rows(many)).toEqual(rows(one));
      insert.flush(many);
      expect(rows(many)).toEqual(rows(one));
    } finally {
      one.close();
      many.close();
    }
  });

  it('writes a row run at once after the rows still waiting, so each keeps its place', () => {
    const db = setup();
    const insert = new MultiRowInsert('INSERT INTO kv (k, v, n)', 3, '', 4);
    try {
      insert.add(db, 'a', 'waiting', 1);
      insert.run(db, 'b', 'at once', 2);
      expect(rows(db)).toEqual([
        { rowid: 1, k: 'a', v: 'waiting', n: 1 },
        { rowid: 2, k: 'b', v: 'at once', n: 2 },
      ]);
    } finally {
      db.close();
    }
  });

  it('forgets the rows not yet written when cleared', () => {
    const db = setup();
    const insert = new MultiRowInsert('INSERT INTO kv (k, v, n)', 3);
    try {
      insert.add(db, 'a', 'rolled back', null);
      insert.clear();
      insert.add(db, 'b', 'kept', 1);
      insert.flush(db);
      expect(db.prepare('SELECT k, v, n FROM kv').all()).toEqual([{ k: 'b', v: 'kept', n: 1 }]);
    } finally {
      db.close();
    }
  });
});
