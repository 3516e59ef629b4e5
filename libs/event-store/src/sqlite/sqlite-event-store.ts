import type Database from 'better-sqlite3';
import {
  ANY,
  type AppendOptions,
  type AppendResult,
  type EventData,
  type EventStore,
  type EventSubscription,
  type HeadPositionOptions,
  type Position,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type StreamMetadata,
  type StreamRevision,
  type SubscribeToAllOptions,
  type SubscriptionFilter,
} from '../event-store.port';
import { EventStoreUnavailableError } from '../errors';
import { validateAppend } from '../validate-events';
import { subscribeToAll, type AllSubscriptionHost } from './all-subscription';
import { LiveTail } from './live-tail';
import { openEventsDatabase, SqliteWriter, type WriteOutcome, type WriteRequest } from './sqlite-writer';
import { SqliteReads } from './sqlite-reads';
import type { ScanRow } from './sqlite-rows';
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

interface PendingWrite {
  readonly request: WriteRequest;
  resolve(result: AppendResult | undefined): void;
  reject(err: unknown): void;
}

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
  private readonly reads: SqliteReads;
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
  private readonly live: LiveTail;
  /** What `$all` subscriptions use of this store (scanPage through the method: specs count pages). */
  private readonly host: AllSubscriptionHost;

  constructor(options: SqliteEventStoreOptions) {
    const synchronous = options.synchronous ?? 'full';
    const maxBatch = options.maxBatch ?? 1000;
    this.db = openEventsDatabase(options.file, synchronous);
    this.reads = new SqliteReads(this.db);
    this.live = new LiveTail(options.pollIntervalMs ?? 250);
    this.host = {
      live: this.live,
      assertOpen: () => this.assertOpen(),
      headCommit: () => this.reads.headCommit(),
      scanPage: (after, filter, limit) => this.scanPage(after, filter, limit),
    };
    if (options.file === ':memory:' || options.writer === 'inline') {
      const inline = new SqliteWriter(this.db, maxBatch);
      this.writer = { send: async (requests) => inline.commit(requests), ready: async () => {}, close: async () => {} };
    } else {
      this.writer = new WriterThread({ file: options.file, synchronous, maxBatch });
    }
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
      (outcomes) => this.answer(batch, outcomes),
      (err: unknown) => {
        // Committed or not, nobody knows: the next commit starts a new run of recent appends.
        this.live.recent.clear();
        for (const p of batch) p.reject(err);
      },
    );
    this.inFlight.add(done);
    void done.finally(() => this.inFlight.delete(done));
  }

  /** Each caller of a committed group gets its own outcome; then live subscribers are woken. */
  private answer(batch: readonly PendingWrite[], outcomes: readonly WriteOutcome[]): void {
    batch.forEach((p, i) => {
      const o = outcomes[i];
      if (o.ok) {
        this.live.committed(p.request, o);
        p.resolve(o.result);
      } else p.reject(o.error);
    });
    this.live.groupDone(outcomes);
  }

  async streamRevision(streamId: string): Promise<StreamRevision | null> {
    this.assertOpen();
    return this.reads.streamRevision(streamId);
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    this.assertOpen();
    return this.reads.readStream(streamId, options);
  }

  async setStreamMetadata(streamId: string, metadata: StreamMetadata): Promise<void> {
    this.assertOpen();
    await this.write({ op: 'metadata', streamId, metadata });
  }

  async getStreamMetadata(streamId: string): Promise<StreamMetadata> {
    this.assertOpen();
    return this.reads.getStreamMetadata(streamId);
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

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    this.assertOpen();
    return this.reads.readAll(options);
  }

  /** One page after `after` and the head, from one read snapshot (another process may be appending). */
  private scanPage(
    after: bigint,
    filter: SubscriptionFilter | undefined,
    limit: number,
  ): { rows: ScanRow[]; head: bigint } {
    return this.reads.scanPage(after, filter, limit);
  }

  subscribeToAll(options: SubscribeToAllOptions = {}): EventSubscription {
    return subscribeToAll(this.host, options);
  }

  /** `skipTypes` is not needed here: the head is one indexed lookup, no event body is read. */
  async headPosition(_options?: HeadPositionOptions): Promise<Position | null> {
    this.assertOpen();
    const head = this.reads.headCommit();
    // Past what this process has appended or seen: another process (the CLI) committed. Live
    // subscriptions look now rather than at their next poll, so a caller that waits for its
    // read models to reach this head (the per-request barrier) is not held for the poll interval.
    if (this.live.saw(head)) this.live.wakeAll();
    return head === 0n ? null : { commit: head, prepare: head };
  }

  async ping(): Promise<void> {
    this.assertOpen();
    this.reads.ping();
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
    this.live.wakeAll();
    this.db.close();
  }

  private assertOpen(): void {
    if (this.closed) throw new EventStoreUnavailableError('The event store is closed');
  }
}
