import {
  comparePositions,
  EVENT_STORE,
  NO_STREAM,
  parsePosition,
  positionToString,
  WrongExpectedVersionError,
  type EventStore,
  type Position,
  type RecordedEvent,
} from '@filing/event-store';
import {
  APP_CONFIG,
  type AppConfig,
  buildMetadata,
  type EventMetadata,
  EventHandlingError,
  fromRecorded,
  ProcessorRegistry,
  type ProcessorMessage,
  StreamProcessor,
  streamName,
  toEventData,
} from '@filing/platform';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import {
  DELIVERY_EVENT_PREFIX,
  DELIVERY_STREAM,
  type DeliveryEvent,
  deliveryEnd,
  DeliveryEvents,
  type DeliveryScheduled,
} from '../deliveries/delivery.events';
import { ENDPOINT_EVENT_PREFIX, NOTIFICATIONS_SWITCHED } from '../endpoints/endpoint.events';
import { DeliveryCommands } from '../deliveries/delivery-commands';
import {
  factsText,
  mayHaveFacts,
  NOTIFIABLE_EVENT_PREFIXES,
  type ResourceFacts,
} from '../notifications/notification-mapper';
import {
  checkpointOffTheLoop,
  inImmediateTransaction,
  cachedStatement as stmt,
  type WalCheckpointer,
} from '@filing/platform';
import { fanOutStep } from './fanout-step';
import { decideDelivery, evolveDelivery, initialDelivery } from '../deliveries/delivery';
import { type DeliveryOwner, MemoryFanOutView } from './fanout-view';

// Delivery events too: which deliveries are pending at a disable's position is read from the
// stream, never from the live read model (a replay would then cancel today's redeliveries).
// NOTIFIABLE_EVENT_PREFIXES holds the endpoint disable too (webhook_endpoint.disabled): one prefix each.
const FILTER_PREFIXES = [
  ...new Set([...NOTIFIABLE_EVENT_PREFIXES, ENDPOINT_EVENT_PREFIX, NOTIFICATIONS_SWITCHED, DELIVERY_EVENT_PREFIX]),
];
const MAX_BATCH = 500;
const noFacts = (): undefined => undefined;
/**
 * DeliveryScheduled appends in flight at once: enough for the store to commit them in groups,
 * few enough that a burst (a batch fanned out to many endpoints) waits here, not in its queue.
 */
const MAX_APPENDS_IN_FLIGHT = 128;
/**
 * How long deliveries opened or closed by batches that did nothing else may wait to be saved,
 * and how many: a drain of ~6,000 deliveries/s left ~20,000 rows for one transaction, which held
 * the event loop for 40–60 ms (new events' deliveries waited behind it); 2,000 take ~5 ms.
 */
const UNSAVED_LIMITS = { ms: 1_000, rows: 2_000 } as const;

