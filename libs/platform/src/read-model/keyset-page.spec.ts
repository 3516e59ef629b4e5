import Database from 'better-sqlite3';
import { CursorCodec } from '../http/cursor-codec';
import { pageRequest } from '../http/page.dto';
import { keysetPage } from './keyset-page';

const cursors = CursorCodec.random();

describe('keysetPage', () => {
  let db: Database.Database;
  beforeEach(() => {
    db = new Database(':memory:');
    db.exec('CREATE TABLE things (id TEXT PRIMARY KEY, account_id TEXT, color TEXT)');
    const insert = db.prepare('INSERT INTO things VALUES (?, ?, ?)');
    for (let i = 0; i < 7; i++) insert.run(`id-${i}`, i % 2 === 0 ? 'a' : 'b', i < 3 ? 'red' : 'blue');
  });
  afterEach(() => db.close());

  const list = (after: string | null, color?: string) =>
    keysetPage<{ id: string; color: string }, string>(db, {
      table: 'things',
      where: [
        ['account_id = ?', 'a'],
        ['color = ?', color],
      ],
      page: { limit: 2, after, cursors },
      collection: 'things',
      map: (row) => row.id,
    });

  it("walks the account's rows in key order, page by page, skipping absent filters", () => {
    const seen: string[] = [];
    let after: string | null = null;
    for (let i = 0; i < 5; i++) {
      const page = list(after);
      seen.push(...page.data);
      if (!page.next_cursor) break;
      after = pageRequest<string>({ cursor: page.next_cursor }, 'things', 'string', cursors).after;
    }
    expect(seen).toEqual(['id-0', 'id-2', 'id-4', 'id-6']);
  });

  it('applies a present filter', () => {
    expect(list(null, 'blue')).toEqual({ data: ['id-4', 'id-6'], next_cursor: null });
  });

  it('keeps working when the table is dropped and made again (a projection rebuild)', () => {
    expect(list(null).data).toHaveLength(2);
    db.exec('DROP TABLE things; CREATE TABLE things (id TEXT PRIMARY KEY, account_id TEXT, color TEXT)');
    expect(list(null)).toEqual({ data: [], next_cursor: null });
  });
});
