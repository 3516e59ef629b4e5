import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  ANY,
  NO_STREAM,
  STREAM_EXISTS,
  type AppendOptions,
  type AppendResult,
  type EventData,
  type EventStore,
  type EventSubscription,
  type ExpectedRevision,
  type JsonObject,
  type Position,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type StreamMetadata,
  type SubscribeToAllOptions,
  type SubscriptionFilter,
  type SubscriptionMessage,
} from '../event-store.port';
import { EventStoreUnavailableError, WrongExpectedVersionError } from '../errors';
import { validateAppend } from '../validate-events';

export interface SqliteEventStoreOptions {
  /** Path of the database file (`DATA_DIR/events.db`), or `:memory:`. */
  readonly file: string;
  /**
   * `full` (default): an acknowledged append survives a power loss, not only a process crash.
   * `normal`: survives a process crash (kill -9); a power loss may lose the last commits.
   */
  readonly synchronous?: 'full' | 'normal';
  /** How often a live subscription looks for appends made by another process. */
  readonly pollIntervalMs?: number;
  /** Most appends grouped into one transaction. */
  readonly maxBatch?: number;
}

interface EventRow {
  position: number | bigint;
  stream_id: string;
  revision: number | bigint;
  event_id: string;
  type: string;
  data: string;
  metadata: string;
  created: number;
}

interface MetadataRow {
  stream_id: string;
  max_age: bigint | null;
  max_count: bigint | null;
  truncate_before: bigint | null;
  deleted: bigint;
}

interface PendingAppend {
  streamId: string;
  events: readonly EventData[];
  expected: ExpectedRevision;
  resolve(result: AppendResult): void;
  reject(err: unknown): void;
}

const SCAN_BATCH = 512;

/**
 * The embedded event store: one SQLite file in WAL mode. The global position is the rowid.
 * Appends from concurrent callers are queued and committed together in one transaction (group
 * commit), each in its own savepoint so one caller's conflict never undoes another's append.
 */
export class SqliteEventStore implements EventStore {
  readonly kind = 'sqlite';
  private readonly db: Database.Database;
  private readonly queue: PendingAppend[] = [];
  private flushScheduled = false;
  private closed = false;
  private readonly appendListeners = new Set<() => void>();
  private readonly pollIntervalMs: number;
  private readonly maxBatch: number;
  private readonly stmt: ReturnType<SqliteEventStore['prepareStatements']>;

