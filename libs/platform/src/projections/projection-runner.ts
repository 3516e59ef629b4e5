import {
  comparePositions,
  parsePosition,
  positionToString,
  type EventStore,
  type EventSubscription,
  type Position,
  type SubscriptionMessage,
} from '@filing/event-store';
import { Logger, type LoggerService } from '@nestjs/common';
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fromRecorded, type RecordedEnvelope } from '../events/envelope';
import { projectionHandles, type Projection } from './projection';

export interface ProjectionRunnerOptions {
  readonly store: EventStore;
  /** `DATA_DIR/read.db`, or `:memory:`. */
  readonly file: string;
  readonly projections?: readonly Projection[];
  /** Most events applied in one transaction (default 500). */
  readonly maxBatch?: number;
  /** Apply nothing after this position, and stop there (rebuilds and audits up to a known point). */
  readonly stopAt?: Position;
  readonly logger?: Pick<LoggerService, 'log' | 'error'>;
}

/** An event a projection could not apply: the runner stops on it rather than skip it. */
export class ProjectionFailedError extends Error {
  override readonly name = 'ProjectionFailedError';
  constructor(
    readonly projection: string,
    readonly eventId: string,
    readonly position: Position,
    options: { cause: unknown },
  ) {
    super(`Projection ${projection} failed on event ${eventId} at ${positionToString(position)}`, options);
  }
}

type Work = Exclude<SubscriptionMessage, { kind: 'caught-up' }>;

interface Waiter {
  readonly position: Position;
  readonly settle: (reached: boolean) => void;
}

/**
 * Keeps every read model up to date from one `$all` subscription. Each projection has its own
 * checkpoint; rows and checkpoints commit in one SQLite transaction, so a crash never applies an
 * event twice or skips one. The subscription is unfiltered on purpose: every event advances
 * every checkpoint, so read-your-writes never waits on a projection that ignores the event.
 *
 * A failure applying an event is never skipped over: the batch rolls back, the runner stops and
 * logs it, `isCaughtUp()` reports false (readyz shows it) and waiters are released with false.
 * `start()` again (or a restart) retries from the checkpoint.
 */
export class ProjectionRunner {
  private current: Database.Database;
  private readonly stopAt: Position | undefined;
  private applied = 0;
  private readonly store: EventStore;
  private readonly projections: Projection[] = [];
  private checkpoints = new Map<string, Position | null>();
  private readonly maxBatch: number;
  private readonly logger: Pick<LoggerService, 'log' | 'error'>;
  private readonly waiters = new Set<Waiter>();
  private subscription: EventSubscription | null = null;
  private pump: Promise<void> | null = null;
  private buffer: Work[] = [];
  private scheduled: NodeJS.Immediate | null = null;
  private running = false;
  /** Bumped by stop(): late callbacks of an older subscription do nothing. */
  private generation = 0;
  private failure: unknown = null;
  private saveCheckpoint: Database.Statement<[string, string]> | undefined;

  constructor(options: ProjectionRunnerOptions) {
    this.store = options.store;
    this.maxBatch = options.maxBatch ?? 500;
    this.logger = options.logger ?? new Logger(ProjectionRunner.name);
    this.stopAt = options.stopAt;
    this.current = openReadDatabase(options.file);
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
    this.current = openReadDatabase(file);
    this.saveCheckpoint = undefined;
    this.checkpoints = new Map();
    if (old.open) old.close();
    if (wasRunning) await this.start();
    else this.prepare();
  }

  /** Registers a projection; only while stopped. */
  add(projection: Projection): void {
    if (this.running) throw new Error('Add projections before start()');
    if (this.projections.some((p) => p.name === projection.name)) {
      throw new Error(`Duplicate projection name ${projection.name}`);
    }
    this.projections.push(projection);
  }

  /** Creates tables (rebuilding projections whose version changed), then subscribes. */
  async start(): Promise<void> {
    if (this.running) return;
    this.failure = null;
    this.prepare();
    this.running = true;
    if (this.projections.length === 0) return;
    const generation = ++this.generation;
    const subscription = this.store.subscribeToAll({ from: this.position() ?? 'start' });
    this.subscription = subscription;
    this.pump = this.consume(subscription, generation);
  }

  async stop(): Promise<void> {
    this.running = false;
    this.generation++;
    // Unapplied buffered events are dropped: the checkpoint still precedes them.
    this.buffer = [];
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = null;
    const { subscription, pump } = this;
    this.subscription = null;
    this.pump = null;
    await subscription?.stop();
    await pump;
  }

