import type Database from 'better-sqlite3';
import {
  ANY,
  type AppendOptions,
  type AppendResult,
  type EventData,
  type EventStore,
  type EventSubscription,
  type HeadPositionOptions,
  type JsonObject,
  type Position,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type StreamMetadata,
  type StreamRevision,
  type SubscribeToAllOptions,
  type SubscriptionFilter,
  type SubscriptionMessage,
} from '../event-store.port';
import { EventStoreUnavailableError } from '../errors';
import { validateAppend } from '../validate-events';
import { filterMatchableInMemory, matchesFilter, RecentAppends, type RecentEvent } from './recent-appends';
import { openEventsDatabase, SqliteWriter, type WriteOutcome, type WriteRequest } from './sqlite-writer';
import { WriterThread } from './writer-thread';

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
  /**
   * `thread` (default for a file): commits and their fsyncs run on a worker thread with its own
   * connection, off the event loop. `inline`: on the caller's thread (always for `:memory:`,
   * whose data no second connection can see).
   */
  readonly writer?: 'thread' | 'inline';
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

/**
 * A scanned row, as an array (`raw()`): `$all` reads build no object per row. The columns of
 * `SCAN_COLUMNS`, in order.
 */
type ScanRow = [
  position: bigint,
  stream_id: string,
  revision: bigint,
  event_id: string,
  type: string,
  data: string,
  metadata: string,
  created: bigint,
];
const SCAN_COLUMNS = 'position, stream_id, revision, event_id, type, data, metadata, created';

interface MetadataRow {
  stream_id: string;
  max_age: bigint | null;
  max_count: bigint | null;
  truncate_before: bigint | null;
  deleted: bigint;
}

interface PendingWrite {
  readonly request: WriteRequest;
  resolve(result: AppendResult | undefined): void;
  reject(err: unknown): void;
}

const SCAN_BATCH = 512;
/**
 * What the store keeps of its latest appends for live subscribers: a subscriber further behind
 * reads SQL, as before. Enough for the processors under 64 writers; 4,096 took more of a burst
 * from memory, but what it holds outlives the young generation and the GC gave the gain back.
 */
const RECENT_EVENTS = 1024;
const RECENT_BYTES = 1024 * 1024;

/**
 * The embedded event store: one SQLite file in WAL mode. The global position is the rowid.
 * Writes from concurrent callers are queued and committed together in one transaction (group
 * commit, sqlite-writer.ts), each in its own savepoint so one caller's conflict never undoes
 * another's append; by default on a writer thread, so the fsync never blocks the event loop.
 * Reads and subscriptions use this thread's own connection (WAL: they see every acknowledged
 * commit). An append resolves only once its transaction is committed.
 */
export class SqliteEventStore implements EventStore {
  readonly kind = 'sqlite';
  /** One process per DATA_DIR (the service locks it before opening this file). */
  readonly sharedByInstances: boolean = false;
  private readonly db: Database.Database;
  private readonly writer: {
    send(requests: readonly WriteRequest[]): Promise<WriteOutcome[]>;
    ready(): Promise<void>;
    close(): Promise<void>;
  };
  private queue: PendingWrite[] = [];
  private flushScheduled = false;
  private readonly inFlight = new Set<Promise<void>>();
  /** Set by close(): no new writes from then on; reads go on until the queued writes are done. */
  private closing: Promise<void> | null = null;
  private closed = false;
  private readonly appendListeners = new Set<() => void>();
  /** The newest position this process knows committed: its own appends, or a head it read. */
  private seenHead = 0n;
  private readonly recent = new RecentAppends(RECENT_EVENTS, RECENT_BYTES);
  /** Where each live subscription that reads recent appends is: they are kept until all have them. */
  private readonly tailReaders = new Map<object, bigint>();
  private readonly pollIntervalMs: number;
  private readonly stmt: ReturnType<SqliteEventStore['prepareStatements']>;
  private readonly scans = new Map<string, Database.Statement<unknown[], ScanRow>>();

