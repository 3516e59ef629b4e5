import { type EventStore, SqliteEventStore } from '@filing/event-store';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildMetadata, toEventData } from '../events/envelope';
import type { Projection } from './projection';
import { ProjectionRunner } from './projection-runner';
import { activeReadModelFile, newReadModelFile, publishReadModelFile, staleReadModelFiles } from './read-model-files';
import { compareReadModels, readModelPosition, rebuildReadModels } from './rebuild';
import { cachedStatement } from './statements';

const context = { account_id: 'acc', actor: 'test', correlation_id: 'c', causation_id: null };

/** Latest title per stream. */
const titles: Projection = {
  name: 'titles',
  version: 1,
  tables: ['titles'],
  handles: ['t.'],
  setup(db) {
    db.exec('CREATE TABLE IF NOT EXISTS titles (id TEXT PRIMARY KEY, title TEXT NOT NULL, changes INTEGER NOT NULL)');
  },
  apply(db, event) {
    db.prepare(
      `INSERT INTO titles (id, title, changes) VALUES (?, ?, 1)
       ON CONFLICT (id) DO UPDATE SET title = excluded.title, changes = changes + 1`,
    ).run(event.streamId, event.data.title);
  },
};

async function write(store: EventStore, stream: string, title: string) {
  return store.appendToStream(stream, [toEventData({ type: 't.Titled', data: { title } }, buildMetadata(context))]);
}

