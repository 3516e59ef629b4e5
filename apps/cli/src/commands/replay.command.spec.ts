import { EVENT_STORE, SqliteEventStore } from '@filing/event-store';
import {
  activeReadModelFile,
  APP_CONFIG,
  buildMetadata,
  ProjectionRunner,
  publishReadModelFile,
  toEventData,
  type Projection,
} from '@filing/platform';
import type { INestApplicationContext } from '@nestjs/common';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { replayCommand } from './replay.command';

const context = { account_id: 'acc', actor: 'test', correlation_id: 'c', causation_id: null };

/** Its rows are written on the rebuild's writer thread; the 1,500th event's row breaks NOT NULL there. */
const notes: Projection = {
  name: 'notes',
  version: 1,
  tables: ['notes'],
  handles: ['n.'],
  setup(db) {
    db.exec('CREATE TABLE IF NOT EXISTS notes (id TEXT PRIMARY KEY, text TEXT NOT NULL)');
  },
  apply(db, event) {
    const text = event.data.text === 'note 1499' ? null : event.data.text;
    db.prepare('INSERT INTO notes (id, text) VALUES (?, ?)').run(event.id, text);
  },
};

describe('npm run cli -- replay', () => {
  let dir: string;
  let store: SqliteEventStore;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'replay-command-'));
    store = new SqliteEventStore({ file: join(dir, 'events.db'), pollIntervalMs: 20 });
    // Over a page of 1,000 events: the failure comes after a batch the thread has committed.
    const events = Array.from({ length: 2_000 }, (_, i) =>
      toEventData({ type: 'n.Noted', data: { text: `note ${i}` } }, buildMetadata(context)),
    );
    for (let i = 0; i < events.length; i += 500) await store.appendToStream(`notes-${i}`, events.slice(i, i + 500));
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const app = (projections: Projection[]) =>
    ({
      get: (token: unknown) =>
        token === APP_CONFIG
          ? { dataDir: dir }
          : token === EVENT_STORE
            ? store
            : token === ProjectionRunner
              ? { registered: projections }
              : undefined,
    }) as unknown as INestApplicationContext;

  it('fails with the error of a statement that failed on the writer thread, and publishes nothing', async () => {
    const live = join(dir, 'read-live.db');
    new Database(live).close();
    publishReadModelFile(dir, live);

    const out = new PassThrough();
    await expect(replayCommand.run(app([notes]), [], out)).rejects.toThrow(/NOT NULL constraint failed: notes\.text/);
    expect(activeReadModelFile(dir)).toBe(live);
  });

  it('publishes the rebuilt read models once every batch is written', async () => {
    const honest: Projection = {
      ...notes,
      apply: (db, event) => db.prepare('INSERT INTO notes (id, text) VALUES (?, ?)').run(event.id, event.data.text),
    };
    await replayCommand.run(app([honest]), [], new PassThrough());
    const rebuilt = new Database(activeReadModelFile(dir), { readonly: true });
    const count = rebuilt.prepare('SELECT count(*) AS n FROM notes').get() as { n: number };
    rebuilt.close();
    expect(count.n).toBe(2_000);
  });
});
