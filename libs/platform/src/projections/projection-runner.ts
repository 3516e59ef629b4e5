import {
  comparePositions,
  parsePosition,
  positionToString,
  type EventStore,
  type Position,
  type RecordedEvent,
} from '@filing/event-store';
import { Logger, type LoggerService } from '@nestjs/common';
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname } from 'node:path';
import { fromRecorded, type RecordedEnvelope } from '../events/envelope';
import {
  EventHandlingError,
  haltReport,
  messagePosition,
  StreamProcessor,
  type HaltReport,
  type ProcessorMessage,
  type ProcessorStatus,
} from '../processors/stream-processor';
import { field, ProcessorRecords, processorStream, skippedEvents } from '../processors/processor-records';
import { projectionHandles, type Projection } from './projection';
import { RebuildWriterThread } from './rebuild-writer-thread';
import { cachedStatement, inImmediateTransaction } from './statements';
import { checkpointOffTheLoop, type WalCheckpointer } from './wal-checkpointer';

export interface ProjectionRunnerOptions {
  readonly store: EventStore;
  /** `DATA_DIR/read.db`, or `:memory:`. */
  readonly file: string;
  readonly projections?: readonly Projection[];
  /** Most events applied in one transaction (default 500). */
  readonly maxBatch?: number;
  /** Apply nothing after this position, and stop there (rebuilds and audits up to a known point). */
  readonly stopAt?: Position;
  readonly logger?: Pick<LoggerService, 'log' | 'error' | 'warn'>;
  /**
   * Default true: a projection that keeps failing on one event is halted alone and the others go
   * on. Rebuilds and audits pass false: there any failure fails the whole run at once.
   */
  readonly isolateFailures?: boolean;
  /** A rebuild into a scratch file: no journal, no fsync (the file is published only when complete). */
  readonly bulk?: boolean;
  /** Restart backoff after a failure (tests shorten it). */
  readonly backoff?: { readonly minMs: number; readonly maxMs: number };
  /**
   * Event types no projection handles that may be large (document content chunks): the head this
   * runner waits for passes over them, so reading it carries no large body. A projection that
   * handles one is refused.
   */
  readonly headSkipsTypes?: readonly string[];
}

/** An event a projection could not apply: the runner never skips over it. */
export class ProjectionFailedError extends EventHandlingError {
  constructor(
    readonly projection: string,
    event: ConstructorParameters<typeof EventHandlingError>[1],
    options: { cause: unknown },
  ) {
    super(`projection ${projection}`, event, options);
  }
}

interface Waiter {
  readonly position: Position;
  readonly settle: (reached: boolean) => void;
}

/**
 * Keeps every read model up to date as one stream processor (libs/platform/src/processors):
 * one unfiltered `$all` subscription, so every event advances every checkpoint and
 * read-your-writes never waits on a projection that ignores the event. Each projection has its
 * own checkpoint; rows and checkpoints commit in one SQLite transaction, so a crash never applies
 * an event twice or skips one.
 *
 * A failure rolls the batch back and the processor restarts from the checkpoints with backoff. A
 * projection that fails on the same event again and again is halted alone — logged, shown by
 * `/readyz` and `/metrics` — and the others go on; it is tried again at the next start.
 */
export class ProjectionRunner {
  private current: Database.Database;
  private readonly stopAt: Position | undefined;
  private applied = 0;
  private readonly headSkipsTypes: readonly string[];
  private readonly store: EventStore;
  private readonly projections: Projection[] = [];
  private checkpoints = new Map<string, Position | null>();
  private readonly halted = new Map<string, HaltReport>();
  /** Per projection, the events an operator chose to skip (`processors:skip`), from its record stream. */
  private skips = new Map<string, Set<string>>();
  private readonly maxBatch: number;
  private readonly logger: Pick<LoggerService, 'log' | 'error' | 'warn'>;
  private readonly isolateFailures: boolean;
  private readonly backoff: { readonly minMs: number; readonly maxMs: number } | undefined;
  private readonly waiters = new Set<Waiter>();
  private processor: StreamProcessor | null = null;
  private running = false;
  private fatal: Error | null = null;
  private readonly bulk: boolean;
  /** In a bulk rebuild: the indexes dropped for the load, created again by `createDeferredIndexes`. */
  private deferredIndexes: string[] = [];
  private handlerCache: { active: readonly Projection[]; byType: Map<string, readonly Projection[]> } | undefined;
  private walCheckpointer: WalCheckpointer | null = null;
  /** The read database's file (`:memory:` for none). */
  private readonly file: string;
  /** During a bulk replay into a file: the thread that runs the batches' statements. */
  private writer: RebuildWriterThread | null = null;

