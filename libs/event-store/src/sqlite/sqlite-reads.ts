import type Database from 'better-sqlite3';
import type {
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  StreamMetadata,
  StreamRevision,
  SubscriptionFilter,
} from '../event-store.port';
import {
  clampCount,
  filterSql,
  SCAN_COLUMNS,
  scanned,
  toRecorded,
  type EventRow,
  type MetadataRow,
  type ScanRow,
} from './sqlite-rows';

/**
 * The reads of the embedded store, on the caller's thread and connection (WAL: they see every
 * acknowledged commit). The store checks that it is open before calling any of them.
 */
export class SqliteReads {
  private readonly stmt: ReturnType<SqliteReads['prepareStatements']>;
  private readonly scans = new Map<string, Database.Statement<unknown[], ScanRow>>();

  constructor(private readonly db: Database.Database) {
    this.stmt = this.prepareStatements();
  }

  private prepareStatements() {
    const db = this.db;
    return {
      lastRevision: db.prepare<[string], { revision: bigint }>(
        'SELECT revision FROM events WHERE stream_id = ? ORDER BY revision DESC LIMIT 1',
      ),
      head: db.prepare<[], { position: bigint }>('SELECT max(position) AS position FROM events'),
      metadata: db.prepare<[string], MetadataRow>('SELECT * FROM stream_metadata WHERE stream_id = ?'),
      forwards: db.prepare<[string, bigint, bigint], EventRow>(
        'SELECT * FROM events WHERE stream_id = ? AND revision >= ? ORDER BY revision ASC LIMIT ?',
      ),
      backwards: db.prepare<[string, bigint | null, bigint | null, bigint], EventRow>(
        `SELECT * FROM events WHERE stream_id = ? AND (? IS NULL OR revision <= ?)
         ORDER BY revision DESC LIMIT ?`,
      ),
      allBackwards: db.prepare<[bigint | null, bigint | null, bigint], EventRow>(
        'SELECT * FROM events WHERE (? IS NULL OR position < ?) ORDER BY position DESC LIMIT ?',
      ),
      ping: db.prepare('SELECT 1'),
    };
  }

  streamRevision(streamId: string): StreamRevision | null {
    return this.stmt.lastRevision.get(streamId)?.revision ?? null;
  }

  readStream(streamId: string, options: ReadStreamOptions): RecordedEvent[] {
    const rows = this.readStreamRows(streamId, options);
    const meta = this.stmt.metadata.get(streamId);
    if (!meta) return rows.map(toRecorded);
    if (meta.deleted) return [];
    // What $maxCount, $tb and $maxAge hide, as EventStoreDB's stream reads do.
    const last = this.stmt.lastRevision.get(streamId)?.revision ?? -1n;
    let lowest = meta.truncate_before ?? 0n;
    if (meta.max_count !== null && last - meta.max_count + 1n > lowest) lowest = last - meta.max_count + 1n;
    const oldest = meta.max_age === null ? null : Date.now() - Number(meta.max_age) * 1000;
    return rows
      .filter((r) => BigInt(r.revision) >= lowest && (oldest === null || Number(r.created) >= oldest))
      .map(toRecorded);
  }

  getStreamMetadata(streamId: string): StreamMetadata {
    const row = this.stmt.metadata.get(streamId);
    if (!row) return {};
    const found: { maxAge?: number; maxCount?: number; truncateBefore?: StreamRevision } = {};
    if (row.max_age !== null) found.maxAge = Number(row.max_age);
    if (row.max_count !== null) found.maxCount = Number(row.max_count);
    if (row.truncate_before !== null) found.truncateBefore = BigInt(row.truncate_before);
    return found;
  }

  private readStreamRows(streamId: string, options: ReadStreamOptions): EventRow[] {
    const backwards = options.direction === 'backwards';
    const limit = clampCount(options.maxCount);
    const from = options.fromRevision ?? (backwards ? 'end' : 'start');
    if (backwards) {
      const upper = from === 'end' ? null : from === 'start' ? 0n : from;
      return this.stmt.backwards.all(streamId, upper, upper, limit);
    } else {
      if (from === 'end') return [];
      const lower = from === 'start' ? 0n : from;
      return this.stmt.forwards.all(streamId, lower, limit);
    }
  }

  readAll(options: ReadAllOptions): RecordedEvent[] {
    const backwards = options.direction === 'backwards';
    const limit = clampCount(options.maxCount);
    const from = options.from ?? (backwards ? 'end' : 'start');
    if (backwards) {
      if (from === 'start') return [];
      const before = from === 'end' ? null : from.commit;
      return this.stmt.allBackwards.all(before, before, limit).map(toRecorded);
    }
    if (from === 'end') return [];
    const lower = from === 'start' ? 0n : from.commit;
    return this.scanForwards(lower - 1n, undefined, limit).map(scanned);
  }

  /** Rows with position > after, matching the filter, oldest first. */
  private scanForwards(after: bigint, filter: SubscriptionFilter | undefined, limit: bigint | number): ScanRow[] {
    const { sql, params } = filterSql(filter);
    let scan = this.scans.get(sql);
    if (!scan) {
      scan = this.db
        .prepare<unknown[], ScanRow>(
          `SELECT ${SCAN_COLUMNS} FROM events WHERE position > ? ${sql} ORDER BY position ASC LIMIT ?`,
        )
        .raw(true);
      this.scans.set(sql, scan);
    }
    return scan.all(after, ...params, limit);
  }

  /** One page after `after` and the head, from one read snapshot (another process may be appending). */
  scanPage(after: bigint, filter: SubscriptionFilter | undefined, limit: number): { rows: ScanRow[]; head: bigint } {
    return this.db.transaction(() => ({ rows: this.scanForwards(after, filter, limit), head: this.headCommit() }))();
  }

  headCommit(): bigint {
    return this.stmt.head.get()?.position ?? 0n;
  }

  ping(): void {
    this.stmt.ping.get();
  }
}
