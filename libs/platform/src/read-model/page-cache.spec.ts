import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CursorCodec } from '../http/cursor-codec';
import { keysetPageJson } from './keyset-page';

/** Each call reads the table (through keysetPageJson, as a family's list does) unless a page is served from memory. */
describe('keysetPageJson: pages kept while the database is unchanged', () => {
  let dir: string;
  let db: Database.Database;
  const cursors = CursorCodec.random();
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'page-cache-'));
    db = new Database(join(dir, 'read.db'));
    db.pragma('journal_mode = WAL');
    db.exec(`
      CREATE TABLE things (id TEXT PRIMARY KEY, account_id TEXT, color TEXT, api_json TEXT);
      CREATE TABLE checkpoints (name TEXT PRIMARY KEY);
      INSERT INTO checkpoints VALUES ('things');
    `);
    for (const [id, account] of [
      ['id-1', 'a'],
      ['id-2', 'a'],
      ['id-3', 'b'],
    ])
      insert(id, account);
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function insert(id: string, account: string, on = db): void {
    on.prepare('INSERT INTO things VALUES (?, ?, ?, ?)').run(id, account, 'red', JSON.stringify({ id }));
  }

  const list = (account: string, options: { color?: string; codec?: CursorCodec; limit?: number } = {}) =>
    JSON.parse(
      keysetPageJson(db, {
        table: 'things',
        where: [
          ['account_id = ?', account],
          ['color = ?', options.color],
        ],
        page: { limit: options.limit ?? 50, after: null, cursors: options.codec ?? cursors },
        collection: 'things',
        jsonColumn: 'api_json',
      }).toString(),
    ) as { data: { id: string }[]; next_cursor: string | null };
  const ids = (page: { data: { id: string }[] }) => page.data.map((t) => t.id);

  it('answers each account its own rows, asked alternately', () => {
    for (let i = 0; i < 3; i++) {
      expect(ids(list('a'))).toEqual(['id-1', 'id-2']);
      expect(ids(list('b'))).toEqual(['id-3']);
      expect(ids(list('c'))).toEqual([]);
    }
  });

  it('reads again after a row is inserted, updated or deleted through the same handle', () => {
    expect(ids(list('a'))).toEqual(['id-1', 'id-2']);
    insert('id-4', 'a');
    expect(ids(list('a'))).toEqual(['id-1', 'id-2', 'id-4']);
    db.prepare('UPDATE things SET api_json = \'{"id":"id-4","v":1}\' WHERE id = \'id-4\'').run();
    expect(list('a').data[2]).toEqual({ id: 'id-4', v: 1 });
    db.prepare("DELETE FROM things WHERE id = 'id-1'").run();
    expect(ids(list('a'))).toEqual(['id-2', 'id-4']);
  });

  it('reads again after a write inside a transaction, and after one rolled back', () => {
    expect(ids(list('a'))).toEqual(['id-1', 'id-2']);
    db.transaction(() => insert('id-5', 'a'))();
    expect(ids(list('a'))).toEqual(['id-1', 'id-2', 'id-5']);
    expect(() =>
      db.transaction(() => {
        insert('id-6', 'a');
        throw new Error('rolled back');
      })(),
    ).toThrow('rolled back');
    expect(ids(list('a'))).toEqual(['id-1', 'id-2', 'id-5']);
  });

  it('reads again after a projection reset: its tables dropped and made again, its checkpoint row deleted', () => {
    expect(ids(list('a'))).toEqual(['id-1', 'id-2']);
    db.transaction(() => {
      db.exec(
        'DROP TABLE things; CREATE TABLE things (id TEXT PRIMARY KEY, account_id TEXT, color TEXT, api_json TEXT)',
      );
      db.prepare("DELETE FROM checkpoints WHERE name = 'things'").run();
    })();
    expect(ids(list('a'))).toEqual([]);
  });

  it('keeps filters, limits and the cursor codec apart', () => {
    expect(ids(list('a', { color: 'red' }))).toEqual(['id-1', 'id-2']);
    expect(ids(list('a', { color: 'blue' }))).toEqual([]);
    const short = list('a', { limit: 1 });
    expect(ids(short)).toEqual(['id-1']);
    const another = CursorCodec.random();
    const cursor = list('a', { limit: 1, codec: another }).next_cursor;
    expect(another.decode(cursor)?.k).toBe('id-1');
    expect(cursors.decode(cursor)).toBeNull();
    expect(cursors.decode(short.next_cursor)?.k).toBe('id-1');
  });
});