  constructor(options: ProjectionRunnerOptions) {
    this.store = options.store;
    this.maxBatch = options.maxBatch ?? 500;
    this.logger = options.logger ?? new Logger(ProjectionRunner.name);
    this.stopAt = options.stopAt;
    this.isolateFailures = options.isolateFailures ?? true;
    this.backoff = options.backoff;
    this.bulk = options.bulk ?? false;
    this.file = options.file;
    this.headSkipsTypes = options.headSkipsTypes ?? [];
    this.current = this.open(options.file, this.bulk);
    for (const p of options.projections ?? []) this.add(p);
  }

  /**
   * The read database. Read it at every use and never keep statements prepared on it: a replay
   * swaps in a rebuilt database (`switchTo`). `cachedStatement(runner.db, sql)` caches safely.
   */
  get db(): Database.Database {
    return this.current;
  }

  /** Events applied (or passed over) since this runner was made: progress for replays. */
  get eventsProcessed(): number {
    return this.applied;
  }

  /** The registered projections, in registration order. */
  get registered(): readonly Projection[] {
    return this.projections;
  }

  /**
   * Swaps in another read database (a rebuilt one) and carries on from its checkpoints. Queries
   * keep answering from the old database until the moment of the swap.
   */
  async switchTo(file: string): Promise<void> {
    const wasRunning = this.running;
    await this.stop();
    const old = this.current;
    this.current = this.open(file);
    this.checkpoints = new Map();
    if (old.open) old.close();
    if (wasRunning) await this.start();
    else this.prepare();
  }

  /** Opens the read database; a live one (WAL) is checkpointed by a thread, off the event loop. */
  private open(file: string, bulk = false): Database.Database {
    // The old file stays where it is (a swap closes it after): no need to wait for the thread.
    void this.walCheckpointer?.stop();
    this.walCheckpointer = null;
    const db = openReadDatabase(file, bulk);
    if (!bulk && file !== ':memory:') {
      this.walCheckpointer = checkpointOffTheLoop(db, file, (message) => {
        this.logger.warn(`Read-model WAL checkpoint: ${message}`);
      });
    }
    return db;
  }

  /** Registers a projection; only while stopped. */
  add(projection: Projection): void {
    if (this.running) throw new Error('Add projections before start()');
    if (this.projections.some((p) => p.name === projection.name)) {
      throw new Error(`Duplicate projection name ${projection.name}`);
    }
    const superseded = [...this.projections, projection].flatMap((p) => p.supersedes ?? []).map((s) => s.name);
    const clash = [...this.projections, projection].find((p) => superseded.includes(p.name));
    if (clash) throw new Error(`Projection ${clash.name} is registered and superseded`);
    const skipped = this.headSkipsTypes.find((type) => projectionHandles(projection, type));
    if (skipped) throw new Error(`Projection ${projection.name} handles ${skipped}, which the head barrier skips`);
    this.projections.push(projection);
  }

  /** Creates tables (rebuilding projections whose version changed), then subscribes. */
  async start(): Promise<void> {
    if (this.running) return;
    this.fatal = null;
    this.halted.clear();
    this.prepare();
    this.running = true;
    if (this.projections.length === 0) return;
    this.processor = new StreamProcessor(
      this.store,
      {
        name: 'projections',
        kind: 'projector',
        maxBatch: this.maxBatch,
        beforeStart: () => this.loadSkips(),
        resumeFrom: () => this.resumePosition(),
        handle: (batch) => this.handle(batch),
        isolate: (failure) => this.isolate(failure),
      },
      {
        logger: this.logger,
        ...(this.backoff && { backoff: this.backoff }),
        ...(this.stopAt && { stopAt: this.stopAt }),
        ...(!this.isolateFailures && { haltAfter: 1, anyFailureHalts: true }),
      },
    );
    this.processor.start();
  }

