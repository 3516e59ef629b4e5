import Database from 'better-sqlite3';
import type { DomainEvent } from '../events/envelope';
import { CursorCodec } from '../http/cursor-codec';
import type { ProjectionRunner } from '../projections/projection-runner';
import { recorded } from '../testing/domain';
import { readModelFixture } from '../testing/read-model';
import { ResourceProjection } from './resource-projection';
import { ResourceQueries } from './resource-queries';
import type { ResourceTable } from './resource-table';

const NOTES: ResourceTable = {
  name: 'notes',
  idField: 'note_id',
  columns:
    'entity_id TEXT NOT NULL, title TEXT NOT NULL, title_folded TEXT NOT NULL, tags TEXT NOT NULL, status TEXT NOT NULL',
  json: ['tags'],
  derived: { title_folded: (data) => (data.title as string).toLowerCase() },
  filters: { entity: 'entity_id', status: 'status' },
  deletedBy: 'notes.NoteDeleted',
};

type NoteEvent = DomainEvent<
  string,
  { note_id: string; entity_id: string; title: string; tags: string[]; status: string }
>;
const E1 = '0193a5b2-0000-7000-8000-0000000000e1';
const note = (id: string, title: string, status = 'open') => ({
  note_id: id,
  entity_id: E1,
  title,
  tags: ['x', 'y'],
  status,
});

