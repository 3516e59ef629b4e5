import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  ANY,
  NO_STREAM,
  STREAM_EXISTS,
  type AppendResult,
  type ExpectedRevision,
  type StreamMetadata,
} from '../event-store.port';
import { EventStoreUnavailableError, StreamDeletedError, WrongExpectedVersionError } from '../errors';
import { RemovedRows } from './removed-rows';

/** An event as the writer stores it: data and metadata already JSON text (serialised by the caller). */
export interface SerializedEvent {
  readonly id: string;
  readonly type: string;
  readonly data: string;
  readonly metadata: string;
}

/** One caller's write; every request of a batch commits in one transaction, each in its own savepoint. */
export type WriteRequest =
  | {
      readonly op: 'append';
      readonly streamId: string;
      readonly events: readonly SerializedEvent[];
      readonly expected: ExpectedRevision;
    }
  | { readonly op: 'metadata'; readonly streamId: string; readonly metadata: StreamMetadata }
  | { readonly op: 'delete'; readonly streamId: string }
  | { readonly op: 'tombstone'; readonly streamId: string }
  | { readonly op: 'truncate'; readonly streamId: string; readonly before: bigint };

export type WriteOutcome =
  | {
      readonly ok: true;
      readonly result?: AppendResult;
      /**
       * Present when the request inserted events (not a replay of an earlier append): the rowid
       * of its first event and the `created` stamped on all of them. Its events hold positions
       * `first` to `result.position`, one after another (one savepoint, nothing inserts between).
       */
      readonly appended?: AppendedEvents;
    }
  | { readonly ok: false; readonly error: unknown };

export interface AppendedEvents {
  readonly first: bigint;
  readonly created: number;
}

/** Page cache per connection to the event log, in KiB. */
const EVENTS_CACHE_KIB = 4096;

/** Opens the event log (WAL), creating its tables. Every connection to it is opened here. */
export function openEventsDatabase(file: string, synchronous: 'full' | 'normal' = 'full'): Database.Database {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
  // Another process (the CLI) may hold the write lock for a moment.
  db.pragma('busy_timeout = 5000');
  // 4 MiB of page cache, not better-sqlite3's 16: the writer touches the b-trees' right edges,
  // and a reader's cache is dropped whenever the writer commits; each connection's cache is
  // resident memory (issue #16: RSS in a burst of appends).
  db.pragma(`cache_size = -${EVENTS_CACHE_KIB}`);
  // Rows removed for good (removed-rows.ts) are overwritten with zeros in the file, not left in
  // free pages; the WAL keeps the old pages only until its next checkpoint.
  db.pragma('secure_delete = ON');
  db.defaultSafeIntegers(true);
  db.exec(`
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
    -- EventStoreDB's $maxAge/$maxCount/$tb; deleted = 1: soft-deleted until the next append,
    -- 2: tombstoned (its rows removed, never written again).
    CREATE TABLE IF NOT EXISTS stream_metadata (
      stream_id       TEXT PRIMARY KEY,
      max_age         INTEGER,
      max_count       INTEGER,
      truncate_before INTEGER,
      deleted         INTEGER NOT NULL DEFAULT 0
    );
    -- The highest position ever handed out, kept while rows at the head of the log are removed
    -- (a tombstone, a truncation): without it SQLite would give the next event a removed row's
    -- position, which a consumer that saw the removed one would skip (see RemovedRows).
    CREATE TABLE IF NOT EXISTS log_floor (
      id       INTEGER PRIMARY KEY CHECK (id = 1),
      position INTEGER NOT NULL
    );
  `);
  return db;
}

/**
 * The event log's writes (group commit): a batch of callers' requests in one transaction, each
 * in a savepoint, so one caller's conflict never undoes another's append. Runs in the writer
 * thread (sqlite-writer.worker.ts), or inline for an in-memory store.
 */
export class SqliteWriter {
  private readonly stmt;
  private readonly commitBatch: Database.Transaction<(batch: readonly WriteRequest[]) => WriteOutcome[]>;