  async stop(): Promise<void> {
    this.running = false;
    const processor = this.processor;
    this.processor = null;
    await processor?.stop();
  }

  /** Stops, closes the read database. */
  async close(): Promise<void> {
    await this.stop();
    this.settleAll(false);
    await this.walCheckpointer?.stop();
    this.walCheckpointer = null;
    if (this.current.open) this.current.close();
  }

  /** Drops every projection's tables and checkpoint, then replays the whole stream. */
  async rebuild(): Promise<void> {
    await this.stop();
    this.db
      .transaction(() => {
        for (const p of this.projections) this.reset(p);
      })
      .immediate();
    this.checkpoints.clear();
    await this.start();
  }

  /**
   * A bulk catch-up, up to `until` (null: an empty log; the tables are made, nothing is read):
   * pages of `$all` read and applied in turn (written a few pages to a transaction on the writer
   * thread, one each without it), without a subscription. It is what a rebuild needs and no
   * more: a page applied as soon as it is read leaves little to the garbage collector, and any
   * failure ends the run (thrown, and kept as `lastError`) instead of being retried. Only while
   * stopped.
   */
  async replay(options: {
    readonly until: Position | null;
    readonly pageSize: number;
    readonly onPage?: () => void;
  }): Promise<void> {
    if (this.running) throw new Error('replay() runs on a stopped runner');
    this.fatal = null;
    this.halted.clear();
    this.prepare();
    const stopAt = options.until;
    if (this.projections.length === 0 || stopAt === null) return;
    await this.loadSkips();
    const from = this.resumePosition();
    // A rebuild into a file: SQLite's writes run on a thread, a few batches behind the reading
    // and computing here, so both cores work (the tables are the same: the same statements, in order).
    const threaded = this.bulk && !this.isolateFailures && this.file !== ':memory:';
    const writer = (this.writer = threaded ? new RebuildWriterThread(this.file) : null);
    try {
      await this.replayPages(from, stopAt, options);
      // Every batch written (or the thread's failure thrown) before the replay counts as done.
      await writer?.close();
    } finally {
      this.writer = null;
      // After a failure here: the thread's own failure, if any, was thrown already or is not the cause.
      if (writer) await writer.close(false).catch(() => {});
    }
  }

  private async replayPages(
    start: Position | null,
    stopAt: Position,
    options: { readonly pageSize: number; readonly onPage?: () => void },
  ): Promise<void> {
    let from = start;
    for (;;) {
      if (from && comparePositions(from, stopAt) >= 0) return;
      const page = await this.store.readAll({ from: from ?? 'start', maxCount: options.pageSize });
      const batch: ProcessorMessage[] = [];
      let passedStop = false;
      for (const event of page) {
        // `from` is inclusive, and already applied.
        if (from && comparePositions(event.position, from) <= 0) continue;
        if (comparePositions(event.position, stopAt) > 0) {
          passedStop = true;
          break;
        }
        batch.push({ kind: 'event', event });
      }
      if (batch.length > 0) {
        this.handle(batch);
        from = messagePosition(batch[batch.length - 1]);
      }
      if (passedStop || page.length < options.pageSize || batch.length === 0) break;
      options.onPage?.();
      // Timers and signals get their turn between pages. The thread works on earlier batches
      // while the next is read and computed.
      await new Promise<void>((resolve) => setImmediate(resolve));
      await this.writer?.settle(WRITER_BATCHES_BEHIND);
    }
    // Everything up to `stopAt` is applied, though no event may sit exactly there.
    if (from === null || comparePositions(from, stopAt) < 0) {
      this.handle([{ kind: 'checkpoint', position: stopAt }]);
    }
  }

  /** The lowest checkpoint across projections; null when one has applied nothing yet. */
  position(): Position | null {
    return this.lowest(this.projections);
  }

