import { EVENT_STORE, parsePosition, positionToString, type EventStore, type Position } from '@filing/event-store';
import {
  APP_CONFIG,
  type AppConfig,
  ProcessorRegistry,
  type ProcessorMessage,
  StreamProcessor,
} from '@filing/platform';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { DELIVERY_EVENT_PREFIX } from '../deliveries/delivery.events';
import { ENDPOINT_EVENT_PREFIX, NOTIFICATIONS_SWITCHED } from '../endpoints/endpoint.events';
import { DeliveryCommands } from '../deliveries/delivery-commands';
import { factsText, NOTIFIABLE_EVENT_PREFIXES, type ResourceFacts } from '../notifications/notification-mapper';
import {
  checkpointOffTheLoop,
  inImmediateTransaction,
  cachedStatement as stmt,
  type WalCheckpointer,
} from '@filing/platform';
import { type BatchDecision, decideBatch } from './fanout-batch';
import { MemoryFanOutView } from './fanout-view';
import { type DeliveryRow, OpenDeliveries } from './open-deliveries';
import { PendingCancellations } from './pending-cancellations';
import { appendScheduled } from './scheduled-appends';

// Delivery events too: which deliveries are pending at a disable's position is read from the
// stream, never from the live read model (a replay would then cancel today's redeliveries).
// NOTIFIABLE_EVENT_PREFIXES holds the endpoint disable too (webhook_endpoint.disabled): one prefix each.
const FILTER_PREFIXES = [
  ...new Set([...NOTIFIABLE_EVENT_PREFIXES, ENDPOINT_EVENT_PREFIX, NOTIFICATIONS_SWITCHED, DELIVERY_EVENT_PREFIX]),
];
const MAX_BATCH = 500;
/**
 * How long deliveries opened or closed by batches that did nothing else may wait to be saved,
 * and how many: a drain of ~6,000 deliveries/s left ~20,000 rows for one transaction, which held
 * the event loop for 40–60 ms (new events' deliveries waited behind it); 2,000 take ~5 ms.
 */
const UNSAVED_LIMITS = { ms: 1_000, rows: 2_000 } as const;

/**
 * The webhooks subscription: reads `$all` in order and, for each notifiable event, schedules one
 * delivery per endpoint that was subscribed at that event's position. Its view (endpoints,
 * switches, resource facts) and its checkpoint live in `DATA_DIR/webhook-fanout.db`, written in
 * one transaction after the batch's appends: a crash in between re-runs the batch, and the
 * re-appended DeliveryScheduled events (deterministic ids, expected no_stream) write nothing.
 * Not in read.db: a replay swaps that file, and this state is not a read model anyone queries.
 * Deleting the file is safe: the fan-out starts over and every append is a no-op.
 */
@Injectable()
export class FanOutService {
  private readonly logger = new Logger('WebhookFanOut');
  private view = new MemoryFanOutView();
  private processor: StreamProcessor | null = null;
  private checkpoint: Position | null = null;
  private readonly caughtUpWaiters = new Set<() => void>();
  /**
   * Deliveries opened or closed by batches that did nothing else, and the last such batch's
   * position: saved with the next batch that writes anyway, by a timer, once `unsavedLimits.rows`
   * wait, or at stop. A transaction for each such batch (a drain's attempts) was ~7 % of the event
   * loop. The checkpoint stays before them until then: after a crash those batches run again, and
   * they only derive the same rows again.
   */
  private unsaved = new Map<string, DeliveryRow>();
  private unsavedPosition: Position | null = null;
  private flushTimer: NodeJS.Timeout | null = null;
  protected readonly unsavedLimits: { readonly ms: number; readonly rows: number } = UNSAVED_LIMITS;