/** A delivery whose open/closed state changed in a batch, to be saved with its checkpoint. */
interface ChangedDelivery {
  readonly owner: DeliveryOwner;
  readonly open: boolean;
}

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
  private unsaved = new Map<string, ChangedDelivery>();
  private unsavedPosition: Position | null = null;
  private flushTimer: NodeJS.Timeout | null = null;
  protected readonly unsavedLimits: { readonly ms: number; readonly rows: number } = UNSAVED_LIMITS;

  private db!: Database.Database;
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
    if (this.db?.open) {
      this.flushUnsaved();
      this.db.close();
    }
    const checkpointer = this.walCheckpointer;
    this.walCheckpointer = null;
    await checkpointer?.stop();
  }

  /** How many deliveries the fan-out's view holds as pending: all it keeps of deliveries in memory (tests). */
  openDeliveryCount(): number {
    return this.view.openCount;
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
      CREATE TABLE IF NOT EXISTS webhook_fanout_facts (stream_id TEXT PRIMARY KEY, facts TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS webhook_fanout_deliveries (id TEXT PRIMARY KEY, endpoint_id TEXT NOT NULL,
        account_id TEXT NOT NULL, open INTEGER NOT NULL)`);
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
    // Row by row: a large backlog is not materialised as one array first.
    for (const r of this.db
      .prepare('SELECT id, endpoint_id, account_id FROM webhook_fanout_deliveries WHERE open = 1')
      .iterate() as IterableIterator<{ id: string; endpoint_id: string; account_id: string }>) {
      view.openDelivery(r.id, view.owner(r.endpoint_id, r.account_id));
    }
    this.view = view;
    const cp = this.db.prepare("SELECT position FROM webhook_fanout_checkpoint WHERE name = 'fanout'").get() as
      { position: string } | undefined;
    this.checkpoint = cp ? parsePosition(cp.position) : null;
  }

  private async process(batch: readonly ProcessorMessage[]): Promise<void> {
    const factsOverlay = new Map<string, ResourceFacts>();
    const factsOf = (streamId: string): ResourceFacts | undefined => {
      if (factsOverlay.has(streamId)) return factsOverlay.get(streamId);
      const row = stmt(this.db, 'SELECT facts FROM webhook_fanout_facts WHERE stream_id = ?').get(streamId) as
        { facts: string } | undefined;
      return row ? (JSON.parse(row.facts) as ResourceFacts) : undefined;
    };
    const endpoints = new Set<string>();
    const switches = new Set<string>();
    const cancels: Array<{ deliveryIds: string[]; reason: string; at: Position }> = [];
    const deliveries = new Map<string, ChangedDelivery>();
    const scheduled: Array<{ event: DeliveryScheduled; metadata: EventMetadata }> = [];
    let position: Position | null = null;

    for (const work of batch) {
      if (work.kind === 'checkpoint') {
        position = work.position;
        continue;
      }
      const { event } = work;
      position = event.position;
      if (this.checkpoint && comparePositions(event.position, this.checkpoint) <= 0) continue;
      if (event.type.startsWith(DELIVERY_EVENT_PREFIX)) {
        this.trackDelivery(event, deliveries);
        // A delivery that gave up is also `webhook_delivery.failed` (issue 50): fanned out below.
        if (event.type !== DeliveryEvents.DeliveryFailed) continue;
      }
      let step: ReturnType<typeof fanOutStep>;
      try {
        step = fanOutStep(this.view, mayHaveFacts(event) ? factsOf : noFacts, event);
      } catch (cause) {
        // Named, so the supervisor can tell a poison event from a passing store failure.
        throw new EventHandlingError('webhook-fanout', event, { cause });
      }
      if (step.facts) factsOverlay.set(step.facts[0], step.facts[1]);
      if (step.endpointChanged) endpoints.add(step.endpointChanged);
      if (step.switchChanged) switches.add(step.switchChanged);
      if (step.cancel) {
        // Pending here, at the disable's position, as the fan-out's own view says.
        const reason =
          'endpointId' in step.cancel ? 'endpoint disabled or deleted' : 'webhook notifications switched off';
        cancels.push({ deliveryIds: this.view.openDeliveries(step.cancel), reason, at: event.position });
      }
      const correlation = typeof event.metadata.correlation_id === 'string' ? event.metadata.correlation_id : event.id;
      // One event's deliveries share their metadata (an event's notification is one account's).
      let metadata: EventMetadata | undefined;
      for (const s of step.scheduled) {
        if (metadata?.account_id !== s.data.account_id) {
          metadata = buildMetadata({
            account_id: s.data.account_id,
            actor: 'system:webhooks',
            correlation_id: correlation,
            causation_id: event.id,
          });
        }
        scheduled.push({ event: s, metadata });
        // Open from the event's position on, though its own event lands later in the stream.
        const owner = this.view.owner(s.data.endpoint_id, s.data.account_id);
        this.view.openDelivery(s.data.delivery_id, owner);
        deliveries.set(s.data.delivery_id, { owner, open: true });
      }
    }

    // In order, at most MAX_APPENDS_IN_FLIGHT at a time: each worker takes the next one.
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(MAX_APPENDS_IN_FLIGHT, scheduled.length) }, async () => {
        while (next < scheduled.length) {
          const s = scheduled[next++];
          await this.schedule(s.event, s.metadata);
        }
      }),
    );
    if (cancels.length > 0) await this.cancelPending(cancels);
    if (position === null) return;
    const onlyDeliveries =
      scheduled.length === 0 &&
      cancels.length === 0 &&
      endpoints.size === 0 &&
      switches.size === 0 &&
      factsOverlay.size === 0;
    if (onlyDeliveries && this.unsaved.size + deliveries.size < this.unsavedLimits.rows) {
      for (const [id, d] of deliveries) this.unsaved.set(id, d);
      this.unsavedPosition = position;
      this.flushTimer ??= setTimeout(this.flushUnsaved, this.unsavedLimits.ms).unref();
      return;
    }
    this.save(position, { endpoints, switches, deliveries, factsOverlay });
  }

  /** Saves what waits (the timer, stop); a failure is logged and left to the next save. */
  private readonly flushUnsaved = (): void => {
    this.flushTimer = null;
    if (this.unsavedPosition === null || !this.db?.open) return;
    try {
      this.save(this.unsavedPosition, { endpoints: [], switches: [], deliveries: new Map(), factsOverlay: new Map() });
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
  private save(
    cp: Position,
    batch: {
      endpoints: Iterable<string>;
      switches: Iterable<string>;
      deliveries: ReadonlyMap<string, ChangedDelivery>;
      factsOverlay: ReadonlyMap<string, ResourceFacts>;
    },
  ): void {
    const { endpoints, switches, factsOverlay } = batch;
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
      for (const [id, d] of deliveries) {
        stmt(
          this.db,
          `INSERT INTO webhook_fanout_deliveries (id, endpoint_id, account_id, open) VALUES (?, ?, ?, ?)
           ON CONFLICT (id) DO UPDATE SET open = excluded.open`,
        ).run(id, d.owner.endpointId, d.owner.accountId, d.open ? 1 : 0);
      }
      for (const [streamId, facts] of factsOverlay) {
        stmt(
          this.db,
          'INSERT INTO webhook_fanout_facts (stream_id, facts) VALUES (?, ?) ON CONFLICT (stream_id) DO UPDATE SET facts = excluded.facts',
        ).run(streamId, factsText(facts));
      }
      stmt(
        this.db,
        "INSERT INTO webhook_fanout_checkpoint (name, position) VALUES ('fanout', ?) ON CONFLICT (name) DO UPDATE SET position = excluded.position",
      ).run(positionToString(cp));
    });
    this.checkpoint = cp;
    this.dropUnsaved();
  }

  private async schedule(event: DeliveryScheduled, metadata: EventMetadata): Promise<void> {
    const id = event.data.delivery_id;
    try {
      await this.store.appendToStream(streamName(DELIVERY_STREAM, id), [toEventData(event, metadata, id)], {
        expectedRevision: NO_STREAM,
      });
    } catch (err) {
      // Only a stream that began with another event: not something a re-run can fix.
      if (!(err instanceof WrongExpectedVersionError)) throw err;
      this.logger.error(`Delivery stream ${id} exists with other contents; not scheduled again`);
    }
  }

  /**
   * Keeps the view's picture of which deliveries are pending, from their own events. A closed
   * delivery leaves the view; its row (saved with this batch, or earlier) says whose it was if a
   * redelivery opens it again.
   */
  private trackDelivery(event: RecordedEvent, changed: Map<string, ChangedDelivery>): void {
    const id = typeof event.data.delivery_id === 'string' ? event.data.delivery_id : null;
    if (!id) return;
    const open = this.view.openOwner(id);
    if (event.type === DeliveryEvents.DeliveryScheduled) {
      if (open || this.closedOwner(id, changed)) return;
      const { endpoint_id, account_id } = event.data as { endpoint_id: string; account_id: string };
      const owner = this.view.owner(endpoint_id, account_id);
      this.view.openDelivery(id, owner);
      changed.set(id, { owner, open: true });
    } else if (open && deliveryEnd(event) !== null) {
      this.view.closeDelivery(id);
      changed.set(id, { owner: open, open: false });
    } else if (event.type === DeliveryEvents.DeliveryRedeliveryRequested) {
      const owner = open ?? this.closedOwner(id, changed);
      if (!owner) return;
      this.view.openDelivery(id, owner);
      changed.set(id, { owner, open: true });
    }
  }

  /** Whose a delivery the view no longer holds was: closed in this batch, in one not saved yet, or saved before. */
  private closedOwner(id: string, changed: ReadonlyMap<string, ChangedDelivery>): DeliveryOwner | undefined {
    const inBatch = changed.get(id) ?? this.unsaved.get(id);
    if (inBatch) return inBatch.owner;
    const row = stmt(this.db, 'SELECT endpoint_id, account_id FROM webhook_fanout_deliveries WHERE id = ?').get(id) as
      { endpoint_id: string; account_id: string } | undefined;
    return row && this.view.owner(row.endpoint_id, row.account_id);
  }

  /**
   * Ends, as cancelled, the deliveries that were pending at a disable's (or switch-off's)
   * position — decided as of that position, so a replay decides the same: a delivery whose stream
   * has anything after the position (an attempt, a redelivery, the cancellation a first run made)
   * is left alone. The dispatcher's own check at send time stops whatever that leaves pending.
   */
  private async cancelPending(
    cancels: ReadonlyArray<{ deliveryIds: string[]; reason: string; at: Position }>,
  ): Promise<void> {
    for (const { deliveryIds, reason, at } of cancels) {
      for (const id of deliveryIds) await this.cancelAsOf(id, reason, at);
    }
  }

  private async cancelAsOf(deliveryId: string, reason: string, at: Position): Promise<void> {
    const streamId = streamName(DELIVERY_STREAM, deliveryId);
    for (let attempt = 0; attempt < 5; attempt++) {
      const events = await this.store.readStream(streamId);
      // Its own DeliveryScheduled may land after `at` (the fan-out appends it later): not a change.
      const changedSince = events.some(
        (e) => e.type !== DeliveryEvents.DeliveryScheduled && comparePositions(e.position, at) > 0,
      );
      if (events.length === 0 || changedSince) return;
      const state = events.reduce((s, e) => evolveDelivery(s, fromRecorded<DeliveryEvent>(e)), initialDelivery);
      const decided = decideDelivery(state, { kind: 'cancel', deliveryId, reason });
      if (decided.length === 0) return;
      const metadata = buildMetadata({
        actor: 'system:webhooks',
        causation_id: null,
        account_id: state.accountId,
        correlation_id: deliveryId,
      });
      try {
        await this.store.appendToStream(
          streamId,
          decided.map((e) => toEventData(e, metadata)),
          { expectedRevision: events[events.length - 1].revision },
        );
        return;
      } catch (err) {
        // Someone wrote meanwhile (an attempt): read again, it is now "changed since".
        if (!(err instanceof WrongExpectedVersionError)) throw err;
      }
    }
  }
}