  /** Where the subscription resumes: the lowest checkpoint of the projections still in service. */
  private resumePosition(): Position | null {
    return this.lowest(this.projections.filter((p) => !this.halted.has(p.name)));
  }

  private lowest(projections: readonly Projection[]): Position | null {
    let lowest: Position | null = null;
    for (const p of projections) {
      const cp = this.checkpoints.get(p.name) ?? null;
      if (cp === null) return null;
      if (lowest === null || comparePositions(cp, lowest) < 0) lowest = cp;
    }
    return lowest;
  }

  /** Each projection's checkpoint (null: nothing applied yet), for metrics and operators. */
  projectionCheckpoints(): ReadonlyMap<string, Position | null> {
    return new Map(this.projections.map((p) => [p.name, this.checkpoints.get(p.name) ?? null]));
  }

  /** One status per projection, named `projection:<name>`, for /readyz and /metrics. */
  statuses(): ProcessorStatus[] {
    const processor = this.processor?.status();
    return this.projections.map((p) => {
      const halted = this.halted.get(p.name) ?? null;
      return {
        name: `projection:${p.name}`,
        kind: 'projector' as const,
        state: halted ? 'halted' : (processor?.state ?? 'stopped'),
        restarts: processor?.restarts ?? 0,
        caughtUp: processor?.caughtUp ?? false,
        checkpoint: this.checkpoints.get(p.name) ?? null,
        halted: halted ?? processor?.halted ?? null,
      };
    });
  }

  /** The failure that halted the runner (or, with isolation off, any failure), if any. */
  get lastError(): Error | null {
    return this.fatal;
  }

  async isCaughtUp(): Promise<boolean> {
    if (!this.running || this.fatal !== null || this.halted.size > 0) return false;
    if (this.processor && !this.processor.running && this.processor.status().state !== 'finished') return false;
    const head = await this.headPosition();
    return head === null || this.reached(head);
  }

  /** The head of the log this runner follows, as the store has it now (null: empty). */
  headPosition(): Promise<Position | null> {
    return this.store.headPosition({ skipTypes: this.headSkipsTypes });
  }

  /**
   * The halted projections among `names` (every one when omitted), with the event each stopped
   * on: what a request that needs them answers with, at once, instead of waiting.
   */
  haltedProjections(names?: Iterable<string>): Array<HaltReport & { readonly projection: string }> {
    const wanted = names ? [...names] : [...this.halted.keys()];
    return wanted.flatMap((name) => {
      const report = this.halted.get(name);
      return report ? [{ projection: name, ...report }] : [];
    });
  }

