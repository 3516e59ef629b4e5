import type { EventStore, Position } from '@filing/event-store';
import { Logger, type LoggerService } from '@nestjs/common';
import type Database from 'better-sqlite3';
import type { HaltReport, ProcessorMessage, ProcessorStatus } from '../processors/stream-processor';
import { BatchApplier, ProjectionFailedError } from './batch-applier';
import { CheckpointStore } from './checkpoint-store';
import { LiveProjector } from './live-projector';
import { assertRegistrable, type Projection } from './projection';
import { ReadDatabase } from './read-database';
import { Rebuilder } from './rebuilder';

export { ProjectionFailedError } from './batch-applier';

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

/**
 * Keeps every read model up to date, from three parts: the live projector (one stream processor
 * on an unfiltered `$all` subscription, so every event advances every checkpoint and
 * read-your-writes never waits on a projection that ignores the event), the rebuilder (a bulk
 * replay into a scratch file) and the checkpoint store. Each projection has its own checkpoint;
 * rows and checkpoints commit in one SQLite transaction (`BatchApplier`), so a crash never
 * applies an event twice or skips one.
 *
 * A failure rolls the batch back and the processor restarts from the checkpoints with backoff. A
 * projection that fails on the same event again and again is halted alone — logged, shown by
 * `/readyz` and `/metrics` — and the others go on; it is tried again at the next start.
 */
export class ProjectionRunner {
  private readonly database: ReadDatabase;
  private applied = 0;
  private readonly options: ProjectionRunnerOptions;
  private readonly headSkipsTypes: readonly string[];
  private readonly projections: Projection[] = [];
  private readonly checkpoints: CheckpointStore;
  private readonly live: LiveProjector;
  private readonly rebuilder: Rebuilder;
  private readonly applier: BatchApplier;
  private readonly logger: Pick<LoggerService, 'log' | 'error' | 'warn'>;
  private readonly isolateFailures: boolean;
  private readonly bulk: boolean;
  private running = false;
  private fatal: Error | null = null;

  constructor(options: ProjectionRunnerOptions) {
    this.options = options;
    this.logger = options.logger ?? new Logger(ProjectionRunner.name);
    this.isolateFailures = options.isolateFailures ?? true;
    this.bulk = options.bulk ?? false;
    this.headSkipsTypes = options.headSkipsTypes ?? [];
    this.checkpoints = new CheckpointStore(this.logger);
    this.live = new LiveProjector({
      store: options.store,
      ...(options.stopAt && { stopAt: options.stopAt }),
      ...(options.backoff && { backoff: options.backoff }),
      logger: this.logger,
      projections: this.projections,
      checkpoints: this.checkpoints,
      maxBatch: options.maxBatch ?? 500,
      isolateFailures: this.isolateFailures,
      handle: (batch) => this.handle(batch),
      fail: (err) => this.fail(err),
    });
    this.rebuilder = new Rebuilder(options.store);
    this.applier = new BatchApplier(this.checkpoints, (name, id) => this.live.isSkipped(name, id));
    this.database = new ReadDatabase(options.file, this.bulk, (message) => {
      this.logger.warn(message);
    });
    for (const p of options.projections ?? []) this.add(p);
  }

  /**
   * The read database. Read it at every use and never keep statements prepared on it: a replay
   * swaps in a rebuilt database (`switchTo`). `cachedStatement(runner.db, sql)` caches safely.
   */
  get db(): Database.Database {
    return this.database.db;
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
    const old = this.database.open(file);
    this.checkpoints.forget();
    if (old.open) old.close();
    if (wasRunning) await this.start();
    else this.prepare();
  }

  /** Registers a projection; only while stopped. */
  add(projection: Projection): void {
    if (this.running) throw new Error('Add projections before start()');
    assertRegistrable(this.projections, projection, this.headSkipsTypes);
    this.projections.push(projection);
  }

  /** Creates tables (rebuilding projections whose version changed), then subscribes. */
  async start(): Promise<void> {
    if (this.running) return;
    this.fatal = null;
    this.live.clearHalts();
    this.prepare();
    this.running = true;
    if (this.projections.length === 0) return;
    this.live.start();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.live.stop();
  }

  /** Stops, closes the read database. */
  async close(): Promise<void> {
    await this.stop();
    this.live.settleAll(false);
    await this.database.close();
  }

  /** Drops every projection's tables and checkpoint, then replays the whole stream. */
  async rebuild(): Promise<void> {
    await this.stop();
    this.checkpoints.resetAll(this.db, this.projections);
    await this.start();
  }