  constructor(options: SqliteEventStoreOptions) {
    const synchronous = options.synchronous ?? 'full';
    const maxBatch = options.maxBatch ?? 1000;
    this.db = openEventsDatabase(options.file, synchronous);
    this.pollIntervalMs = options.pollIntervalMs ?? 250;
    this.stmt = this.prepareStatements();
    if (options.file === ':memory:' || options.writer === 'inline') {
      const inline = new SqliteWriter(this.db, maxBatch);
      this.writer = { send: async (requests) => inline.commit(requests), ready: async () => {}, close: async () => {} };
    } else {
      this.writer = new WriterThread({ file: options.file, synchronous, maxBatch });
    }
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

  /**
   * Resolves once the writer thread has opened the log (it starts with the store; appends sent
   * before wait for it). Rejects with EventStoreUnavailableError if it could not start.
   */
  ready(): Promise<void> {
    return this.writer.ready();
  }

  appendToStream(streamId: string, events: readonly EventData[], options: AppendOptions = {}): Promise<AppendResult> {
    try {
      validateAppend(streamId, events);
      // Serialised now: the caller may mutate its objects once the call returns.
      const serialized = events.map((e) => ({
        id: e.id.toLowerCase(),
        type: e.type,
        data: JSON.stringify(e.data),
        metadata: JSON.stringify(e.metadata ?? {}),
      }));
      const request = {
        op: 'append',
        streamId,
        events: serialized,
        expected: options.expectedRevision ?? ANY,
      } as const;
      return this.write(request) as Promise<AppendResult>;
    } catch (err) {
      return Promise.reject(err);
    }
  }

  private write(request: WriteRequest): Promise<AppendResult | undefined> {
    if (this.closing) return Promise.reject(new EventStoreUnavailableError('The event store is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ request, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Hands the queued writes to the writer as one group; more may be sent while it commits. */
  private flush(): void {
    this.flushScheduled = false;
    const batch = this.queue;
    if (batch.length === 0) return;
    this.queue = [];
    const done = this.writer.send(batch.map((p) => p.request)).then(
      (outcomes) => {
        batch.forEach((p, i) => {
          const o = outcomes[i];
          if (o.ok) {
            const { request } = p;
            // Rows were removed: none of them may be handed out from memory (removed-rows.ts).
            if (request.op === 'tombstone' || request.op === 'truncate') this.recent.clear();
            if (o.appended && o.result && request.op === 'append') {
              const { events } = request;
              const firstRevision = o.result.nextExpectedRevision - BigInt(events.length - 1);
              // The writer's word that this append's positions are consecutive, checked.
              if (o.result.position.commit - o.appended.first === BigInt(events.length - 1)) {
                this.recent.add(request.streamId, events, o.appended.first, firstRevision, o.appended.created);
              } else {
                this.recent.clear();
              }
            }
            p.resolve(o.result);
          } else p.reject(o.error);
        });
        this.releaseRecent();
        for (const o of outcomes)
          if (o.ok && o.result && o.result.position.commit > this.seenHead) this.seenHead = o.result.position.commit;
        for (const listener of this.appendListeners) listener();
      },
      (err: unknown) => {
        // Committed or not, nobody knows: the next commit starts a new run of recent appends.
        this.recent.clear();
        for (const p of batch) p.reject(err);
      },
    );
    this.inFlight.add(done);
    void done.finally(() => this.inFlight.delete(done));
  }

  async streamRevision(streamId: string): Promise<StreamRevision | null> {
    this.assertOpen();
    return this.stmt.lastRevision.get(streamId)?.revision ?? null;
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
    await this.write({ op: 'metadata', streamId, metadata });
  }

  async getStreamMetadata(streamId: string): Promise<StreamMetadata> {
    this.assertOpen();
    const row = this.stmt.metadata.get(streamId);
    if (!row) return {};
    const found: { maxAge?: number; maxCount?: number; truncateBefore?: StreamRevision } = {};
    if (row.max_age !== null) found.maxAge = Number(row.max_age);
    if (row.max_count !== null) found.maxCount = Number(row.max_count);
    if (row.truncate_before !== null) found.truncateBefore = BigInt(row.truncate_before);
    return found;
  }

  async deleteStream(streamId: string): Promise<void> {
    this.assertOpen();
    await this.write({ op: 'delete', streamId });
  }

  async tombstoneStream(streamId: string): Promise<void> {
    this.assertOpen();
    await this.write({ op: 'tombstone', streamId });
  }

  async truncateStream(streamId: string, before: StreamRevision): Promise<void> {
    this.assertOpen();
    await this.write({ op: 'truncate', streamId, before });
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

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    this.assertOpen();
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
  private scanPage(
    after: bigint,
    filter: SubscriptionFilter | undefined,
    limit: number,
  ): { rows: ScanRow[]; head: bigint } {
    return this.db.transaction(() => ({ rows: this.scanForwards(after, filter, limit), head: this.headCommit() }))();
  }

  subscribeToAll(options: SubscribeToAllOptions = {}): EventSubscription {
    const abort = new AbortController();
    let wake: (() => void) | undefined;
    const onAppend = () => wake?.();
    const { filter } = options;
    const fromMemory = filterMatchableInMemory(filter);

    const reader = {};

    async function* run(store: SqliteEventStore): AsyncGenerator<SubscriptionMessage> {
      store.appendListeners.add(onAppend);
      try {
        const from = options.from ?? 'start';
        let after = from === 'start' ? 0n : from === 'end' ? store.headCommit() : from.commit;
        let caughtUp = false;
        /** Whether a miss of the recent appends must read SQL, or may wait for the next wake. */
        let scan = true;
        while (!abort.signal.aborted) {
          store.assertOpen();
          // Live and right behind this process's appends: take them from memory. The run of
          // recent appends holds everything from after + 1 to its end, so this skips nothing.
          const recent = caughtUp && fromMemory ? store.recent.after(after, SCAN_BATCH) : null;
          if (recent) {
            for (const e of recent) {
              if (!matchesFilter(filter, e.event.type, e.streamId)) continue;
              const event = fromRecent(e);
              after = e.position;
              yield { kind: 'event', event };
              if (abort.signal.aborted) return;
            }
            const end = recent[recent.length - 1].position;
            if (end > after) {
              after = end;
              yield { kind: 'checkpoint', position: { commit: end, prepare: end } };
            }
            store.readerAt(reader, after);
            scan = false;
            continue;
          }
          // At the newest of this process's appends since the last wake: anything else is
          // another process's, which its own commits reveal as a gap, or the poll.
          if (caughtUp && !scan && store.recent.isHead(after)) {
            await store.nextWake(abort.signal, (w) => (wake = w));
            scan = true;
            continue;
          }
          // The head is read in the same snapshot as the page: it is how far this page looked.
          // Read later (after the consumer had paused on the yields below) it would also cover
          // events committed meanwhile that the page never saw, and skipping to it loses them.
          const { rows, head } = store.scanPage(after, filter, SCAN_BATCH);
          for (const row of rows) {
            const event = scanned(row);
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
          if (fromMemory) store.readerAt(reader, after);
          await store.nextWake(abort.signal, (w) => (wake = w));
          scan = true;
        }
      } finally {
        store.appendListeners.delete(onAppend);
        store.tailReaders.delete(reader);
        store.releaseRecent();
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

  /** A live subscription has taken everything up to `after`. */
  private readerAt(reader: object, after: bigint): void {
    this.tailReaders.set(reader, after);
    this.releaseRecent();
  }

  /**
   * Lets go of the recent appends every live reader has: held longer, they outlive the young
   * generation and cost more in GC than reading them back. A reader further behind keeps them
   * (up to the bounds); with none, nothing is kept, and one that goes live later reads SQL.
   */
  private releaseRecent(): void {
    let least: bigint | null = null;
    for (const after of this.tailReaders.values()) if (least === null || after < least) least = after;
    this.recent.release(least ?? BigInt(Number.MAX_SAFE_INTEGER));
  }

  /** Live: woken by an append in this process, or by the poll for other processes' appends. */
  private nextWake(signal: AbortSignal, setWake: (wake: (() => void) | undefined) => void): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, this.pollIntervalMs);
      signal.addEventListener('abort', done, { once: true });
      setWake(done);
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        setWake(undefined);
        resolve();
      }
    });
  }

  private headCommit(): bigint {
    return this.stmt.head.get()?.position ?? 0n;
  }

  /** `skipTypes` is not needed here: the head is one indexed lookup, no event body is read. */
  async headPosition(_options?: HeadPositionOptions): Promise<Position | null> {
    this.assertOpen();
    const head = this.headCommit();
    // Past what this process has appended or seen: another process (the CLI) committed. Live
    // subscriptions look now rather than at their next poll, so a caller that waits for its
    // read models to reach this head (the per-request barrier) is not held for the poll interval.
    if (head > this.seenHead) {
      this.seenHead = head;
      for (const listener of this.appendListeners) listener();
    }
    return head === 0n ? null : { commit: head, prepare: head };
  }

  async ping(): Promise<void> {
    this.assertOpen();
    this.stmt.ping.get();
  }

  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    // Queued and in-flight writes commit and are answered before the handles go away.
    this.flush();
    await Promise.all(this.inFlight);
    await this.writer.close();
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
  return recordedEvent(
    row.position,
    row.stream_id,
    row.revision,
    row.event_id,
    row.type,
    row.data,
    row.metadata,
    row.created,
  );
}

function scanned(row: ScanRow): RecordedEvent {
  return recordedEvent(...row);
}

/**
 * The same event as its row would give. Parsed for each delivery, as a row is: the subscriber
 * owns what it is given and may change it, and the appender's objects never reach it.
 */
function fromRecent(e: RecentEvent): RecordedEvent {
  const { id, type, data, metadata } = e.event;
  return recordedEvent(e.position, e.streamId, e.revision, id, type, data, metadata, e.created);
}

function recordedEvent(
  position: number | bigint,
  streamId: string,
  revision: number | bigint,
  id: string,
  type: string,
  data: string,
  metadata: string,
  created: number | bigint,
): RecordedEvent {
  const commit = BigInt(position);
  return {
    id,
    type,
    streamId,
    revision: BigInt(revision),
    position: { commit, prepare: commit },
    // Written by appendToStream from validated JSON objects.
    data: JSON.parse(data) as JsonObject,
    metadata: JSON.parse(metadata) as JsonObject,
    created: new Date(Number(created)),
  };
}