  /**
   * True once every projection in service has reached `position`; false at the timeout or on a
   * failure. A halted projection is not waited on (it will not move): a request that needs one
   * asks `haltedProjections` and answers 503 instead of reading it.
   */
  waitFor(position: Position | null, timeoutMs: number): Promise<boolean> {
    if (position === null || this.reached(position)) return Promise.resolve(true);
    if (this.fatal !== null) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => waiter.settle(false), timeoutMs);
      const waiter: Waiter = {
        position,
        settle: (reached) => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve(reached);
        },
      };
      this.waiters.add(waiter);
    });
  }

  /** Every projection in service has reached `position` (halted ones are not waited on, see waitFor). */
  private reached(position: Position): boolean {
    return this.projections.every((p) => {
      if (this.halted.has(p.name)) return true;
      const cp = this.checkpoints.get(p.name) ?? null;
      return cp !== null && comparePositions(cp, position) >= 0;
    });
  }

  private prepare(): void {
    const get = this.db.prepare<[string], { version: number; position: string | null }>(
      'SELECT version, position FROM projection_checkpoints WHERE name = ?',
    );
    this.db
      .transaction(() => {
        for (const p of this.projections) {
          let row = get.get(p.name);
          const retired = this.retireSuperseded(p, get);
          if (row && (retired.length > 0 || row.version !== p.version)) {
            const why =
              retired.length > 0 ? `supersedes ${retired.join(', ')}` : `version ${row.version} → ${p.version}`;
            this.logger.log(`Projection ${p.name}: ${why}, rebuilding`);
            this.reset(p);
            row = undefined;
          }
          p.setup(this.db);
          if (!row) {
            this.db
              .prepare('INSERT INTO projection_checkpoints (name, version, position) VALUES (?, ?, NULL)')
              .run(p.name, p.version);
          }
          this.checkpoints.set(p.name, row?.position ? parsePosition(row.position) : null);
        }
        if (this.bulk) this.deferIndexes();
      })
      .immediate();
  }

  /**
   * A bulk load keeps a b-tree per table (and its unique indexes, which ON CONFLICT clauses
   * need); the other indexes are built once at the end, by a sort, instead of row by row.
   */
  private deferIndexes(): void {
    const tables = this.projections.filter((p) => p.indexesAfterLoad).flatMap((p) => p.tables);
    const indexesOf = this.db.prepare<[string], { name: string; sql: string | null }>(
      "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ?",
    );
    this.deferredIndexes = [];
    for (const table of tables) {
      const unique = new Set(
        (this.db.pragma(`index_list("${table.replace(/"/g, '""')}")`) as Array<{ name: string; unique: number }>)
          .filter((i) => i.unique)
          .map((i) => i.name),
      );
      for (const index of indexesOf.all(table)) {
        if (index.sql === null || unique.has(index.name)) continue;
        this.db.exec(`DROP INDEX "${index.name.replace(/"/g, '""')}"`);
        this.deferredIndexes.push(index.sql);
      }
    }
  }

  /**
   * Ends a bulk load: creates the indexes `deferIndexes` left out. Each build is a sort; with a
   * small sorter budget SQLite sorts runs of keys on helper threads and merges them, instead of
   * one in-memory sort on this thread (1M events, 2 cores: 1.9–2.2 s → 1.05–1.2 s for the builds).
   */
  createDeferredIndexes(): void {
    const sql = this.deferredIndexes;
    this.deferredIndexes = [];
    const cacheSize = this.db.pragma('cache_size', { simple: true }) as number;
    const threads = this.db.pragma('threads', { simple: true }) as number;
    this.db.pragma(`threads = ${INDEX_BUILD_THREADS}`);
    this.db.pragma(`cache_size = ${INDEX_BUILD_CACHE_KIB}`);
    try {
      this.db.transaction(() => sql.forEach((s) => this.db.exec(s))).immediate();
    } finally {
      this.db.pragma(`threads = ${threads}`);
      this.db.pragma(`cache_size = ${cacheSize}`);
    }
  }

  /**
   * Drops the tables and checkpoint of each projection `p` supersedes that this read model still
   * holds; returns their names. Its tables may now be `p`'s, so `p` is then rebuilt too.
   */
  private retireSuperseded(p: Projection, checkpoint: Database.Statement<[string], unknown>): string[] {
    const retired: string[] = [];
    for (const old of p.supersedes ?? []) {
      if (checkpoint.get(old.name) === undefined) continue;
      this.logger.log(`Projection ${old.name}: superseded by ${p.name}, dropping its tables`);
      this.reset(old);
      retired.push(old.name);
    }
    return retired;
  }

  private reset(p: Pick<Projection, 'name' | 'tables'>): void {
    for (const table of p.tables) this.db.exec(`DROP TABLE IF EXISTS "${table.replace(/"/g, '""')}"`);
    this.db.prepare('DELETE FROM projection_checkpoints WHERE name = ?').run(p.name);
  }

  private handle(batch: readonly ProcessorMessage[]): void {
    const resumed = this.learnSkips(batch);
    try {
      this.checkpoints = this.applyBatch(batch);
    } catch (err) {
      // Commit what came before the failing event, so every checkpoint stops right before it.
      const failedAt =
        err instanceof ProjectionFailedError
          ? batch.findIndex((w) => w.kind === 'event' && w.event.id === err.event.id)
          : -1;
      if (failedAt > 0) this.checkpoints = this.applyBatch(batch.slice(0, failedAt));
      if (!this.isolateFailures) this.fail(err);
      throw err;
    }
    this.applied += batch.filter((work) => work.kind === 'event').length;
    // Only after the batch: applied while halted, it would have moved past what it never applied.
    if (resumed.length > 0) this.resume(resumed);
    for (const p of this.projections) {
      try {
        p.afterCommit?.();
      } catch (err) {
        this.logger.error(`Projection ${p.name} afterCommit: ${String(err)}`);
      }
    }
    for (const waiter of this.waiters) if (this.reached(waiter.position)) waiter.settle(true);
  }

  /** The processor saw one projection fail on one event again and again: take it out of service. */
  private isolate(failure: EventHandlingError): boolean {
    if (!(failure instanceof ProjectionFailedError) || !this.isolateFailures) {
      this.fail(failure);
      return false;
    }
    const report = haltReport(failure);
    this.halted.set(failure.projection, report);
    this.logger.error(
      `Projection ${failure.projection} HALTED on event ${report.eventId} (${report.eventType}) in stream ` +
        `${report.streamId}: ${report.error}. Its read model stays at its checkpoint, and requests that need it ` +
        `answer 503, until the cause is fixed and the service restarts (or an operator runs ` +
        `'filing processors:skip projection:${failure.projection} ${report.eventId}'); the other projections go on.`,
    );
    // Writers no longer wait on it.
    for (const waiter of this.waiters) if (this.reached(waiter.position)) waiter.settle(true);
    return true;
  }

  /** Reads each projection's record stream: the events operators chose to skip for it. */
  private async loadSkips(): Promise<void> {
    const skips = new Map<string, Set<string>>();
    for (const p of this.projections) {
      const skipped = skippedEvents(await this.store.readStream(processorStream(`projection:${p.name}`)));
      if (skipped.size > 0) skips.set(p.name, skipped);
    }
    this.skips = skips;
  }

  /**
   * An operator skipped an event for a projection (recorded, so every instance reads it here): a
   * projection halted on it comes back into service and the runner resumes from its checkpoint.
   */
  private learnSkips(batch: readonly ProcessorMessage[]): string[] {
    const resumed: string[] = [];
    for (const work of batch) {
      if (work.kind !== 'event' || work.event.type !== ProcessorRecords.EventSkipped) continue;
      const name = field(work.event, 'processor').replace(/^projection:/, '');
      const eventId = field(work.event, 'event_id');
      if (!this.projections.some((p) => p.name === name)) continue;
      this.skips.set(name, (this.skips.get(name) ?? new Set()).add(eventId));
      if (this.halted.get(name)?.eventId === eventId) resumed.push(name);
    }
    return resumed;
  }

  /** Back in service; the subscription starts again from the lowest checkpoint, theirs. */
  private resume(names: readonly string[]): void {
    for (const name of names) {
      this.halted.delete(name);
      this.logger.warn(`Projection ${name}: its event was skipped by an operator; resuming from its checkpoint`);
    }
    this.processor?.restart();
  }

  /** One transaction: every projection's rows and checkpoints, or nothing. Returns the new checkpoints. */
  private applyBatch(batch: readonly ProcessorMessage[]): Map<string, Position | null> {
    const next = new Map(this.checkpoints);
    const writer = this.writer;
    const db = writer?.db ?? this.db;
    const save = cachedStatement(db, SAVE_CHECKPOINT);
    const active = this.projections.filter((p) => !this.halted.has(p.name));
    // Past the highest checkpoint every active projection takes every event: no per-projection
    // comparisons there, and the checkpoints all move to the batch's end.
    let ahead: Position | null = null;
    for (const p of active) {
      const cp = next.get(p.name) ?? null;
      if (cp !== null && (ahead === null || comparePositions(cp, ahead) > 0)) ahead = cp;
    }
    const handlers = this.handlersOf(active);
    const apply = () => {
      const kind = { rebuild: this.bulk && !this.isolateFailures };
      for (const p of active) p.beginBatch?.(db, kind);
      let i = 0;
      for (; i < batch.length; i++) {
        const work = batch[i];
        const position = work.kind === 'event' ? work.event.position : work.position;
        if (ahead === null || comparePositions(position, ahead) > 0) break;
        let envelope: RecordedEnvelope | undefined;
        for (const p of active) {
          const cp = next.get(p.name) ?? null;
          if (cp !== null && comparePositions(cp, position) >= 0) continue;
          if (work.kind === 'event' && projectionHandles(p, work.event.type)) {
            envelope = this.applyOne(db, p, work.event, envelope);
          }
          next.set(p.name, position);
        }
      }
      for (; i < batch.length; i++) {
        const work = batch[i];
        if (work.kind !== 'event') continue;
        let envelope: RecordedEnvelope | undefined;
        for (const p of handlers(work.event.type)) envelope = this.applyOne(db, p, work.event, envelope);
      }
      for (const p of active) p.endBatch?.(db);
      if (
        batch.length > 0 &&
        (ahead === null || comparePositions(messagePosition(batch[batch.length - 1]), ahead) > 0)
      ) {
        const last = messagePosition(batch[batch.length - 1]);
        for (const p of active) next.set(p.name, last);
      }
      for (const p of active) {
        const cp = next.get(p.name) ?? null;
        if (cp !== null && cp !== this.checkpoints.get(p.name)) save.run(positionToString(cp), p.name);
      }
    };
    if (!writer) {
      inImmediateTransaction(this.db, apply);
      return next;
    }
    writer.begin();
    try {
      apply();
    } catch (err) {
      writer.rollback();
      throw err;
    }
    writer.commit();
    return next;
  }

  /** Applies one event to one projection; converted once per event, and only when someone handles it. */
  private applyOne(
    db: Database.Database,
    p: Projection,
    event: RecordedEvent,
    envelope: RecordedEnvelope | undefined,
  ): RecordedEnvelope | undefined {
    if (this.skips.get(p.name)?.has(event.id)) return envelope;
    try {
      // Foreign events need no valid metadata: they are never converted.
      const converted = envelope ?? fromRecorded(event);
      p.apply(db, converted);
      return converted;
    } catch (cause) {
      throw new ProjectionFailedError(p.name, event, { cause });
    }
  }

  /** The projections (of `active`, in registration order) handling an event type, cached per type. */
  private handlersOf(active: readonly Projection[]): (type: string) => readonly Projection[] {
    if (this.handlerCache?.active.length !== active.length || this.handlerCache.active.some((p, i) => p !== active[i]))
      this.handlerCache = { active, byType: new Map() };
    const { byType } = this.handlerCache;
    return (type) => {
      let list = byType.get(type);
      if (!list) byType.set(type, (list = active.filter((p) => projectionHandles(p, type))));
      return list;
    };
  }

  private fail(err: unknown): void {
    this.fatal = err instanceof Error ? err : new Error(String(err));
    this.logger.error(
      `Projection runner stopped: ${err instanceof Error ? err.message : String(err)}`,
      err instanceof Error ? (err.cause instanceof Error ? err.cause.stack : err.stack) : undefined,
    );
    this.settleAll(false);
  }

  private settleAll(reached: boolean): void {
    for (const waiter of this.waiters) waiter.settle(reached);
  }
}

const SAVE_CHECKPOINT = 'UPDATE projection_checkpoints SET position = ? WHERE name = ?';
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

function openReadDatabase(file: string, bulk = false): Database.Database {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file);
  if (bulk) {
    // A rebuild writes a scratch file that is published only once complete: a crash throws it
    // away, so it needs neither a journal nor fsync. The service reopens it in WAL mode.
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    // For a load without the writer thread (its rows then go through this connection).
    db.pragma('cache_size = -262144');
  } else {
    db.pragma('journal_mode = WAL');
  }
  // Read models are rebuildable, and the checkpoint rides in the same transaction as the rows.
  if (!bulk) db.pragma('synchronous = NORMAL');
  // A row rewritten in place (a webhook secret re-sealed under a new SECRETS_KEY) leaves no old
  // bytes in its page: FAST zeroes them where that costs no extra I/O.
  if (!bulk) db.pragma('secure_delete = FAST');
  db.pragma('busy_timeout = 5000');
  db.exec(`CREATE TABLE IF NOT EXISTS projection_checkpoints (
    name TEXT PRIMARY KEY, version INTEGER NOT NULL, position TEXT)`);
  return db;
}