describe('a declared resource table', () => {
  const cursors = CursorCodec.random();
  const projection = new ResourceProjection(NOTES);
  let db: Database.Database;
  let queries: ResourceQueries<Record<string, unknown>, { entity_id?: string; status?: string }>;
  let position = 0;
  const apply = (event: NoteEvent, revision: number, accountId = 'acc-1', occurredAt = '2026-01-01T00:00:00.000Z') =>
    projection.apply(
      db,
      recorded(event, {
        streamId: `note-${event.data.note_id}`,
        revision,
        position: position++,
        accountId,
        occurredAt,
      }),
    );

  beforeEach(() => {
    db = new Database(':memory:');
    projection.setup(db);
    projection.setup(db); // runs at every start
    queries = new ResourceQueries({ db } as unknown as ProjectionRunner, NOTES);
    apply({ type: 'notes.NoteCreated', data: note('n1', 'One') }, 0);
    apply({ type: 'notes.NoteCreated', data: note('n2', 'Two') }, 0);
    apply({ type: 'notes.NoteCreated', data: note('n3', 'Three') }, 0, 'acc-2');
    apply({ type: 'notes.NoteUpdated', data: note('n2', 'Second', 'done') }, 1, 'acc-1', '2026-01-02T00:00:00.000Z');
  });
  afterEach(() => db.close());

  it('is a projection of the events of its family, with a table, its index per filter, and a version', () => {
    expect([projection.name, projection.tables, projection.handles, projection.version]).toEqual([
      'notes',
      ['notes'],
      ['notes.'],
      201,
    ]);
    const indexes = db
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'notes' AND sql IS NOT NULL ORDER BY name",
      )
      .pluck()
      .all();
    expect(indexes).toEqual(['notes_by_account', 'notes_by_account_entity', 'notes_by_account_status']);
  });

  it('keeps one row per resource as of its last event: the account and created_at of the first, the fields, time and version of the last', () => {
    expect(db.prepare("SELECT * FROM notes WHERE id = 'n2'").get()).toEqual({
      id: 'n2',
      account_id: 'acc-1',
      entity_id: E1,
      title: 'Second',
      title_folded: 'second',
      tags: '["x","y"]',
      status: 'done',
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-02T00:00:00.000Z',
      version: 1,
      api_json: JSON.stringify(queries.get('acc-1', 'n2')),
    });
  });

  it('answers the API fields only (no account, no derived column), JSON parsed, within the account', () => {
    expect(queries.get('acc-1', 'n2')).toEqual({
      id: 'n2',
      entity_id: E1,
      title: 'Second',
      tags: ['x', 'y'],
      status: 'done',
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-02T00:00:00.000Z',
      version: 1,
    });
    expect(Object.keys(queries.get('acc-1', 'n1')!)).toEqual([
      'id',
      'entity_id',
      'title',
      'tags',
      'status',
      'created_at',
      'updated_at',
      'version',
    ]);
    expect(queries.get('acc-2', 'n2')).toBeNull();
    expect([queries.exists('acc-1', 'n1'), queries.exists('acc-2', 'n1')]).toEqual([true, false]);
  });

  it('answers a resource found once as existing until its deletion, or until its table is made again', () => {
    expect(queries.exists('acc-1', 'n1')).toBe(true);
    expect(queries.exists('acc-2', 'n1')).toBe(false);
    apply({ type: 'notes.NoteDeleted', data: note('n1', 'One') }, 1);
    expect(queries.exists('acc-1', 'n1')).toBe(false);

    expect(queries.exists('acc-1', 'n2')).toBe(true);
    // What a projection reset does: its tables dropped, then made again empty.
    db.exec('DROP TABLE notes');
    projection.setup(db);
    expect(queries.exists('acc-1', 'n2')).toBe(false);
  });

  it('lists oldest first by filter (an id in capitals too), in pages', () => {
    const ids = (filters: { entity_id?: string; status?: string }, limit = 50, after: string | null = null) =>
      queries.list('acc-1', filters, { limit, after, cursors }).data.map((n) => n.id);
    expect(ids({})).toEqual(['n1', 'n2']);
    expect(ids({ status: 'done' })).toEqual(['n2']);
    expect(ids({ entity_id: E1.toUpperCase(), status: 'open' })).toEqual(['n1']);
    expect(ids({}, 1, 'n1')).toEqual(['n2']);
    expect(cursors.decode(queries.list('acc-1', {}, { limit: 1, after: null, cursors }).next_cursor)).toMatchObject({
      c: 'notes',
      k: 'n1',
    });
  });

  it('views the aggregate state as a GET answers the row, and drops the row of a deleted resource', () => {
    const state = { ...queries.get('acc-1', 'n1')!, account_id: 'acc-1', deleted: false };
    expect(queries.view(state)).toEqual(queries.get('acc-1', 'n1'));
    apply({ type: 'notes.NoteDeleted', data: note('n1', 'One') }, 1);
    expect(queries.get('acc-1', 'n1')).toBeNull();
    expect(queries.list('acc-1', {}, { limit: 50, after: null, cursors }).data.map((n) => n.id)).toEqual(['n2']);
  });

  it('keeps each answer as JSON text: a page and a GET are byte for byte the serialised rows', () => {
    apply({ type: 'notes.NoteCreated', data: { ...note('n4', 'Ünïcode "quoted" \\ \u2028 😀'), tags: [] } }, 0);
    const json = (filters: { status?: string }, limit: number, after: string | null) =>
      [
        queries.listJson('acc-1', filters, { limit, after, cursors }).toString(),
        JSON.stringify(queries.list('acc-1', filters, { limit, after, cursors })),
      ] as const;
    for (const [stored, serialised] of [
      json({}, 50, null),
      json({}, 1, null),
      json({}, 2, 'n1'),
      json({ status: 'done' }, 50, null),
      json({ status: 'none' }, 50, null),
    ]) {
      expect(stored).toBe(serialised);
    }
    for (const id of ['n1', 'n2', 'n4']) {
      expect(queries.getJson('acc-1', id)).toEqual({
        version: queries.get('acc-1', id)!.version,
        json: JSON.stringify(queries.get('acc-1', id)),
      });
    }
    expect(queries.getJson('acc-2', 'n1')).toBeNull();
  });

  it('renders from the stored row when SQLite converts a value (a number in a TEXT column, digits in an INTEGER one)', () => {
    const ODD: ResourceTable = {
      name: 'odd',
      idField: 'odd_id',
      columns: 'label TEXT, size INTEGER, extra',
      json: ['extra'],
    };
    const odd = new ResourceProjection(ODD);
    odd.setup(db);
    const reads = new ResourceQueries<{ id: string }>({ db } as unknown as ProjectionRunner, ODD);
    const cases = [
      { odd_id: 'o1', label: 42, size: '7', extra: { a: 1.5 } },
      { odd_id: 'o2', label: 'x', size: 2.5, extra: null },
      { odd_id: 'o3', label: null, size: 3, extra: undefined }, // stored as NULL
      { odd_id: 'o4', label: 'y', size: 1e300, extra: [1, 'two'] },
    ];
    for (const [i, data] of cases.entries()) {
      odd.apply(
        db,
        recorded(
          { type: 'odd.Made', data: data as never },
          { streamId: `odd-${data.odd_id}`, revision: 0, position: i, accountId: 'acc-1' },
        ),
      );
    }
    for (const { odd_id } of cases) {
      expect(reads.getJson('acc-1', odd_id)!.json).toBe(JSON.stringify(reads.get('acc-1', odd_id)));
    }
    expect(JSON.parse(reads.getJson('acc-1', 'o1')!.json)).toMatchObject({ label: '42.0', size: 7 }); // a JS number binds as REAL
    const page = { limit: 50, after: null, cursors };
    expect(reads.listJson('acc-1', {}, page).toString()).toBe(JSON.stringify(reads.list('acc-1', {}, page)));
  });

  it('stores the answer a read of the row gives, byte for byte, whatever the text and JSON values hold', () => {
    const reads = new ResourceQueries<{ id: string }>({ db } as unknown as ProjectionRunner, NOTES);
    const titles = ['quote " and \\ back', 'line\nbreak \u0001', 'ünïcødé \u2028 😀', ''];
    const tags = [[], [{ b: 1, 10: 'ten', 2: null }], ['x', 1.5e-7, -0, true, { nested: ['"'] }], [1e21, 'é']];
    titles.forEach((title, i) =>
      apply(
        { type: 'notes.NoteCreated', data: { ...note(`t${i}`, title), tags: tags[i % tags.length] as string[] } },
        0,
      ),
    );
    for (let i = 0; i < titles.length; i++) {
      const stored = reads.getJson('acc-1', `t${i}`)!.json;
      expect(stored).toBe(JSON.stringify(reads.get('acc-1', `t${i}`)));
      expect(JSON.parse(stored)).toMatchObject({
        title: titles[i],
        tags: JSON.parse(JSON.stringify(tags[i % tags.length])),
      });
    }
  });

  it("is what the families' read-model specs walk with readModelFixture (pages chained by cursors)", () => {
    const model = readModelFixture(
      new ResourceProjection(NOTES),
      (runner) => new ResourceQueries<{ id: string }>(runner, NOTES),
    );
    try {
      for (const id of ['n1', 'n2', 'n3'])
        model.apply({ type: 'notes.NoteCreated', data: note(id, id) }, { accountId: 'acc-1' });
      model.expectPages('acc-1', ['n1', 'n2', 'n3'], 2);
      model.expectPages('acc-1', ['n1', 'n2', 'n3'], 3);
      expect(() => model.expectPages('acc-1', ['n1', 'n3', 'n2'], 2)).toThrow();
      expect(() => model.expectPages('acc-1', ['n1', 'n2'], 2)).toThrow();
    } finally {
      model.close();
    }
  });
  it('in a rebuild batch writes each resource once, with the rows an event-by-event apply gives', () => {
    const events: Array<[NoteEvent, number, string, string]> = [
      [{ type: 'notes.NoteCreated', data: note('b1', 'One') }, 0, 'acc-1', '2026-02-01T00:00:00.000Z'],
      [{ type: 'notes.NoteUpdated', data: note('b1', 'Uno', 'done') }, 1, 'acc-2', '2026-02-02T00:00:00.000Z'],
      [{ type: 'notes.NoteUpdated', data: note('n1', 'Eins') }, 1, 'acc-1', '2026-02-03T00:00:00.000Z'],
      [{ type: 'notes.NoteDeleted', data: note('n2', 'Two') }, 2, 'acc-1', '2026-02-04T00:00:00.000Z'],
      [{ type: 'notes.NoteCreated', data: note('n2', 'Again') }, 3, 'acc-2', '2026-02-05T00:00:00.000Z'],
      [{ type: 'notes.NoteUpdated', data: note('n2', 'Again 2') }, 4, 'acc-1', '2026-02-06T00:00:00.000Z'],
    ];
    const rows = () => db.prepare('SELECT * FROM notes ORDER BY id').all();
    const snapshot = db.serialize();
    for (const [event, revision, account, at] of events) apply(event, revision, account, at);
    const oneByOne = rows();
    db.close();
    db = new Database(snapshot);
    projection.beginBatch(db, { rebuild: true });
    for (const [event, revision, account, at] of events) apply(event, revision, account, at);
    expect(db.prepare("SELECT title FROM notes WHERE id = 'n1'").get()).toEqual({ title: 'One' }); // not yet written
    projection.endBatch(db);
    expect(rows()).toEqual(oneByOne);
  });

  it('in a rebuild batch of many resources, some rendered from the stored row, gives the rows and rowids of applies one by one', () => {
    const ODD: ResourceTable = { name: 'odd', idField: 'odd_id', columns: 'label TEXT, size INTEGER' };
    const odd = new ResourceProjection(ODD);
    let at = 0;
    const event = (i: number, revision: number) =>
      recorded(
        // A number in the TEXT column reads back as text: that row is rendered from the stored row.
        { type: 'odd.Changed', data: { odd_id: `o${i}`, label: i % 7 === 0 ? i : `label ${i}.${revision}`, size: i } },
        {
          streamId: `odd-o${i}`,
          revision,
          position: at,
          accountId: `acc-${i % 3}`,
          occurredAt: new Date(Date.UTC(2026, 0, 1, 0, 0, at++)).toISOString(),
        },
      );
    // 40 resources made before the batch; in it, 200 events of 150 resources, most of them new,
    // some changed twice, 30 of the earlier ones changed (their created_at stays the stored one).
    const before = Array.from({ length: 40 }, (_, i) => event(i, 0));
    const batch = Array.from({ length: 150 }, (_, i) => event(i + 10, i < 30 ? 1 : 0));
    for (let i = 60; i < 110; i++) batch.push(event(i, 1));
    const rows = (target: Database.Database) => target.prepare('SELECT rowid, * FROM odd ORDER BY rowid').all();

    const oneByOne = new Database(':memory:');
    const rebuilt = new Database(':memory:');
    try {
      for (const target of [oneByOne, rebuilt]) {
        odd.setup(target);
        for (const e of before) odd.apply(target, e);
      }
      for (const e of batch) odd.apply(oneByOne, e);
      odd.beginBatch(rebuilt, { rebuild: true });
      for (const e of batch) odd.apply(rebuilt, e);
      odd.endBatch(rebuilt);

      expect(rows(rebuilt)).toEqual(rows(oneByOne));
      expect(rows(rebuilt)).toHaveLength(160);
      const reads = new ResourceQueries<{ id: string }>({ db: rebuilt } as unknown as ProjectionRunner, ODD);
      for (const id of ['o7', 'o12', 'o70', 'o140'])
        expect(reads.getJson('acc-0', id) ?? reads.getJson('acc-1', id) ?? reads.getJson('acc-2', id)).toEqual({
          version: expect.any(Number),
          json: JSON.stringify(reads.get('acc-0', id) ?? reads.get('acc-1', id) ?? reads.get('acc-2', id)),
        });
    } finally {
      oneByOne.close();
      rebuilt.close();
    }
  });
});