describe('rebuilding and auditing read models', () => {
  let dir: string;
  let store: SqliteEventStore;
  let live: ProjectionRunner;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rebuild-'));
    store = new SqliteEventStore({ file: join(dir, 'events.db'), pollIntervalMs: 20 });
    live = new ProjectionRunner({ store, file: join(dir, 'read.db'), projections: [titles] });
    await live.start();
    for (let i = 0; i < 30; i++) await write(store, `doc-${i % 7}`, `title ${i}`);
    expect(await live.waitFor(await store.headPosition(), 5_000)).toBe(true);
  });
  afterEach(async () => {
    await live.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('rebuilds the same rows as the live models, with the same digest every time', async () => {
    const file = join(dir, 'scratch.db');
    const progress = await rebuildReadModels({ store, projections: [titles], file });
    expect(progress.events).toBe(30);
    const rebuilt = new Database(file, { readonly: true });
    const first = compareReadModels(live.db, rebuilt, titles.tables);
    rebuilt.close();
    expect(first.differences).toEqual([]);
    expect(first.rows).toBe(7);

    await rebuildReadModels({ store, projections: [titles], file });
    const again = new Database(file, { readonly: true });
    expect(compareReadModels(live.db, again, titles.tables).digest).toBe(first.digest);
    again.close();
  });

  it('names the table and row of a corrupted live row, and of a missing one', async () => {
    live.db.prepare("UPDATE titles SET title = 'tampered' WHERE id = 'doc-3'").run();
    live.db.prepare("DELETE FROM titles WHERE id = 'doc-5'").run();
    const file = join(dir, 'scratch.db');
    await rebuildReadModels({ store, projections: [titles], file });
    const rebuilt = new Database(file, { readonly: true });
    const { differences } = compareReadModels(live.db, rebuilt, titles.tables);
    rebuilt.close();
    expect(differences).toEqual([
      {
        table: 'titles',
        key: '["doc-3"]',
        keyColumns: ['id'],
        live: expect.objectContaining({ title: 'tampered' }),
        rebuilt: expect.objectContaining({ title: 'title 24' }),
      },
      {
        table: 'titles',
        key: '["doc-5"]',
        keyColumns: ['id'],
        live: null,
        rebuilt: expect.objectContaining({ id: 'doc-5' }),
      },
    ]);
  });

  it('stops at a given position, so a rebuild can be compared with models at that point', async () => {
    const at = readModelPosition(live.db, ['titles'])!;
    await write(store, 'doc-late', 'after the audit began');
    const file = join(dir, 'scratch.db');
    await rebuildReadModels({ store, projections: [titles], file, stopAt: at });
    const rebuilt = new Database(file, { readonly: true });
    expect(rebuilt.prepare("SELECT count(*) AS n FROM titles WHERE id = 'doc-late'").get()).toEqual({ n: 0 });
    expect(readModelPosition(rebuilt, ['titles'])).toEqual(at);
    rebuilt.close();
  });

  it('builds the indexes a bulk load left out, and keeps the unique ones during the load', async () => {
    const indexed: Projection = {
      ...titles,
      name: 'indexed',
      tables: ['indexed'],
      indexesAfterLoad: true,
      setup(db) {
        db.exec(`CREATE TABLE IF NOT EXISTS indexed (id TEXT PRIMARY KEY, title TEXT NOT NULL);
          CREATE INDEX IF NOT EXISTS indexed_title ON indexed (title, id);
          CREATE UNIQUE INDEX IF NOT EXISTS indexed_upper ON indexed (upper(id))`);
      },
      apply(db, event) {
        const unique = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'indexed_upper'").get();
        const deferred = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'indexed_title'").get();
        expect([unique, deferred]).toEqual([{ n: 1 }, { n: 0 }]);
        db.prepare(
          'INSERT INTO indexed (id, title) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET title = excluded.title',
        ).run(event.streamId, event.data.title);
      },
    };
    const file = join(dir, 'scratch.db');
    const progress = await rebuildReadModels({ store, projections: [titles, indexed], file });
    expect(progress.events).toBe(30);
    const rebuilt = new Database(file, { readonly: true });
    const indexes = rebuilt
      .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'indexed' ORDER BY name")
      .all();
    expect(readModelPosition(rebuilt, ['titles', 'indexed'])).toEqual(await store.headPosition());
    rebuilt.close();
    expect(indexes).toEqual([
      { name: 'indexed_title' },
      { name: 'indexed_upper' },
      { name: 'sqlite_autoindex_indexed_1' },
    ]);
  });

  it('builds a deferred index larger than the sorter budget that agrees with its table', async () => {
    // ~6 MB of keys: the build sorts them in several runs (on helper threads) and merges them.
    const ROWS_PER_EVENT = 2_000;
    const wide: Projection = {
      ...titles,
      name: 'wide',
      tables: ['wide'],
      indexesAfterLoad: true,
      setup(db) {
        db.exec(`CREATE TABLE IF NOT EXISTS wide (id INTEGER PRIMARY KEY, k TEXT NOT NULL);
          CREATE INDEX IF NOT EXISTS wide_k ON wide (k, id);`);
      },
      apply(db, event) {
        const insert = db.prepare('INSERT INTO wide (k) VALUES (?)');
        for (let i = 0; i < ROWS_PER_EVENT; i++)
          insert.run(`${(i * 7919) % ROWS_PER_EVENT}-${event.id}`.padEnd(96, '.'));
      },
    };
    const file = join(dir, 'scratch.db');
    await rebuildReadModels({ store, projections: [wide], file });
    const rebuilt = new Database(file, { readonly: true });
    const byIndex = rebuilt.prepare('SELECT k, id FROM wide INDEXED BY wide_k ORDER BY k, id').raw().all();
    const byTable = rebuilt.prepare('SELECT k, id FROM wide NOT INDEXED ORDER BY k, id').raw().all();
    const check = rebuilt.pragma('integrity_check');
    rebuilt.close();
    expect(byIndex).toHaveLength(30 * ROWS_PER_EVENT);
    expect(byIndex).toEqual(byTable);
    expect(check).toEqual([{ integrity_check: 'ok' }]);
  });

  it('switches a running runner to a rebuilt database and carries on applying there', async () => {
    const file = newReadModelFile(dir);
    await rebuildReadModels({ store, projections: [titles], file });
    live.db.prepare("UPDATE titles SET title = 'old database' WHERE id = 'doc-1'").run();
    await live.switchTo(file);
    expect(cachedStatement(live.db, 'SELECT title FROM titles WHERE id = ?').get('doc-1')).toEqual({
      title: 'title 29',
    });
    const { position } = await write(store, 'doc-1', 'after the switch');
    expect(await live.waitFor(position, 5_000)).toBe(true);
    expect(cachedStatement(live.db, 'SELECT title FROM titles WHERE id = ?').get('doc-1')).toEqual({
      title: 'after the switch',
    });
  });

  it('publishes a rebuilt file through the pointer; older files become stale', () => {
    expect(activeReadModelFile(dir)).toBe(join(dir, 'read.db'));
    const first = newReadModelFile(dir).replace('.db', 'a.db');
    new Database(first).close();
    publishReadModelFile(dir, first);
    expect(activeReadModelFile(dir)).toBe(first);
    const second = newReadModelFile(dir).replace('.db', 'b.db');
    new Database(second).close();
    publishReadModelFile(dir, second);
    expect(activeReadModelFile(dir)).toBe(second);
    expect(staleReadModelFiles(dir).sort()).toEqual([first, join(dir, 'read.db')].sort());
  });
});
