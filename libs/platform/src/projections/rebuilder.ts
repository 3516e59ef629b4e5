import { comparePositions, type EventStore, type Position, type RecordedEvent } from '@filing/event-store';
import type Database from 'better-sqlite3';
import { availableParallelism } from 'node:os';
import { messagePosition, type ProcessorMessage } from '../processors/stream-processor';
import type { BatchTarget } from './batch-applier';
import type { Projection } from './projection';
import { RebuildWriterThread } from './rebuild-writer-thread';
import { inImmediateTransaction } from './statements';

export interface ReplayRun {
  /** The checkpoint to go on from (exclusive; null: the start of the log). */
  readonly from: Position | null;
  readonly until: Position;
  readonly pageSize: number;
  readonly onPage?: () => void;
  /** A scratch file to write on the writer thread; null: write through the runner's connection. */
  readonly threadedFile: string | null;
  /** Applies and commits a batch (throws what failed). */
  readonly handle: (batch: readonly ProcessorMessage[]) => void;
}

/**
 * How many batches a bulk load's writer thread may be behind before the reader waits for it.
 * One let either side's slower pages (a commit, a collection) stall the other: over 1M events
 * 1 gave 162–169k events/s, 2 gave 170–183k, 4 gave 170–190k, 8 no more; memory the same.
 */
const WRITER_BATCHES_BEHIND = 4;
/**
 * Helper threads an index build's sort may use (SQLite allows up to 8). Measured on 2 cores: 2
 * and 4 alike, 8 slower; not measured on more cores, hence the cap.
 */
const INDEX_BUILD_THREADS = Math.min(4, Math.max(2, availableParallelism()));
/** The sorter's memory per run while indexes build (KiB, negative as `cache_size` takes it): 1–8 MiB alike, 256 MiB ~2× slower. */
const INDEX_BUILD_CACHE_KIB = -2048;

/**
 * The bulk path of a rebuild: pages of `$all` read and applied in turn, without a subscription
 * (a page applied as soon as it is read leaves little to the garbage collector), the writes on a
 * thread when the target is a scratch file, and the tables' secondary indexes built once at the end.
 * The thread stays because writing on this connection instead falls short of 100k events/s: 1M
 * events on 2 shared cores gave 127–144k events/s with it, 91–108k without (same digests).
 */
export class Rebuilder {
  /** The indexes dropped for the load, created again by `createDeferredIndexes`. */
  private deferredIndexes: string[] = [];
  /** During a threaded replay: the thread that runs the batches' statements. */
  private writer: RebuildWriterThread | null = null;

  constructor(private readonly store: EventStore) {}

  /** Where a batch goes now: the writer thread's recording handle during a threaded replay, else `db`. */
  target(db: Database.Database): BatchTarget {
    const writer = this.writer;
    if (!writer) return { db, transaction: (work) => inImmediateTransaction(db, work) };
    return {
      db: writer.db,
      transaction: (work) => {
        writer.begin();
        try {
          work();
        } catch (err) {
          writer.rollback();
          throw err;
        }
        writer.commit();
      },
    };
  }

  /** Applies every event after `from` up to `until`; any failure ends the run (thrown). */
  async replay(run: ReplayRun): Promise<void> {
    // A rebuild into a file: SQLite's writes run on a thread, a few batches behind the reading
    // and computing here, so both cores work (the tables are the same: the same statements, in order).
    const writer = (this.writer = run.threadedFile !== null ? new RebuildWriterThread(run.threadedFile) : null);
    try {
      await this.replayPages(run);
      // Every batch written (or the thread's failure thrown) before the replay counts as done.
      await writer?.close();
    } finally {
      this.writer = null;
      // After a failure here: the thread's own failure, if any, was thrown already or is not the cause.
      if (writer) await writer.close(false).catch(() => {});
    }
  }

  private async replayPages(run: ReplayRun): Promise<void> {
    const { until: stopAt, pageSize } = run;
    let from = run.from;
    for (;;) {
      if (from && comparePositions(from, stopAt) >= 0) return;
      const page = await this.store.readAll({ from: from ?? 'start', maxCount: pageSize });
      const { batch, passedStop } = pageBatch(page, from, stopAt);
      if (batch.length > 0) {
        run.handle(batch);
        from = messagePosition(batch[batch.length - 1]);
      }
      if (passedStop || page.length < pageSize || batch.length === 0) break;
      run.onPage?.();
      // Timers and signals get their turn between pages. The thread works on earlier batches
      // while the next is read and computed.
      await new Promise<void>((resolve) => setImmediate(resolve));
      await this.writer?.settle(WRITER_BATCHES_BEHIND);
    }
    // Everything up to `stopAt` is applied, though no event may sit exactly there.
    if (from === null || comparePositions(from, stopAt) < 0) {
      run.handle([{ kind: 'checkpoint', position: stopAt }]);
    }
  }

  /**
   * Before a bulk load: a table keeps its b-tree (and its unique indexes, which ON CONFLICT
   * clauses need); the other indexes are dropped, to be built once at the end, by a sort, instead
   * of row by row.
   */
  deferIndexes(db: Database.Database, projections: readonly Projection[]): void {
    const tables = projections.filter((p) => p.indexesAfterLoad).flatMap((p) => p.tables);
    const indexesOf = db.prepare<[string], { name: string; sql: string | null }>(
      "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ?",
    );
    this.deferredIndexes = [];
    for (const table of tables) {
      const unique = new Set(
        (db.pragma(`index_list("${table.replace(/"/g, '""')}")`) as Array<{ name: string; unique: number }>)
          .filter((i) => i.unique)
          .map((i) => i.name),
      );
      for (const index of indexesOf.all(table)) {
        if (index.sql === null || unique.has(index.name)) continue;
        db.exec(`DROP INDEX "${index.name.replace(/"/g, '""')}"`);
        this.deferredIndexes.push(index.sql);
      }
    }
  }

  /**
   * Ends a bulk load: creates the indexes `deferIndexes` left out. Each build is a sort; with a
   * small sorter budget SQLite sorts runs of keys on helper threads and merges them, instead of
   * one in-memory sort on this thread (1M events, 2 cores: 1.9–2.2 s → 1.05–1.2 s for the builds).
   */
  createDeferredIndexes(db: Database.Database): void {
    const sql = this.deferredIndexes;
    this.deferredIndexes = [];
    const cacheSize = db.pragma('cache_size', { simple: true }) as number;
    const threads = db.pragma('threads', { simple: true }) as number;
    db.pragma(`threads = ${INDEX_BUILD_THREADS}`);
    db.pragma(`cache_size = ${INDEX_BUILD_CACHE_KIB}`);
    try {
      db.transaction(() => sql.forEach((s) => db.exec(s))).immediate();
    } finally {
      db.pragma(`threads = ${threads}`);
      db.pragma(`cache_size = ${cacheSize}`);
    }
  }
}

/** A page's events after `from` (exclusive: already applied) up to `stopAt`; whether it went past. */
function pageBatch(
  page: readonly RecordedEvent[],
  from: Position | null,
  stopAt: Position,
): { batch: ProcessorMessage[]; passedStop: boolean } {
  const batch: ProcessorMessage[] = [];
  for (const event of page) {
    if (from && comparePositions(event.position, from) <= 0) continue;
    if (comparePositions(event.position, stopAt) > 0) return { batch, passedStop: true };
    batch.push({ kind: 'event', event });
  }
  return { batch, passedStop: false };
}
