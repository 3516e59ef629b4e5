import { type EventStore, SqliteEventStore } from '@filing/event-store';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { threadNames } from '../../../../test/support/thread-names';
import { buildMetadata, toEventData } from '../events/envelope';
import type { Projection } from './projection';
import { ProjectionRunner } from './projection-runner';
import { compareReadModels } from './rebuild';

const context = { account_id: 'acc', actor: 'test', correlation_id: 'c', causation_id: null };

/**
 * Reads back what it wrote before (in this batch or an earlier one) to write the next row: a
 * bulk replay, whose statements run on a thread, must answer those reads as one connection would.
 */
const history: Projection = {
  name: 'history',
  version: 1,
  tables: ['history'],
  handles: ['t.'],
  setup(db) {
    db.exec(`CREATE TABLE IF NOT EXISTS history (stream TEXT NOT NULL, n INTEGER NOT NULL, titles TEXT NOT NULL,
      big INTEGER, ratio REAL, note TEXT, PRIMARY KEY (stream, n))`);
  },
  apply(db, event) {
    const last = db
      .prepare('SELECT n, titles FROM history WHERE stream = ? ORDER BY n DESC LIMIT 1')
      .get(event.streamId) as { n: number; titles: string } | undefined;
    const all = db.prepare('SELECT n FROM history WHERE stream = ?').all(event.streamId);
    const title = event.data.title as string;
    db.prepare('INSERT INTO history (stream, n, titles, big, ratio, note) VALUES (?, ?, ?, ?, ?, ?)').run(
      event.streamId,
      (last?.n ?? 0) + 1,
      `${last?.titles ?? ''}|${title}`,
      BigInt(all.length) * 10_000_000_000n,
      all.length / 3,
      all.length % 2 ? null : 'é ✓ 𝄞',
    );
  },
};

async function write(store: EventStore, stream: string, title: string) {
  return store.appendToStream(stream, [toEventData({ type: 't.Titled', data: { title } }, buildMetadata(context))]);
}

describe('a bulk replay with its writes on a thread', () => {
  let dir: string;
  let store: SqliteEventStore;
  let runners: ProjectionRunner[];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rebuild-thread-'));
    store = new SqliteEventStore({ file: join(dir, 'events.db'), pollIntervalMs: 20 });
    runners = [];
    // Runs of three events per stream: a read right after its stream's last write, and streams
    // continued across pages and a few pages later.
    for (let i = 0; i < 40; i++) await write(store, `doc-${Math.floor(i / 3) % 3}`, `title ${i}`);
  });
  afterEach(async () => {
    for (const runner of runners) await runner.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers reads of earlier rows, in the batch and in batches still on the thread, as live applies do', async () => {
    const live = new ProjectionRunner({ store, file: join(dir, 'live.db'), projections: [history] });
    runners.push(live);
    await live.start();
    expect(await live.waitFor(await store.headPosition(), 5_000)).toBe(true);

    const file = join(dir, 'bulk.db');
    const bulk = new ProjectionRunner({ store, file, projections: [history], isolateFailures: false, bulk: true });
    runners.push(bulk);
    // Pages of 4 events: many reads need rows of the batch so far or of batches before.
    await bulk.replay({ until: await store.headPosition(), pageSize: 4 });

    const rebuilt = new Database(file, { readonly: true });
    const { differences, rows } = compareReadModels(live.db, rebuilt, history.tables);
    const last = rebuilt.prepare("SELECT titles FROM history WHERE stream = 'doc-0' ORDER BY n DESC").get() as {
      titles: string;
    };
    rebuilt.close();
    expect(differences).toEqual([]);
    expect(rows).toBe(40);
    expect(last.titles.split('|').slice(1, 6)).toEqual(['title 0', 'title 1', 'title 2', 'title 9', 'title 10']);
  });

  it('writes from a thread named rebuild-writer (top -H, perf) while the replay runs', async () => {
    // Its reads are answered by the thread: by the last event it has long started.
    let names: string[] | null = [];
    const watched: Projection = {
      ...history,
      apply(db, event) {
        names = threadNames();
        history.apply(db, event);
      },
    };
    const bulk = new ProjectionRunner({
      store,
      file: join(dir, 'bulk.db'),
      projections: [watched],
      isolateFailures: false,
      bulk: true,
    });
    runners.push(bulk);
    await bulk.replay({ until: await store.headPosition(), pageSize: 4 });
    expect(names ?? ['rebuild-writer']).toContain('rebuild-writer');
  });

  it('fails the replay when a statement fails on the thread', async () => {
    const failing: Projection = {
      ...history,
      apply(db, event) {
        // NOT NULL: the 10th event's row cannot be written.
        const title = event.data.title === 'title 9' ? null : (event.data.title as string);
        db.prepare('INSERT INTO history (stream, n, titles) VALUES (?, ?, ?)').run(
          event.streamId,
          Number(event.revision),
          title,
        );
      },
    };
    const bulk = new ProjectionRunner({
      store,
      file: join(dir, 'bulk.db'),
      projections: [failing],
      isolateFailures: false,
      bulk: true,
    });
    runners.push(bulk);
    await expect(bulk.replay({ until: await store.headPosition(), pageSize: 4 })).rejects.toThrow(
      /NOT NULL constraint failed: history\.titles/,
    );
  });
});
