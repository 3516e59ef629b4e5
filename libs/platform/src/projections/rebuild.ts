import { comparePositions, positionToString, type EventStore, type Position } from '@filing/event-store';
import type Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import type { Projection } from './projection';
import { ProjectionRunner } from './projection-runner';
import { removeDatabaseFiles } from './read-model-files';
import { rebuildOnThread, threadable } from './rebuild-thread';

export interface RebuildProgress {
  readonly events: number;
  readonly elapsedMs: number;
  /** Where the rebuild is and where it stops: a fraction for an ETA (positions are offsets). */
  readonly position: Position | null;
  readonly target: Position | null;
}

export interface RebuildOptions {
  readonly store: EventStore;
  readonly projections: readonly Projection[];
  /** A new database file; anything there is removed first. */
  readonly file: string;
  /** Rebuild up to this position (default: the head of the log when the rebuild starts). */
  readonly stopAt?: Position | null;
  readonly onProgress?: (progress: RebuildProgress) => void;
  readonly progressIntervalMs?: number;
  /**
   * The SQLite store's file (not `:memory:`): with it, and a second core, the projections that
   * name their `module` are rebuilt on a worker thread reading the file itself, at the same time.
   */
  readonly eventsFile?: string;
}

/** Events read and applied at a time in a rebuild: one transaction each. */
const PAGE_SIZE = 5000;

/** Builds every read model from the stream into a fresh database, up to one position. */
export async function rebuildReadModels(options: RebuildOptions): Promise<RebuildProgress> {
  const { store, projections, file, eventsFile } = options;
  removeDatabaseFiles(file);
  const target = options.stopAt !== undefined ? options.stopAt : await store.headPosition();
  const parallel = eventsFile !== undefined && eventsFile !== ':memory:' && availableParallelism() > 1;
  const onThread = parallel ? threadable(projections) : [];
  const here = projections.filter((p) => !onThread.includes(p));
  const threadFile = `${file}.thread`;
  const quiet = { log: () => {}, error: () => {}, warn: () => {} };
  const runner = new ProjectionRunner({
    store,
    file,
    projections: here,
    logger: quiet,
    isolateFailures: false,
    bulk: true,
  });
  const started = Date.now();
  let threadEvents = 0;
  const progress = (): RebuildProgress => ({
    // Both read every event: the thread's count when it is ahead (or alone).
    events: Math.max(runner.eventsProcessed, threadEvents),
    elapsedMs: Date.now() - started,
    position: runner.position(),
    target,
  });
  const interval = options.progressIntervalMs ?? 500;
  let reported = started;
  const report = () => {
    if (Date.now() - reported < interval) return;
    reported = Date.now();
    options.onProgress?.(progress());
  };
  try {
    removeDatabaseFiles(threadFile);
    const thread =
      onThread.length > 0 && eventsFile
        ? rebuildOnThread(
            {
              eventsFile,
              file: threadFile,
              projections: onThread.map((p) => p.module!),
              until: target && positionToString(target),
              pageSize: PAGE_SIZE,
            },
            (events) => {
              threadEvents = events;
              report();
            },
          )
        : Promise.resolve(0);
    // Settled either way before the files go: a failure here must not leave the thread writing.
    const [own, other] = await Promise.allSettled([
      runner.replay({ until: target, pageSize: PAGE_SIZE, onPage: report }),
      thread,
    ]);
    if (own.status === 'rejected') throw own.reason;
    if (other.status === 'rejected') throw other.reason;
    threadEvents = other.value;
    runner.createDeferredIndexes();
    if (onThread.length > 0) copyTables(runner.db, threadFile, onThread);
    const done = progress();
    options.onProgress?.(done);
    return done;
  } finally {
    await runner.close();
    removeDatabaseFiles(threadFile);
  }
}

/**
 * Moves the thread's projections into the rebuilt database: each table made as the thread made
 * it, with its indexes, then filled from it (SQLite copies an empty table's pages and indexes
 * as they are), and their checkpoints.
 */