  constructor(options: SqliteEventStoreOptions) {
    if (options.file !== ':memory:') mkdirSync(dirname(options.file), { recursive: true });
    this.db = new Database(options.file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma(`synchronous = ${options.synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
    // Another process (the CLI) may hold the write lock for a moment.
    this.db.pragma('busy_timeout = 5000');
    this.db.defaultSafeIntegers(true);
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS events (
        position  INTEGER PRIMARY KEY,
        stream_id TEXT    NOT NULL,
        revision  INTEGER NOT NULL,
        event_id  TEXT    NOT NULL,
        type      TEXT    NOT NULL,
        data      TEXT    NOT NULL,
        metadata  TEXT    NOT NULL,
        created   INTEGER NOT NULL,
        UNIQUE (stream_id, revision)
      );
      CREATE INDEX IF NOT EXISTS events_stream_event_id ON events (stream_id, event_id);
      -- EventStoreDB's $maxAge/$maxCount/$tb; deleted = soft-deleted until the next append.
      CREATE TABLE IF NOT EXISTS stream_metadata (
        stream_id       TEXT PRIMARY KEY,
        max_age         INTEGER,
        max_count       INTEGER,
        truncate_before INTEGER,
        deleted         INTEGER NOT NULL DEFAULT 0
      );
    `);
    this.pollIntervalMs = options.pollIntervalMs ?? 250;
    this.maxBatch = options.maxBatch ?? 1000;
    this.stmt = this.prepareStatements();
  }

  private prepareStatements() {
    const db = this.db;
    return {
      lastRevision: db.prepare<[string], { revision: bigint }>(
        'SELECT revision FROM events WHERE stream_id = ? ORDER BY revision DESC LIMIT 1',
      ),
      revisionOfId: db.prepare<[string, string], { revision: bigint; position: bigint }>(
        'SELECT revision, position FROM events WHERE stream_id = ? AND event_id = ?',
      ),
      byRevision: db.prepare<[string, bigint], { event_id: string; position: bigint }>(
        'SELECT event_id, position FROM events WHERE stream_id = ? AND revision = ?',
      ),
      insert: db.prepare(
        `INSERT INTO events (stream_id, revision, event_id, type, data, metadata, created)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ),
      head: db.prepare<[], { position: bigint }>('SELECT max(position) AS position FROM events'),
      metadata: db.prepare<[string], MetadataRow>('SELECT * FROM stream_metadata WHERE stream_id = ?'),
      undelete: db.prepare<[string]>('UPDATE stream_metadata SET deleted = 0 WHERE stream_id = ? AND deleted = 1'),
    };
  }

  appendToStream(streamId: string, events: readonly EventData[], options: AppendOptions = {}): Promise<AppendResult> {
    if (this.closed) return Promise.reject(new EventStoreUnavailableError('The event store is closed'));
    try {
      validateAppend(streamId, events);
    } catch (err) {
      return Promise.reject(err);
    }
    // Serialise now: the caller may mutate its objects after the call returns.
    const frozen = events.map((e) => ({ ...e, data: e.data, metadata: e.metadata ?? {} }));
    return new Promise<AppendResult>((resolve, reject) => {
      this.queue.push({ streamId, events: frozen, expected: options.expectedRevision ?? ANY, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      const outcomes: Array<{ ok: true; result: AppendResult } | { ok: false; error: unknown }> = [];
      const appendOne = this.db.transaction((p: PendingAppend) => this.appendInTransaction(p));
      try {
        this.db
          .transaction(() => {
            for (const pending of batch) {
              try {
                // A nested transaction is a savepoint: a failed append rolls back alone.
                outcomes.push({ ok: true, result: appendOne(pending) });
              } catch (error) {
                outcomes.push({ ok: false, error });
              }
            }
          })
          .immediate();
      } catch (err) {
        // The commit itself failed: nothing of the batch is durable, so nobody is acknowledged.
        const error = new EventStoreUnavailableError('The event store could not commit', { cause: err });
        for (const p of batch) p.reject(error);
        continue;
      }
      batch.forEach((p, i) => {
        const o = outcomes[i];
        if (o.ok) p.resolve(o.result);
        else p.reject(o.error);
      });
      for (const listener of this.appendListeners) listener();
    }
  }

  private appendInTransaction({ streamId, events, expected }: PendingAppend): AppendResult {
    const last = this.stmt.lastRevision.get(streamId)?.revision ?? -1n;
    const actual = last < 0n ? NO_STREAM : last;

    const replay = this.idempotentReplay(streamId, events, expected, last);
    if (replay) return replay;

    const matches =
      expected === ANY ||
      (expected === NO_STREAM && last === -1n) ||
      (expected === STREAM_EXISTS && last >= 0n) ||
      (typeof expected === 'bigint' && expected === last);
    if (!matches) throw new WrongExpectedVersionError(streamId, expected, actual);

    // An append recreates a soft-deleted stream: it shows the new events only (its $tb stays).
    this.stmt.undelete.run(streamId);
    const created = Date.now();
    let revision = last;
    let position = 0n;
    for (const e of events) {
      revision += 1n;
      const info = this.stmt.insert.run(
        streamId,
        revision,
        e.id.toLowerCase(),
        e.type,
        JSON.stringify(e.data),
        JSON.stringify(e.metadata ?? {}),
        created,
      );
      position = BigInt(info.lastInsertRowid);
    }
    return { nextExpectedRevision: revision, position: { commit: position, prepare: position } };
  }

  /**
   * EventStoreDB's idempotency: when every id of the append is already in the stream as one
   * consecutive run that the expected revision would have produced, acknowledge it again and
   * write nothing. A partial overlap is a conflict, as on the server.
   */
  private idempotentReplay(
    streamId: string,
    events: readonly EventData[],
    expected: ExpectedRevision,
    last: bigint,
  ): AppendResult | null {
    const first = this.stmt.revisionOfId.get(streamId, events[0].id.toLowerCase());
    if (!first) {
      const anySeen = events.some((e) => this.stmt.revisionOfId.get(streamId, e.id.toLowerCase()));
      if (anySeen) throw new WrongExpectedVersionError(streamId, expected, last < 0n ? NO_STREAM : last);
      return null;
    }
    let position = 0n;
    for (let i = 0; i < events.length; i++) {
      const row = this.stmt.byRevision.get(streamId, first.revision + BigInt(i));
      if (!row || row.event_id !== events[i].id.toLowerCase()) {
        throw new WrongExpectedVersionError(streamId, expected, last < 0n ? NO_STREAM : last);
      }
      position = row.position;
    }
    const before = first.revision - 1n;
    const consistent =
      expected === ANY ||
      expected === STREAM_EXISTS ||
      (expected === NO_STREAM && before === -1n) ||
      (typeof expected === 'bigint' && expected === before);
    if (!consistent) throw new WrongExpectedVersionError(streamId, expected, last);
    return {
      nextExpectedRevision: first.revision + BigInt(events.length - 1),
      position: { commit: position, prepare: position },
    };
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    this.assertOpen();
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

  async setStreamMetadata(streamId: string, metadata: StreamMetadata): Promise<void> {
    this.assertOpen();
    this.db
      .prepare(
        `INSERT INTO stream_metadata (stream_id, max_age, max_count, truncate_before, deleted) VALUES (?, ?, ?, ?, 0)
         ON CONFLICT (stream_id) DO UPDATE SET max_age = excluded.max_age, max_count = excluded.max_count,
           truncate_before = excluded.truncate_before, deleted = 0`,
      )
      .run(streamId, metadata.maxAge ?? null, metadata.maxCount ?? null, metadata.truncateBefore ?? null);
  }

  async getStreamMetadata(streamId: string): Promise<StreamMetadata> {
    this.assertOpen();
    const row = this.stmt.metadata.get(streamId);
    if (!row) return {};
    return {
      ...(row.max_age !== null && { maxAge: Number(row.max_age) }),
      ...(row.max_count !== null && { maxCount: Number(row.max_count) }),
      ...(row.truncate_before !== null && { truncateBefore: BigInt(row.truncate_before) }),
    };
  }

  async deleteStream(streamId: string): Promise<void> {
    this.assertOpen();
    this.db
      .transaction(() => {
        const last = this.stmt.lastRevision.get(streamId)?.revision ?? -1n;
        this.db
          .prepare(
            `INSERT INTO stream_metadata (stream_id, truncate_before, deleted) VALUES (?, ?, 1)
             ON CONFLICT (stream_id) DO UPDATE SET truncate_before = excluded.truncate_before, deleted = 1`,
          )
          .run(streamId, last + 1n);
      })
      .immediate();
  }

  private readStreamRows(streamId: string, options: ReadStreamOptions): EventRow[] {
    const backwards = options.direction === 'backwards';
    const limit = clampCount(options.maxCount);
    const from = options.fromRevision ?? (backwards ? 'end' : 'start');
    if (backwards) {
      const upper = from === 'end' ? null : from === 'start' ? 0n : from;
      return this.db
        .prepare<[string, bigint | null, bigint | null, bigint], EventRow>(
          `SELECT * FROM events WHERE stream_id = ? AND (? IS NULL OR revision <= ?)
           ORDER BY revision DESC LIMIT ?`,
        )
        .all(streamId, upper, upper, limit);
    } else {
      if (from === 'end') return [];
      const lower = from === 'start' ? 0n : from;
      return this.db
        .prepare<[string, bigint, bigint], EventRow>(
          'SELECT * FROM events WHERE stream_id = ? AND revision >= ? ORDER BY revision ASC LIMIT ?',
        )
        .all(streamId, lower, limit);
    }
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    this.assertOpen();
    const backwards = options.direction === 'backwards';
    const limit = clampCount(options.maxCount);
    const from = options.from ?? (backwards ? 'end' : 'start');
    if (backwards) {
      if (from === 'start') return [];
      const before = from === 'end' ? null : from.commit;
      return this.db
        .prepare<[bigint | null, bigint | null, bigint], EventRow>(
          'SELECT * FROM events WHERE (? IS NULL OR position < ?) ORDER BY position DESC LIMIT ?',
        )
        .all(before, before, limit)
        .map(toRecorded);
    }
    if (from === 'end') return [];
    const lower = from === 'start' ? 0n : from.commit;
    return this.scanForwards(lower - 1n, undefined, limit).map(toRecorded);
  }

  /** Rows with position > after, matching the filter, oldest first. */
  private scanForwards(after: bigint, filter: SubscriptionFilter | undefined, limit: bigint | number): EventRow[] {
    const { sql, params } = filterSql(filter);
    return this.db
      .prepare<unknown[], EventRow>(`SELECT * FROM events WHERE position > ? ${sql} ORDER BY position ASC LIMIT ?`)
      .all(after, ...params, limit);
  }

  /** One page after `after` and the head, from one read snapshot (another process may be appending). */
  private scanPage(
    after: bigint,
    filter: SubscriptionFilter | undefined,
    limit: number,
  ): { rows: EventRow[]; head: bigint } {
    return this.db.transaction(() => ({ rows: this.scanForwards(after, filter, limit), head: this.headCommit() }))();
  }

  subscribeToAll(options: SubscribeToAllOptions = {}): EventSubscription {
    const abort = new AbortController();
    let wake: (() => void) | undefined;
    const onAppend = () => wake?.();

    async function* run(store: SqliteEventStore): AsyncGenerator<SubscriptionMessage> {
      store.appendListeners.add(onAppend);
      try {
        const from = options.from ?? 'start';
        let after = from === 'start' ? 0n : from === 'end' ? store.headCommit() : from.commit;
        let caughtUp = false;
        while (!abort.signal.aborted) {
          store.assertOpen();
          // The head is read in the same snapshot as the page: it is how far this page looked.
          // Read later (after the consumer had paused on the yields below) it would also cover
          // events committed meanwhile that the page never saw, and skipping to it loses them.
          const { rows, head } = store.scanPage(after, options.filter, SCAN_BATCH);
          for (const row of rows) {
            const event = toRecorded(row);
            after = event.position.commit;
            yield { kind: 'event', event };
            if (abort.signal.aborted) return;
          }
          if (rows.length === SCAN_BATCH) continue;
          // A short page saw everything up to `head`: what the filter skipped there is considered.
          if (head > after) {
            after = head;
            yield { kind: 'checkpoint', position: { commit: head, prepare: head } };
          }
          if (!caughtUp) {
            caughtUp = true;
            yield { kind: 'caught-up' };
          }
          // Live: woken by an append in this process, or by the poll for other processes' appends.
          await new Promise<void>((resolve) => {
            const timer = setTimeout(done, store.pollIntervalMs);
            abort.signal.addEventListener('abort', done, { once: true });
            wake = done;
            function done() {
              clearTimeout(timer);
              abort.signal.removeEventListener('abort', done);
              wake = undefined;
              resolve();
            }
          });
        }
      } finally {
        store.appendListeners.delete(onAppend);
      }
    }

    const iterator = run(this);
    return {
      [Symbol.asyncIterator]: () => iterator,
      async stop() {
        abort.abort();
        await iterator.return(undefined);
      },
    };
  }

  private headCommit(): bigint {
    return this.stmt.head.get()?.position ?? 0n;
  }

  async headPosition(): Promise<Position | null> {
    this.assertOpen();
    const head = this.headCommit();
    return head === 0n ? null : { commit: head, prepare: head };
  }

  async ping(): Promise<void> {
    this.assertOpen();
    this.db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Let queued appends commit before the handle goes away.
    if (this.queue.length > 0) this.flush();
    this.closed = true;
    for (const listener of this.appendListeners) listener();
    this.db.close();
  }

  private assertOpen(): void {
    if (this.closed) throw new EventStoreUnavailableError('The event store is closed');
  }
}

function clampCount(maxCount: number | undefined): bigint {
  if (maxCount === undefined || !Number.isFinite(maxCount)) return BigInt(Number.MAX_SAFE_INTEGER);
  return BigInt(Math.max(0, Math.floor(maxCount)));
}

function filterSql(filter: SubscriptionFilter | undefined): { sql: string; params: unknown[] } {
  if (!filter) return { sql: '', params: [] };
  const column = 'eventTypePrefixes' in filter ? 'type' : 'stream_id';
  const prefixes = 'eventTypePrefixes' in filter ? filter.eventTypePrefixes : filter.streamNamePrefixes;
  if (prefixes.length === 0) return { sql: '', params: [] };
  const clauses = prefixes.map(() => `substr(${column}, 1, ?) = ?`);
  return {
    sql: `AND (${clauses.join(' OR ')})`,
    params: prefixes.flatMap((p) => [p.length, p]),
  };
}

function toRecorded(row: EventRow): RecordedEvent {
  const position = BigInt(row.position);
  return {
    id: row.event_id,
    type: row.type,
    streamId: row.stream_id,
    revision: BigInt(row.revision),
    position: { commit: position, prepare: position },
    // Written by appendToStream from validated JSON objects.
    data: JSON.parse(row.data) as JsonObject,
    metadata: JSON.parse(row.metadata) as JsonObject,
    created: new Date(Number(row.created)),
  };
}
