import { comparePositions, type EventStore, type Position } from '@filing/event-store';
import type Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import type { Projection } from './projection';
import { ProjectionRunner } from './projection-runner';
import { removeDatabaseFiles } from './read-model-files';

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
}

/**
 * Events read and applied at a time in a rebuild from `store`. A page's events stay alive until
 * the whole page is applied, so every scavenge meanwhile copies them and promotes most. On the
 * embedded store (a page is a local read) that makes small pages cheaper: over 1M events, pages
 * of 1,000 cost V8's collector threads ~1 µs of CPU per event more than pages of 250, and the
 * main thread ~0.6 µs (5,000 cost ~2 µs more than 1,000). From EventStoreDB a page is a network
 * round trip: 1,000 there.
 */
export function rebuildPageEvents(store: Pick<EventStore, 'kind'>): number {
  return store.kind === 'sqlite' ? 250 : 1000;
}

/** Builds every read model from the stream into a fresh database, up to one position. */
export async function rebuildReadModels(options: RebuildOptions): Promise<RebuildProgress> {
  const { store, projections, file } = options;
  removeDatabaseFiles(file);
  const target = options.stopAt !== undefined ? options.stopAt : await store.headPosition();
  const quiet = { log: () => {}, error: () => {}, warn: () => {} };
  const runner = new ProjectionRunner({
    store,
    file,
    projections,
    logger: quiet,
    isolateFailures: false,
    bulk: true,
  });
  const started = Date.now();
  const progress = (): RebuildProgress => ({
    events: runner.eventsProcessed,
    elapsedMs: Date.now() - started,
    position: runner.position(),
    target,
  });
  const interval = options.progressIntervalMs ?? 500;
  let reported = started;
  try {
    await runner.replay({
      until: target,
      pageSize: rebuildPageEvents(store),
      onPage: () => {
        if (Date.now() - reported < interval) return;
        reported = Date.now();
        options.onProgress?.(progress());
      },
    });
    runner.createDeferredIndexes();
    const done = progress();
    options.onProgress?.(done);
    return done;
  } finally {
    await runner.close();
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
