import Database from 'better-sqlite3';
import { validateSync } from 'class-validator';
import { plainToInstance } from 'class-transformer';
import { ValidationError } from '../errors/domain-errors';
import { decodeCursor, encodeCursor, keysetPage, PageQueryDto, pageRequest, toPage } from './pagination';

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function fieldsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ValidationError) return err.errors.map((e) => e.field);
    throw err;
  }
  throw new Error('expected a ValidationError');
}

describe('cursors', () => {
  it('round-trip an id or a revision, opaque and URL-safe', () => {
    const id = '0193a5b2-0000-7000-8000-000000000001';
    const cursor = encodeCursor('entities', id);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor)).toEqual({ v: 1, c: 'entities', k: id });
    expect(decodeCursor(encodeCursor('entities/history', 7))).toEqual({ v: 1, c: 'entities/history', k: 7 });
  });

  it.each([
    ['not base64url', 'abc$%'],
    ['empty', ''],
    ['not JSON', Buffer.from('nope').toString('base64url')],
    ['a JSON array', b64([1, 'entities', 'x'])],
    ['another version', b64({ v: 2, c: 'entities', k: 'x' })],
    ['no key', b64({ v: 1, c: 'entities' })],
    ['an extra property', b64({ v: 1, c: 'entities', k: 'x', admin: true })],
    ['a negative revision', b64({ v: 1, c: 'h', k: -1 })],
    ['a fractional revision', b64({ v: 1, c: 'h', k: 1.5 })],
    ['an object key', b64({ v: 1, c: 'h', k: {} })],
    ['too long', 'A'.repeat(2000)],
    ['not a string', 42],
  ])('refuse %s', (_, text) => {
    expect(decodeCursor(text)).toBeNull();
  });
});

describe('pageRequest', () => {
  it('defaults to 50 items from the start', () => {
    expect(pageRequest({}, 'entities', 'string')).toEqual({ limit: 50, after: null });
  });

  it('takes a limit from 1 to 200 and a cursor of the same collection', () => {
    const cursor = encodeCursor('entities', 'abc');
    expect(pageRequest({ limit: '1', cursor }, 'entities', 'string')).toEqual({ limit: 1, after: 'abc' });
    expect(pageRequest({ limit: '200' }, 'entities', 'string').limit).toBe(200);
  });

  it.each(['0', '201', '-1', '1.5', 'ten', '', ' 5', '1000'])('refuses limit %j naming limit', (limit) => {
    expect(fieldsOf(() => pageRequest({ limit }, 'entities', 'string'))).toEqual(['limit']);
  });

  it('refuses a cursor of another collection or with another kind of key, naming cursor', () => {
    expect(fieldsOf(() => pageRequest({ cursor: encodeCursor('tasks', 'abc') }, 'entities', 'string'))).toEqual(['cursor']);
    expect(fieldsOf(() => pageRequest({ cursor: encodeCursor('entities', 3) }, 'entities', 'string'))).toEqual(['cursor']);
    expect(fieldsOf(() => pageRequest({ cursor: encodeCursor('h', 'x') }, 'h', 'number'))).toEqual(['cursor']);
  });

  it('lists a bad limit and a bad cursor together', () => {
    expect(fieldsOf(() => pageRequest({ limit: '0', cursor: 'zzz' }, 'entities', 'string'))).toEqual(['limit', 'cursor']);
  });
});

describe('PageQueryDto', () => {
  const errorsOf = (query: object) =>
    validateSync(plainToInstance(PageQueryDto, query)).map((e) => [e.property, Object.values(e.constraints ?? {})[0]]);

  it('accepts an absent or valid limit and cursor', () => {
    expect(errorsOf({})).toEqual([]);
    expect(errorsOf({ limit: '10', cursor: encodeCursor('x', 'y') })).toEqual([]);
  });

  it('names a bad limit, a bad cursor and a repeated parameter', () => {
    expect(errorsOf({ limit: '500', cursor: 'bad!' })).toEqual([
      ['limit', 'limit must be a whole number from 1 to 200'],
      ['cursor', expect.stringContaining('cursor is not a cursor this service issued')],
    ]);
    expect(errorsOf({ limit: ['1', '2'] }).map(([field]) => field)).toEqual(['limit']);
  });
});

describe('toPage', () => {
  it('gives a next cursor only when there is one more item than the limit', () => {
    const request = { limit: 2, after: null };
    expect(toPage([1, 2], request, 'n', (n) => n)).toEqual({ data: [1, 2], next_cursor: null });
    const page = toPage([1, 2, 3], request, 'n', (n) => n);
    expect(page.data).toEqual([1, 2]);
    expect(decodeCursor(page.next_cursor)).toMatchObject({ c: 'n', k: 2 });
  });
});

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
      page: { limit: 2, after },
      collection: 'things',
      map: (row) => row.id,
    });

  it('walks the account\'s rows in key order, page by page, skipping absent filters', () => {
    const seen: string[] = [];
    let after: string | null = null;
    for (let i = 0; i < 5; i++) {
      const page = list(after);
      seen.push(...page.data);
      if (!page.next_cursor) break;
      after = pageRequest<string>({ cursor: page.next_cursor }, 'things', 'string').after;
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