function copyTables(db: Database.Database, from: string, projections: readonly Projection[]): void {
  db.prepare('ATTACH DATABASE ? AS thread').run(from);
  try {
    const schema = db.prepare<[string], { type: string; sql: string | null }>(
      "SELECT type, sql FROM thread.sqlite_master WHERE tbl_name = ? ORDER BY type = 'index', rowid",
    );
    db.transaction(() => {
      for (const table of projections.flatMap((p) => p.tables)) {
        const parts = schema.all(table);
        if (parts.length === 0) continue;
        for (const part of parts) if (part.sql) db.exec(part.sql);
        const quoted = `"${table.replace(/"/g, '""')}"`;
        db.exec(`INSERT INTO main.${quoted} SELECT * FROM thread.${quoted}`);
      }
      const names = projections.map((p) => p.name);
      db.prepare(
        `INSERT INTO main.projection_checkpoints SELECT * FROM thread.projection_checkpoints
         WHERE name IN (${names.map(() => '?').join(', ')})`,
      ).run(...names);
    }).immediate();
  } finally {
    db.exec('DETACH DATABASE thread');
  }
}

export interface ReadModelDifference {
  readonly table: string;
  /** The row's primary key (JSON), or its whole content when the table has none. */
  readonly key: string;
  /** The columns `key` lists the values of (none: the key is the whole row). */
  readonly keyColumns: readonly string[];
  readonly live: Record<string, unknown> | null;
  readonly rebuilt: Record<string, unknown> | null;
}

export interface ReadModelComparison {
  readonly differences: readonly ReadModelDifference[];
  /** SHA-256 over every table's rows in key order, of the rebuilt models. */
  readonly digest: string;
  readonly rows: number;
}

/** Table by table, row by row: what differs between the live read models and a rebuild. */
export function compareReadModels(
  live: Database.Database,
  rebuilt: Database.Database,
  tables: readonly string[],
): ReadModelComparison {
  const differences: ReadModelDifference[] = [];
  const hash = createHash('sha256');
  let rows = 0;
  for (const table of [...tables].sort()) {
    const keyColumns = primaryKey(rebuilt, table);
    const liveRows = rowsByKey(live, table, keyColumns);
    const rebuiltRows = rowsByKey(rebuilt, table, keyColumns);
    hash.update(`table ${table}\n`);
    for (const [key, row] of rebuiltRows) {
      rows++;
      hash.update(`${key}\t${canonical(row)}\n`);
      const other = liveRows.get(key);
      if (!other || canonical(other) !== canonical(row))
        differences.push({ table, key, keyColumns, live: other ?? null, rebuilt: row });
    }
    for (const [key, row] of liveRows) {
      if (!rebuiltRows.has(key)) differences.push({ table, key, keyColumns, live: row, rebuilt: null });
    }
  }
  return { differences, digest: hash.digest('hex'), rows };
}

/** The lowest checkpoint of the given projections in a read database (null: nothing applied). */
export function readModelPosition(db: Database.Database, projectionNames: readonly string[]): Position | null {
  const rows = db
    .prepare<[], { name: string; position: string | null }>('SELECT name, position FROM projection_checkpoints')
    .all();
  let lowest: Position | null = null;
  for (const name of projectionNames) {
    const text = rows.find((r) => r.name === name)?.position;
    if (!text) return null;
    const [commit, prepare] = text.split('/').map((n) => BigInt(n));
    const position = { commit, prepare };
    if (lowest === null || comparePositions(position, lowest) < 0) lowest = position;
  }
  return lowest;
}

function primaryKey(db: Database.Database, table: string): string[] {
  const info = db.prepare(`PRAGMA table_info("${table.replace(/"/g, '""')}")`).all() as Array<{
    name: string;
    pk: number;
  }>;
  return info
    .filter((c) => c.pk > 0)
    .sort((a, b) => a.pk - b.pk)
    .map((c) => c.name);
}

function rowsByKey(db: Database.Database, table: string, keyColumns: string[]): Map<string, Record<string, unknown>> {
  const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table);
  const result = new Map<string, Record<string, unknown>>();
  if (!exists) return result;
  const rows = db.prepare(`SELECT * FROM "${table.replace(/"/g, '""')}"`).all() as Record<string, unknown>[];
  for (const row of rows) {
    const key = keyColumns.length > 0 ? canonical(keyColumns.map((c) => row[c])) : canonical(row);
    result.set(key, row);
  }
  return new Map([...result].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'bigint') return v.toString();
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)));
    }
    return v;
  });
}