  private db!: Database.Database;
  private rows!: OpenDeliveries;
  private cancellations: PendingCancellations | null = null;
  private walCheckpointer: WalCheckpointer | null = null;

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly deliveries: DeliveryCommands,
    @Optional() private readonly registry?: ProcessorRegistry,
  ) {}

  start(): void {
    if (this.processor) return;
    const file = join(this.config.dataDir, 'webhook-fanout.db');
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    // Its checkpoints (two fsyncs, up to ~4 ms) ran in a commit on the event loop about once a
    // second under the write bench.
    this.walCheckpointer = checkpointOffTheLoop(this.db, file, (message) =>
      this.logger.warn(`Fan-out WAL checkpoint: ${message}`),
    );
    // 4 MiB of page cache, not better-sqlite3's 16: its hot pages are the open deliveries and
    // the facts of streams seen lately; the cache is resident memory (issue #16).
    this.db.pragma('cache_size = -4096');
    this.setup();
    this.cancellations = new PendingCancellations(this.rows, this.store, this.logger);
    this.cancellations.start();
    this.processor = new StreamProcessor(
      this.store,
      {
        name: 'webhook-fanout',
        kind: 'reactor',
        filter: { eventTypePrefixes: FILTER_PREFIXES },
        maxBatch: MAX_BATCH,
        // A failed batch may have changed the in-memory view: start again from what was committed.
        beforeStart: () => this.load(),
        resumeFrom: () => this.checkpoint,
        handle: (batch) => this.process(batch),
      },
      { logger: this.logger },
    );
    this.registry?.register(this.processor);
    this.processor.start();
  }

  async stop(): Promise<void> {
    const processor = this.processor;
    this.processor = null;
    await processor?.stop();
    const cancellations = this.cancellations;
    this.cancellations = null;
    await cancellations?.stop();
    if (this.db?.open) {
      this.flushUnsaved();
      this.db.close();
    }
    const checkpointer = this.walCheckpointer;
    this.walCheckpointer = null;
    await checkpointer?.stop();
  }

  /** How many deliveries the fan-out holds as pending (tests, the memory bench): its file, and rows waiting to be saved. */
  openDeliveryCount(): number {
    let count = this.rows.openCount();
    for (const [id, row] of this.unsaved) count += Number(row.open) - Number(this.rows.get(id)?.open ?? false);
    return count;
  }

  /** Cancellations of pending deliveries recorded and not finished yet (tests). */
  cancellationsWaiting(): number {
    return this.rows.cancellationsWaiting();
  }

  /** The position the fan-out has fully handled (tests, readiness): saved, or only delivery rows left to save. */
  position(): Position | null {
    return this.unsavedPosition ?? this.checkpoint;
  }

  private setup(): void {
    this.db.exec(`CREATE TABLE IF NOT EXISTS webhook_fanout_checkpoint (name TEXT PRIMARY KEY, position TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS webhook_fanout_endpoints (id TEXT PRIMARY KEY, account_id TEXT NOT NULL,
        enabled INTEGER NOT NULL, deleted INTEGER NOT NULL, event_types TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS webhook_fanout_switches (account_id TEXT PRIMARY KEY, enabled INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS webhook_fanout_facts (stream_id TEXT PRIMARY KEY, facts TEXT NOT NULL)`);
    this.rows = new OpenDeliveries(this.db);
    this.rows.setup();
  }

  private load(): void {
    // A restart after a failure: what was not saved is derived again from the saved checkpoint on.
    this.dropUnsaved();
    const view = new MemoryFanOutView();
    for (const r of this.db.prepare('SELECT * FROM webhook_fanout_endpoints').all() as Array<{
      id: string;
      account_id: string;
      enabled: number;
      deleted: number;
      event_types: string;
    }>) {
      view.putEndpoint({
        id: r.id,
        accountId: r.account_id,
        enabled: r.enabled === 1,
        deleted: r.deleted === 1,
        eventTypes: JSON.parse(r.event_types) as string[],
      });
    }
    for (const r of this.db.prepare('SELECT * FROM webhook_fanout_switches').all() as Array<{
      account_id: string;
      enabled: number;
    }>) {
      view.putSwitch(r.account_id, r.enabled === 1);
    }
    this.view = view;
    const cp = this.db.prepare("SELECT position FROM webhook_fanout_checkpoint WHERE name = 'fanout'").get() as
      { position: string } | undefined;
    this.checkpoint = cp ? parsePosition(cp.position) : null;
  }

  /** The batch's decision, its appends, then one save (or, for delivery rows alone, a later one). */
  private async process(batch: readonly ProcessorMessage[]): Promise<void> {
    const decided = decideBatch(batch, {
      view: this.view,
      after: this.checkpoint,
      factsOf: this.factsOf,
      deliveryOf: (id) => this.unsaved.get(id) ?? this.rows.get(id),
    });
    await appendScheduled(this.store, this.logger, decided.scheduled);
    if (decided.position === null) return;
    const onlyDeliveries =
      decided.scheduled.length === 0 &&
      decided.cancellations.length === 0 &&
      decided.endpoints.size === 0 &&
      decided.switches.size === 0 &&
      decided.facts.size === 0;
    if (onlyDeliveries && this.unsaved.size + decided.deliveries.size < this.unsavedLimits.rows) {
      for (const [id, d] of decided.deliveries) this.unsaved.set(id, d);
      this.unsavedPosition = decided.position;
      this.flushTimer ??= setTimeout(this.flushUnsaved, this.unsavedLimits.ms).unref();
      return;
    }
    this.save(decided.position, decided);
    if (decided.cancellations.length > 0) this.cancellations?.wake();
  }

  private readonly factsOf = (streamId: string): ResourceFacts | undefined => {
    const row = stmt(this.db, 'SELECT facts FROM webhook_fanout_facts WHERE stream_id = ?').get(streamId) as
      { facts: string } | undefined;
    return row ? (JSON.parse(row.facts) as ResourceFacts) : undefined;
  };

  /** Saves what waits (the timer, stop); a failure is logged and left to the next save. */
  private readonly flushUnsaved = (): void => {
    this.flushTimer = null;
    if (this.unsavedPosition === null || !this.db?.open) return;
    try {
      this.save(this.unsavedPosition, NOTHING_MORE);
    } catch (err) {
      this.logger.error(
        `Saving the fan-out's delivery rows failed (retried with the next batch): ${(err as Error).message}`,
      );
    }
  };

  private dropUnsaved(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    this.unsaved = new Map();
    this.unsavedPosition = null;
  }

  /** One transaction: what waits, then this batch's rows (later changes last), and the checkpoint. */
  private save(cp: Position, batch: Omit<BatchDecision, 'position' | 'scheduled'>): void {
    const { endpoints, switches, facts, cancellations } = batch;
    const deliveries = [...this.unsaved, ...batch.deliveries];
    inImmediateTransaction(this.db, () => {
      for (const id of endpoints) {
        const e = this.view.endpoint(id);
        if (!e) continue;
        stmt(
          this.db,
          `INSERT INTO webhook_fanout_endpoints (id, account_id, enabled, deleted, event_types) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (id) DO UPDATE SET enabled = excluded.enabled, deleted = excluded.deleted, event_types = excluded.event_types`,
        ).run(e.id, e.accountId, e.enabled ? 1 : 0, e.deleted ? 1 : 0, JSON.stringify(e.eventTypes));
      }
      for (const account of switches) {
        stmt(
          this.db,
          `INSERT INTO webhook_fanout_switches (account_id, enabled) VALUES (?, ?)
           ON CONFLICT (account_id) DO UPDATE SET enabled = excluded.enabled`,
        ).run(account, this.view.switchOn(account) ? 1 : 0);
      }
      for (const [id, d] of deliveries) this.rows.put(id, d);
      for (const c of cancellations) this.rows.addCancellation(c.endpointId, c.reason, c.at);
      for (const [streamId, resourceFacts] of facts) {
        stmt(
          this.db,
          'INSERT INTO webhook_fanout_facts (stream_id, facts) VALUES (?, ?) ON CONFLICT (stream_id) DO UPDATE SET facts = excluded.facts',
        ).run(streamId, factsText(resourceFacts));
      }
      stmt(
        this.db,
        "INSERT INTO webhook_fanout_checkpoint (name, position) VALUES ('fanout', ?) ON CONFLICT (name) DO UPDATE SET position = excluded.position",
      ).run(positionToString(cp));
    });
    this.checkpoint = cp;
    this.dropUnsaved();
  }
}
/** A save with nothing but what waits (the timer, stop). */
const NOTHING_MORE: Omit<BatchDecision, 'position' | 'scheduled'> = {
  cancellations: [],
  endpoints: new Set(),
  switches: new Set(),
  deliveries: new Map(),
  facts: new Map(),
};