  constructor(
    private readonly db: Database.Database,
    private readonly maxBatch: number,
  ) {
    this.stmt = {
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
        `INSERT INTO events (position, stream_id, revision, event_id, type, data, metadata, created)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      tombstoned: db.prepare<[string], { deleted: bigint }>(
        'SELECT deleted FROM stream_metadata WHERE stream_id = ? AND deleted = 2',
      ),
      ...RemovedRows.statements(db),
      undelete: db.prepare<[string]>('UPDATE stream_metadata SET deleted = 0 WHERE stream_id = ? AND deleted = 1'),
      setMetadata: db.prepare(
        `INSERT INTO stream_metadata (stream_id, max_age, max_count, truncate_before, deleted) VALUES (?, ?, ?, ?, 0)
         ON CONFLICT (stream_id) DO UPDATE SET max_age = excluded.max_age, max_count = excluded.max_count,
           truncate_before = excluded.truncate_before, deleted = 0`,
      ),
      softDelete: db.prepare(
        `INSERT INTO stream_metadata (stream_id, truncate_before, deleted) VALUES (?, ?, 1)
         ON CONFLICT (stream_id) DO UPDATE SET truncate_before = excluded.truncate_before, deleted = 1`,
      ),
    };
    // A nested transaction is a savepoint: a failed request rolls back alone.
    const one = db.transaction((request: WriteRequest) => this.apply(request));
    this.commitBatch = db.transaction((batch: readonly WriteRequest[]) =>
      batch.map((request): WriteOutcome => {
        try {
          return one(request);
        } catch (error) {
          return { ok: false, error };
        }
      }),
    );
  }

  /**
   * Commits the requests, `maxBatch` per transaction, and answers one outcome per request, in
   * order. When a transaction's commit fails, nothing of it is durable: each of its requests
   * gets an EventStoreUnavailableError, never an acknowledgement.
   */
  commit(requests: readonly WriteRequest[]): WriteOutcome[] {
    const outcomes: WriteOutcome[] = [];
    for (let i = 0; i < requests.length; i += this.maxBatch) {
      const batch = requests.slice(i, i + this.maxBatch);
      try {
        outcomes.push(...this.commitBatch.immediate(batch));
      } catch (cause) {
        const error = new EventStoreUnavailableError('The event store could not commit', { cause });
        for (let j = 0; j < batch.length; j++) outcomes.push({ ok: false, error });
      }
    }
    return outcomes;
  }

  private apply(request: WriteRequest): WriteOutcome {
    if (this.stmt.tombstoned.get(request.streamId)) {
      // Done already; anything else would bring the stream back.
      if (request.op === 'tombstone' || request.op === 'delete') return { ok: true };
      throw new StreamDeletedError(request.streamId);
    }
    switch (request.op) {
      case 'tombstone':
        RemovedRows.tombstone(this.stmt, request.streamId);
        return { ok: true };
      case 'truncate':
        RemovedRows.truncate(this.stmt, request.streamId, request.before);
        return { ok: true };
      case 'append':
        return this.append(request.streamId, request.events, request.expected);
      case 'metadata': {
        const { maxAge, maxCount, truncateBefore } = request.metadata;
        this.stmt.setMetadata.run(request.streamId, maxAge ?? null, maxCount ?? null, truncateBefore ?? null);
        return { ok: true };
      }
      case 'delete': {
        const last = this.stmt.lastRevision.get(request.streamId)?.revision ?? -1n;
        this.stmt.softDelete.run(request.streamId, last + 1n);
        return { ok: true };
      }
    }
  }

  private append(streamId: string, events: readonly SerializedEvent[], expected: ExpectedRevision): WriteOutcome {
    const last = this.stmt.lastRevision.get(streamId)?.revision ?? -1n;
    const actual = last < 0n ? NO_STREAM : last;

    // A stream with no row holds none of these ids: only an existing one can replay.
    const replay = last < 0n ? null : this.idempotentReplay(streamId, events, expected, last);
    if (replay) return { ok: true, result: replay };

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
    let first = 0n;
    let position = 0n;
    // Null: SQLite's max + 1; past the floor when the head of the log was removed.
    let at = RemovedRows.nextPosition(this.stmt);
    for (const e of events) {
      revision += 1n;
      const info = this.stmt.insert.run(at, streamId, revision, e.id, e.type, e.data, e.metadata, created);
      at = null;
      position = BigInt(info.lastInsertRowid);
      if (first === 0n) first = position;
    }
    return {
      ok: true,
      result: { nextExpectedRevision: revision, position: { commit: position, prepare: position } },
      appended: { first, created },
    };
  }

  /**
   * EventStoreDB's idempotency: when every id of the append is already in the stream as one
   * consecutive run that the expected revision would have produced, acknowledge it again and
   * write nothing. A partial overlap is a conflict, as on the server.
   */
  private idempotentReplay(
    streamId: string,
    events: readonly SerializedEvent[],
    expected: ExpectedRevision,
    last: bigint,
  ): AppendResult | null {
    const first = this.stmt.revisionOfId.get(streamId, events[0].id);
    if (!first) {
      // The first id was just looked for.
      const anySeen = events.some((e, i) => i > 0 && this.stmt.revisionOfId.get(streamId, e.id));
      if (anySeen) throw new WrongExpectedVersionError(streamId, expected, last < 0n ? NO_STREAM : last);
      return null;
    }
    let position = 0n;
    for (let i = 0; i < events.length; i++) {
      const row = this.stmt.byRevision.get(streamId, first.revision + BigInt(i));
      if (!row || row.event_id !== events[i].id) {
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
}
