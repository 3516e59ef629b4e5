import { SqliteEventStore, type Position } from '@filing/event-store';
import type Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildMetadata, toEventData } from '../events/envelope';
import { messagePosition, type ProcessorMessage } from '../processors/stream-processor';
import type { Projection } from './projection';
import { openReadDatabase } from './read-database';
import { Rebuilder } from './rebuilder';

const context = { account_id: 'acc', actor: 'test', correlation_id: 'c', causation_id: null };
const text = (p: Position | null) => (p === null ? null : `${p.commit}/${p.prepare}`);

describe('Rebuilder', () => {
  let dir: string;
  let store: SqliteEventStore;
  let rebuilder: Rebuilder;
  let batches: ProcessorMessage[][];
  const handle = (batch: readonly ProcessorMessage[]) => void batches.push([...batch]);

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'rebuilder-'));
    store = new SqliteEventStore({ file: join(dir, 'events.db'), pollIntervalMs: 20 });
    rebuilder = new Rebuilder(store);
    batches = [];
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function append(count: number): Promise<Position[]> {
    const positions: Position[] = [];
    for (let i = 0; i < count; i++) {
      const data = [toEventData({ type: 'test.Added', data: { i } }, buildMetadata(context))];
      positions.push((await store.appendToStream(`s-${i}`, data)).position);
    }
    return positions;
  }

  const handled = () => batches.map((b) => b.map((m) => `${m.kind} ${text(messagePosition(m))}`));

  it('applies every event after `from` up to `until` a page at a time, and nothing past it', async () => {
    const p = await append(7);
    let pages = 0;
    await rebuilder.replay({ from: p[0], until: p[5], pageSize: 2, threadedFile: null, handle, onPage: () => pages++ });
    // A page read from a checkpoint starts with the event there (`from` is inclusive), passed over.
    expect(handled()).toEqual([1, 2, 3, 4, 5].map((i) => [`event ${text(p[i])}`]));
    expect(pages).toBe(5);
  });

  it('ends at `until` with a checkpoint when no event sits exactly there', async () => {
    const p = await append(2);
    const until = { commit: p[1].commit + 10n, prepare: p[1].prepare + 10n };
    await rebuilder.replay({ from: null, until, pageSize: 10, threadedFile: null, handle });
    expect(handled()).toEqual([[`event ${text(p[0])}`, `event ${text(p[1])}`], [`checkpoint ${text(until)}`]]);
  });

  it('reads nothing when `from` is already at `until`', async () => {
    const p = await append(3);
    await rebuilder.replay({ from: p[2], until: p[2], pageSize: 10, threadedFile: null, handle });
    expect(batches).toEqual([]);
  });

  it('ends the run with the failure of a batch', async () => {
    const p = await append(3);
    const failing = () => {
      throw new Error('boom');
    };
    await expect(
      rebuilder.replay({ from: null, until: p[2], pageSize: 1, threadedFile: null, handle: failing }),
    ).rejects.toThrow('boom');
  });

  it('writes a batch through the given database in one transaction when no writer thread runs', () => {
    const db = openReadDatabase(':memory:');
    const target = rebuilder.target(db);
    expect(target.db).toBe(db);
    db.exec('CREATE TABLE t (n INTEGER)');
    expect(() =>
      target.transaction(() => {
        db.prepare('INSERT INTO t VALUES (1)').run();
        throw new Error('rolled back');
      }),
    ).toThrow('rolled back');
    expect(db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 0 });
    db.close();
  });

  it('leaves out the secondary indexes of tables loaded by key for the load, and builds them after', () => {
    const db = openReadDatabase(':memory:', true);
    const indexes = (d: Database.Database) =>
      d
        .prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
        .all()
        .map((r) => r.name)
        .sort();
    const byKey: Pick<Projection, 'tables' | 'indexesAfterLoad'> = { tables: ['rows'], indexesAfterLoad: true };
    const other: Pick<Projection, 'tables' | 'indexesAfterLoad'> = { tables: ['others'] };
    db.exec(`CREATE TABLE rows (id TEXT PRIMARY KEY, a TEXT, b TEXT);
             CREATE UNIQUE INDEX rows_b ON rows (b);
             CREATE INDEX rows_a ON rows (a);
             CREATE TABLE others (id TEXT PRIMARY KEY, a TEXT);
             CREATE INDEX others_a ON others (a)`);
    rebuilder.deferIndexes(db, [byKey, other] as Projection[]);
    expect(indexes(db)).toEqual(['others_a', 'rows_b']);
    rebuilder.createDeferredIndexes(db);
    expect(indexes(db)).toEqual(['others_a', 'rows_a', 'rows_b']);
    db.close();
  });
});
