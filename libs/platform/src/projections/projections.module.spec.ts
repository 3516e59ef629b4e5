import { EVENT_STORE, SqliteEventStore } from '@filing/event-store';
import { type DynamicModule, Injectable, Module } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import type Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildMetadata, toEventData, type RecordedEnvelope } from '../events/envelope';
import { ReadYourWrites } from '../http/read-your-writes';
import type { Projection } from './projection';
import { ProjectionRunner } from './projection-runner';
import { ProjectionsModule, RegisterProjection } from './projections.module';

@RegisterProjection()
@Injectable()
class NotesProjection implements Projection {
  readonly name = 'notes';
  readonly version = 1;
  readonly tables = ['notes'];
  readonly handles = ['notes.'];
  setup(db: Database.Database): void {
    db.exec('CREATE TABLE IF NOT EXISTS notes (id TEXT PRIMARY KEY, text TEXT NOT NULL, account_id TEXT)');
  }
  apply(db: Database.Database, event: RecordedEnvelope): void {
    db.prepare('INSERT INTO notes VALUES (?, ?, ?)').run(event.streamId, event.data.text, event.metadata.account_id);
  }
}

/** A context module that knows nothing of the app: its projection is discovered. */
@Module({ providers: [NotesProjection] })
class NotesModule {}

describe('ProjectionsModule', () => {
  let dir: string;
  let store: SqliteEventStore;
  let moduleRef: TestingModule;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'projections-module-'));
    store = new SqliteEventStore({ file: join(dir, 'events.db'), pollIntervalMs: 20 });
    const storeModule: DynamicModule = {
      module: class TestStoreModule {},
      global: true,
      providers: [{ provide: EVENT_STORE, useValue: store }],
      exports: [EVENT_STORE],
    };
    moduleRef = await Test.createTestingModule({
      imports: [storeModule, ProjectionsModule.forRoot({ file: join(dir, 'read.db') }), NotesModule],
    }).compile();
    await moduleRef.init();
  });
  afterEach(async () => {
    await moduleRef.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('discovers @RegisterProjection providers, runs them, and gives read-your-writes', async () => {
    const runner = moduleRef.get(ProjectionRunner);
    const context = { account_id: 'acc-1', actor: 'test', correlation_id: 'c', causation_id: null };
    const { position } = await store.appendToStream('note-1', [
      toEventData({ type: 'notes.NoteAdded', data: { text: 'hello' } }, buildMetadata(context)),
    ]);
    await moduleRef.get(ReadYourWrites).await(position);
    expect(runner.db.prepare('SELECT * FROM notes').all()).toEqual([
      { id: 'note-1', text: 'hello', account_id: 'acc-1' },
    ]);
    expect(await runner.isCaughtUp()).toBe(true);
  });

  it('stops and closes the read database on shutdown', async () => {
    const runner = moduleRef.get(ProjectionRunner);
    await moduleRef.close();
    expect(runner.db.open).toBe(false);
    expect(await runner.isCaughtUp()).toBe(false);
  });
});
