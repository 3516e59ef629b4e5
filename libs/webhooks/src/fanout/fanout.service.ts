import {
  comparePositions,
  EVENT_STORE,
  NO_STREAM,
  parsePosition,
  positionToString,
  WrongExpectedVersionError,
  type EventStore,
  type Position,
} from '@filing/event-store';
import {
  APP_CONFIG,
  type AppConfig,
  buildMetadata,
  type CommandContext,
  EventHandlingError,
  ProcessorRegistry,
  type ProcessorMessage,
  ProjectionRunner,
  StreamProcessor,
  streamName,
  toEventData,
} from '@filing/platform';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { DELIVERY_STREAM, type DeliveryScheduled } from '../deliveries/delivery.events';
import { DeliveryCommands } from '../deliveries/delivery-commands';
import { NOTIFIABLE_EVENT_PREFIXES, type ResourceFacts } from '../notifications/notification-mapper';
import { cachedStatement as stmt } from '@filing/platform';
import { type CancelScope, fanOutStep } from './fanout-step';
import { MemoryFanOutView } from './fanout-view';

const FILTER_PREFIXES = [...NOTIFIABLE_EVENT_PREFIXES, 'webhooks.Endpoint', 'webhooks.NotificationsSwitched'];
const MAX_BATCH = 500;

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
  private lastAppended: Position | null = null;
  private checkpoint: Position | null = null;
  private readonly caughtUpWaiters = new Set<() => void>();

  private db!: Database.Database;

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly runner: ProjectionRunner,
    private readonly deliveries: DeliveryCommands,
    @Optional() private readonly registry?: ProcessorRegistry,
  ) {}

  start(): void {
    if (this.processor) return;
    this.db = new Database(join(this.config.dataDir, 'webhook-fanout.db'));
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
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
    if (this.db?.open) this.db.close();
  }

  /** The position the fan-out has fully handled (tests, readiness). */
  position(): Position | null {
    return this.checkpoint;
  }

  private setup(): void {
    this.db.exec(`CREATE TABLE IF NOT EXISTS webhook_fanout_checkpoint (name TEXT PRIMARY KEY, position TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS webhook_fanout_endpoints (id TEXT PRIMARY KEY, account_id TEXT NOT NULL,
        enabled INTEGER NOT NULL, deleted INTEGER NOT NULL, event_types TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS webhook_fanout_switches (account_id TEXT PRIMARY KEY, enabled INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS webhook_fanout_facts (stream_id TEXT PRIMARY KEY, facts TEXT NOT NULL)`);
  }

  private load(): void {
    const view = new MemoryFanOutView();
    for (const r of this.db.prepare('SELECT * FROM webhook_fanout_endpoints').all() as Array<{
      id: string; account_id: string; enabled: number; deleted: number; event_types: string;
    }>) {
      view.putEndpoint({ id: r.id, accountId: r.account_id, enabled: r.enabled === 1, deleted: r.deleted === 1, eventTypes: JSON.parse(r.event_types) });
    }
    for (const r of this.db.prepare('SELECT * FROM webhook_fanout_switches').all() as Array<{ account_id: string; enabled: number }>) {
      view.putSwitch(r.account_id, r.enabled === 1);
    }
    this.view = view;
    const cp = this.db.prepare("SELECT position FROM webhook_fanout_checkpoint WHERE name = 'fanout'").get() as { position: string } | undefined;
    this.checkpoint = cp ? parsePosition(cp.position) : null;
  }

  private async process(batch: readonly ProcessorMessage[]): Promise<void> {
    const factsOverlay = new Map<string, ResourceFacts>();
    const factsOf = (streamId: string): ResourceFacts | undefined => {
      if (factsOverlay.has(streamId)) return factsOverlay.get(streamId);
      const row = stmt(this.db, 'SELECT facts FROM webhook_fanout_facts WHERE stream_id = ?').get(streamId) as { facts: string } | undefined;
      return row ? (JSON.parse(row.facts) as ResourceFacts) : undefined;
    };
    const endpoints = new Set<string>();
    const switches = new Set<string>();
    const cancels: Array<{ scope: CancelScope; before: Position }> = [];
    const scheduled: Array<{ event: DeliveryScheduled; causedBy: { id: string; correlation: string } }> = [];
    let position: Position | null = null;

    for (const work of batch) {
      if (work.kind === 'checkpoint') {
        position = work.position;
        continue;
      }
      const { event } = work;
      position = event.position;
      if (this.checkpoint && comparePositions(event.position, this.checkpoint) <= 0) continue;
      let step: ReturnType<typeof fanOutStep>;
      try {
        step = fanOutStep(this.view, factsOf, event);
      } catch (cause) {
        // Named, so the supervisor can tell a poison event from a passing store failure.
        throw new EventHandlingError('webhook-fanout', event, { cause });
      }
      if (step.facts) factsOverlay.set(step.facts[0], step.facts[1]);
      if (step.endpointChanged) endpoints.add(step.endpointChanged);
      if (step.switchChanged) switches.add(step.switchChanged);
      if (step.cancel) cancels.push({ scope: step.cancel, before: event.position });
      const correlation = typeof event.metadata.correlation_id === 'string' ? event.metadata.correlation_id : event.id;
      for (const s of step.scheduled) scheduled.push({ event: s, causedBy: { id: event.id, correlation } });
    }

    await Promise.all(scheduled.map((s) => this.schedule(s.event, s.causedBy)));
    if (cancels.length > 0) await this.cancelPending(cancels);
    if (position === null) return;
    const cp = position;

    this.db
      .transaction(() => {
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
        for (const [streamId, facts] of factsOverlay) {
          stmt(
            this.db,
            'INSERT INTO webhook_fanout_facts (stream_id, facts) VALUES (?, ?) ON CONFLICT (stream_id) DO UPDATE SET facts = excluded.facts',
          ).run(streamId, JSON.stringify(facts));
        }
        stmt(
          this.db,
          "INSERT INTO webhook_fanout_checkpoint (name, position) VALUES ('fanout', ?) ON CONFLICT (name) DO UPDATE SET position = excluded.position",
        ).run(positionToString(cp));
      })
      .immediate();
    this.checkpoint = cp;
  }

  private async schedule(event: DeliveryScheduled, causedBy: { id: string; correlation: string }): Promise<void> {
    const context: CommandContext = {
      account_id: event.data.account_id,
      actor: 'system:webhooks',
      correlation_id: causedBy.correlation,
      causation_id: causedBy.id,
    };
    const id = event.data.delivery_id;
    try {
      const result = await this.store.appendToStream(
        streamName(DELIVERY_STREAM, id),
        [toEventData(event, buildMetadata(context), id)],
        { expectedRevision: NO_STREAM },
      );
      if (!this.lastAppended || comparePositions(result.position, this.lastAppended) > 0) this.lastAppended = result.position;
    } catch (err) {
      // Only a stream that began with another event: not something a re-run can fix.
      if (!(err instanceof WrongExpectedVersionError)) throw err;
      this.logger.error(`Delivery stream ${id} exists with other contents; not scheduled again`);
    }
  }

  /**
   * Ends, as cancelled, the pending deliveries an endpoint or account had before it was
   * disabled, deleted or switched off. Waits until the deliveries read model holds everything
   * the fan-out has scheduled, so none slips through; the dispatcher also checks at each attempt.
   */
  private async cancelPending(cancels: ReadonlyArray<{ scope: CancelScope; before: Position }>): Promise<void> {
    if (this.lastAppended) await this.runner.waitFor(this.lastAppended, 10_000);
    for (const { scope, before } of cancels) {
      const rows = (
        'endpointId' in scope
          ? stmt(this.runner.db, "SELECT id, source_position FROM webhook_deliveries WHERE endpoint_id = ? AND status = 'pending'").all(scope.endpointId)
          : stmt(this.runner.db, "SELECT id, source_position FROM webhook_deliveries WHERE account_id = ? AND status = 'pending'").all(scope.accountId)
      ) as Array<{ id: string; source_position: string }>;
      const reason = 'endpointId' in scope ? 'endpoint disabled or deleted' : 'webhook notifications switched off';
      for (const row of rows) {
        if (comparePositions(parsePosition(row.source_position), before) >= 0) continue;
        await this.deliveries.cancel(row.id, reason);
      }
    }
  }
}