  /**
   * A bulk catch-up, up to `until` (null: an empty log; the tables are made, nothing is read):
   * pages of `$all` read and applied in turn (written a few pages to a transaction on the writer
   * thread, one each without it), without a subscription. It is what a rebuild needs and no
   * more: any failure ends the run (thrown, and kept as `lastError`) instead of being retried.
   * Only while stopped.
   */
  async replay(options: {
    readonly until: Position | null;
    readonly pageSize: number;
    readonly onPage?: () => void;
  }): Promise<void> {
    if (this.running) throw new Error('replay() runs on a stopped runner');
    this.fatal = null;
    this.live.clearHalts();
    this.prepare();
    if (this.projections.length === 0 || options.until === null) return;
    await this.live.loadSkips();
    const threaded = this.bulk && !this.isolateFailures && this.options.file !== ':memory:';
    await this.rebuilder.replay({
      from: this.live.resumePosition(),
      until: options.until,
      pageSize: options.pageSize,
      ...(options.onPage && { onPage: options.onPage }),
      threadedFile: threaded ? this.options.file : null,
      handle: (batch) => this.handle(batch),
    });
  }

  /** The lowest checkpoint across projections; null when one has applied nothing yet. */
  position(): Position | null {
    return this.checkpoints.lowest(this.projections);
  }

  /** Each projection's checkpoint (null: nothing applied yet), for metrics and operators. */
  projectionCheckpoints(): ReadonlyMap<string, Position | null> {
    return new Map(this.projections.map((p) => [p.name, this.checkpoints.get(p.name)]));
  }

  /** One status per projection, named `projection:<name>`, for /readyz and /metrics. */
  statuses(): ProcessorStatus[] {
    return this.live.statuses();
  }

  /** The failure that halted the runner (or, with isolation off, any failure), if any. */
  get lastError(): Error | null {
    return this.fatal;
  }

  async isCaughtUp(): Promise<boolean> {
    if (!this.running || this.fatal !== null || this.live.haltedCount > 0) return false;
    if (this.live.stalled) return false;
    const head = await this.headPosition();
    return head === null || this.live.reached(head);
  }

  /** The head of the log this runner follows, as the store has it now (null: empty). */
  headPosition(): Promise<Position | null> {
    return this.options.store.headPosition({ skipTypes: this.headSkipsTypes });
  }

  /**
   * The halted projections among `names` (every one when omitted), with the event each stopped
   * on: what a request that needs them answers with, at once, instead of waiting.
   */
  haltedProjections(names?: Iterable<string>): Array<HaltReport & { readonly projection: string }> {
    return this.live.haltedProjections(names);
  }

  /**
   * True once every projection in service has reached `position`; false at the timeout or on a
   * failure. A halted projection is not waited on (it will not move): a request that needs one
   * asks `haltedProjections` and answers 503 instead of reading it.
   */
  waitFor(position: Position | null, timeoutMs: number): Promise<boolean> {
    if (position === null || this.live.reached(position)) return Promise.resolve(true);
    if (this.fatal !== null) return Promise.resolve(false);
    return this.live.waitFor(position, timeoutMs);
  }

  /** Ends a bulk load: creates the indexes it left out (see `Rebuilder.createDeferredIndexes`). */
  createDeferredIndexes(): void {
    this.rebuilder.createDeferredIndexes(this.db);
  }

  private prepare(): void {
    const defer = this.bulk ? () => this.rebuilder.deferIndexes(this.db, this.projections) : undefined;
    this.checkpoints.load(this.db, this.projections, defer);
  }

  /** Applies and commits a batch, live or in a replay; on a failure, what came before the failing event. */
  private handle(batch: readonly ProcessorMessage[]): void {
    const resumed = this.live.learnSkips(batch);
    try {
      this.checkpoints.commit(this.applyBatch(batch));
    } catch (err) {
      // Commit what came before the failing event, so every checkpoint stops right before it.
      const failedAt =
        err instanceof ProjectionFailedError
          ? batch.findIndex((w) => w.kind === 'event' && w.event.id === err.event.id)
          : -1;
      if (failedAt > 0) this.checkpoints.commit(this.applyBatch(batch.slice(0, failedAt)));
      if (!this.isolateFailures) this.fail(err);
      throw err;
    }
    this.applied += batch.filter((work) => work.kind === 'event').length;
    // Only after the batch: applied while halted, it would have moved past what it never applied.
    if (resumed.length > 0) this.live.resume(resumed);
    for (const p of this.projections) {
      try {
        p.afterCommit?.();
      } catch (err) {
        this.logger.error(`Projection ${p.name} afterCommit: ${String(err)}`);
      }
    }
    this.live.settleReached();
  }

  private applyBatch(batch: readonly ProcessorMessage[]): Map<string, Position | null> {
    const kind = { rebuild: this.bulk && !this.isolateFailures };
    return this.applier.apply(this.rebuilder.target(this.db), this.live.active(), batch, kind);
  }

  private fail(err: unknown): void {
    this.fatal = err instanceof Error ? err : new Error(String(err));
    this.logger.error(
      `Projection runner stopped: ${err instanceof Error ? err.message : String(err)}`,
      err instanceof Error ? (err.cause instanceof Error ? err.cause.stack : err.stack) : undefined,
    );
    this.live.settleAll(false);
  }
}