  /** Stops, closes the read database. */
  async close(): Promise<void> {
    await this.stop();
    this.settleAll(false);
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

  /** The lowest checkpoint across projections; null when one has applied nothing yet. */
  position(): Position | null {
    let lowest: Position | null = null;
    for (const p of this.projections) {
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

  /** The failure that stopped the runner, if any. */
  get lastError(): unknown {
    return this.failure;
  }

  async isCaughtUp(): Promise<boolean> {
    if (!this.running || this.failure !== null) return false;
    const head = await this.store.headPosition();
    return head === null || this.reached(head);
  }

  /** True once every projection has reached `position`; false at the timeout or on a failure. */
  waitFor(position: Position | null, timeoutMs: number): Promise<boolean> {
    if (position === null || this.reached(position)) return Promise.resolve(true);
    if (this.failure !== null) return Promise.resolve(false);
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

  private reached(position: Position): boolean {
    return this.projections.every((p) => {
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
          if (row && row.version !== p.version) {
            this.logger.log(`Projection ${p.name}: version ${row.version} → ${p.version}, rebuilding`);
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
      })
      .immediate();
  }

  private reset(p: Projection): void {
    for (const table of p.tables) this.db.exec(`DROP TABLE IF EXISTS "${table.replace(/"/g, '""')}"`);
    this.db.prepare('DELETE FROM projection_checkpoints WHERE name = ?').run(p.name);
  }

  private async consume(subscription: EventSubscription, generation: number): Promise<void> {
    try {
      for await (const message of subscription) {
        if (generation !== this.generation) return;
        if (message.kind === 'caught-up') continue;
        const position = message.kind === 'event' ? message.event.position : message.position;
        if (this.stopAt && comparePositions(position, this.stopAt) > 0) {
          this.flush(generation);
          return;
        }
        this.buffer.push(message);
        // Messages that arrive together (catch-up reads, group commits) are delivered within
        // microtasks; the flush waits for the next macrotask, so they share one transaction.
        if (this.buffer.length >= this.maxBatch) {
          this.flush(generation);
          // A long catch-up would otherwise run on microtasks alone and starve HTTP requests.
          await new Promise<void>((resolve) => setImmediate(resolve));
        } else {
          this.scheduled ??= setImmediate(() => this.flush(generation));
        }
      }
    } catch (err) {
      if (generation === this.generation) this.fail(err);
    }
  }

  private flush(generation: number): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = null;
    if (generation !== this.generation || this.buffer.length === 0) return;
    const batch = this.buffer;
    this.buffer = [];
    try {
      this.checkpoints = this.applyBatch(batch);
      this.applied += batch.filter((work) => work.kind === 'event').length;
    } catch (err) {
      this.fail(err);
      return;
    }
    for (const waiter of this.waiters) if (this.reached(waiter.position)) waiter.settle(true);
  }

  /** One transaction: every projection's rows and checkpoints, or nothing. Returns the new checkpoints. */
  private applyBatch(batch: readonly Work[]): Map<string, Position | null> {
    const next = new Map(this.checkpoints);
    const save = (this.saveCheckpoint ??= this.db.prepare('UPDATE projection_checkpoints SET position = ? WHERE name = ?'));
    this.db
      .transaction(() => {
        for (const work of batch) {
          const position = work.kind === 'event' ? work.event.position : work.position;
          let envelope: RecordedEnvelope | undefined;
          for (const p of this.projections) {
            const cp = next.get(p.name) ?? null;
            if (cp !== null && comparePositions(cp, position) >= 0) continue;
            if (work.kind === 'event' && projectionHandles(p, work.event.type)) {
              const { event } = work;
              try {
                // Converted only when someone handles it: foreign events need no valid metadata.
                envelope ??= fromRecorded(event);
                p.apply(this.db, envelope);
              } catch (cause) {
                throw new ProjectionFailedError(p.name, event.id, event.position, { cause });
              }
            }
            next.set(p.name, position);
          }
        }
        for (const p of this.projections) {
          const cp = next.get(p.name) ?? null;
          if (cp !== null && cp !== this.checkpoints.get(p.name)) save.run(positionToString(cp), p.name);
        }
      })
      .immediate();
    return next;
  }

  private fail(err: unknown): void {
    this.failure = err;
    this.logger.error(
      `Projection runner stopped: ${err instanceof Error ? err.message : String(err)}`,
      err instanceof Error ? (err.cause instanceof Error ? err.cause.stack : err.stack) : undefined,
    );
    this.settleAll(false);
    void this.stop().catch((stopErr) => this.logger.error(`Stopping the subscription failed: ${String(stopErr)}`));
  }

  private settleAll(reached: boolean): void {
    for (const waiter of this.waiters) waiter.settle(reached);
  }
}

function openReadDatabase(file: string): Database.Database {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  // Read models are rebuildable, and the checkpoint rides in the same transaction as the rows.
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.exec(`CREATE TABLE IF NOT EXISTS projection_checkpoints (
    name TEXT PRIMARY KEY, version INTEGER NOT NULL, position TEXT)`);
  return db;
}
