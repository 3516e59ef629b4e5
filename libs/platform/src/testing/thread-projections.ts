import type Database from 'better-sqlite3';
import type { RecordedEnvelope } from '../events/envelope';
import type { Projection } from '../projections/projection';

/** For the rebuild's thread tests: titles seen per stream, made on a rebuild thread by name. */
export class TitleCountsProjection implements Projection {
  readonly name: string = 'title_counts';
  readonly version = 1;
  readonly tables = ['title_counts'];
  readonly handles = ['t.'];
  readonly indexesAfterLoad = true;
  readonly module = { file: __filename, exportName: TitleCountsProjection.name };

  setup(db: Database.Database): void {
    db.exec(`CREATE TABLE IF NOT EXISTS title_counts (id TEXT PRIMARY KEY, seen INTEGER NOT NULL, last TEXT NOT NULL);
      CREATE INDEX IF NOT EXISTS title_counts_by_last ON title_counts (last)`);
  }

  apply(db: Database.Database, event: RecordedEnvelope): void {
    db.prepare(
      `INSERT INTO title_counts (id, seen, last) VALUES (?, 1, ?)
       ON CONFLICT (id) DO UPDATE SET seen = seen + 1, last = excluded.last`,
    ).run(event.streamId, event.data.title);
  }
}

/** Fails on the title `poison`: a rebuild thread's failure must fail the rebuild. */
export class PoisonedProjection extends TitleCountsProjection {
  override readonly name = 'poisoned';
  override readonly tables = ['poisoned'];
  override readonly module = { file: __filename, exportName: PoisonedProjection.name };

  override setup(db: Database.Database): void {
    db.exec('CREATE TABLE IF NOT EXISTS poisoned (id TEXT PRIMARY KEY)');
  }

  override apply(_db: Database.Database, event: RecordedEnvelope): void {
    if (event.data.title === 'poison') throw new Error('poisoned title');
  }
}
