import { validateSync } from 'class-validator';
import { plainToInstance } from 'class-transformer';
import { validationFields } from '../testing/domain';
import { CursorCodec } from './cursor-codec';
import { PageQueryDto, pageRequest, toPage } from './page.dto';

const cursors = CursorCodec.random();

describe('pageRequest', () => {
  it('defaults to 50 items from the start', () => {
    expect(pageRequest({}, 'entities', 'string', cursors)).toEqual({ limit: 50, after: null, cursors });
  });

  it('takes a limit from 1 to 200 and a cursor of the same collection', () => {
    const cursor = cursors.encode('entities', 'abc');
    expect(pageRequest({ limit: '1', cursor }, 'entities', 'string', cursors)).toEqual({
      limit: 1,
      after: 'abc',
      cursors,
    });
    expect(pageRequest({ limit: '200' }, 'entities', 'string', cursors).limit).toBe(200);
  });

  it.each(['0', '201', '-1', '1.5', 'ten', '', ' 5', '1000'])('refuses limit %j naming limit', (limit) => {
    expect(validationFields(() => pageRequest({ limit }, 'entities', 'string', cursors))).toEqual(['limit']);
  });

  it('refuses a cursor of another collection or with another kind of key, naming cursor', () => {
    expect(
      validationFields(() => pageRequest({ cursor: cursors.encode('tasks', 'abc') }, 'entities', 'string', cursors)),
    ).toEqual(['cursor']);
    expect(
      validationFields(() => pageRequest({ cursor: cursors.encode('entities', 3) }, 'entities', 'string', cursors)),
    ).toEqual(['cursor']);
    expect(validationFields(() => pageRequest({ cursor: cursors.encode('h', 'x') }, 'h', 'number', cursors))).toEqual([
      'cursor',
    ]);
  });

  it('refuses a cursor another codec issued (another DATA_DIR), naming cursor', () => {
    const cursor = CursorCodec.random().encode('entities', 'abc');
    expect(validationFields(() => pageRequest({ cursor }, 'entities', 'string', cursors))).toEqual(['cursor']);
  });

  it('lists a bad limit and a bad cursor together', () => {
    expect(validationFields(() => pageRequest({ limit: '0', cursor: 'zzz' }, 'entities', 'string', cursors))).toEqual([
      'limit',
      'cursor',
    ]);
  });
});

describe('PageQueryDto', () => {
  const errorsOf = (query: object) =>
    validateSync(plainToInstance(PageQueryDto, query)).map((e) => [e.property, Object.values(e.constraints ?? {})[0]]);

  it('accepts an absent limit and cursor, a valid limit and a cursor of any key (the form only: pageRequest checks the tag)', () => {
    expect(errorsOf({})).toEqual([]);
    expect(errorsOf({ limit: '10', cursor: cursors.encode('x', 'y') })).toEqual([]);
    expect(errorsOf({ cursor: CursorCodec.random().encode('x', 'y') })).toEqual([]);
  });

  it('names a bad limit, a malformed cursor and a repeated parameter', () => {
    expect(errorsOf({ limit: '500', cursor: 'bad!' })).toEqual([
      ['limit', 'limit must be a whole number from 1 to 200'],
      ['cursor', expect.stringContaining('cursor is not a cursor this service issued')],
    ]);
    // Malformed: too short, an unsigned body (v1), a 16-byte tag before a body with no key.
    const unsigned = Buffer.from(JSON.stringify({ v: 1, c: 'x', k: 'y' })).toString('base64url');
    const keyless = Buffer.concat([Buffer.alloc(16), Buffer.from(JSON.stringify({ v: 2, c: 'x' }))]).toString(
      'base64url',
    );
    for (const cursor of ['x', unsigned, keyless]) {
      expect(errorsOf({ cursor }).map(([field]) => field)).toEqual(['cursor']);
    }
    expect(errorsOf({ limit: ['1', '2'] }).map(([field]) => field)).toEqual(['limit']);
  });
});

describe('toPage', () => {
  it("gives a next cursor, signed by the request's codec, only when there is one more item than the limit", () => {
    const request = { limit: 2, after: null, cursors };
    expect(toPage([1, 2], request, 'n', (n) => n)).toEqual({ data: [1, 2], next_cursor: null });
    const page = toPage([1, 2, 3], request, 'n', (n) => n);
    expect(page.data).toEqual([1, 2]);
    expect(cursors.decode(page.next_cursor)).toMatchObject({ c: 'n', k: 2 });
    expect(CursorCodec.random().decode(page.next_cursor)).toBeNull();
  });
});
