import { positionToString } from '@filing/event-store';
import {
  cachedStatement as stmt,
  MultiRowInsert,
  RegisterProjection,
  type Projection,
  type RecordedEnvelope,
} from '@filing/platform';
import { Injectable } from '@nestjs/common';
import type Database from 'better-sqlite3';
import {
  factsText,
  mayHaveFacts,
  NOTIFIABLE_EVENT_PREFIXES,
  notificationOf,
  type ResourceFacts,
  serializeNotification,
} from '../notifications/notification-mapper';

/**
 * `webhook_notifications`: every notification of every account (the operational ones too), one
 * row per domain event, in stream order (the Events API, CONTRACT.md §3). `seq` is the row's rowid: rows are only ever
 * appended, in the order the runner applies events (their `$all` order), so it grows with the
 * position and a rebuild numbers them the same. A page keyed on it can never skip a row that a
 * later page could show before it: a row with a smaller seq is committed with or before it.
 *
 * `payload` is the webhook body itself (the mapper and the serialization the dispatcher uses);
 * `webhook_notification_facts` holds what the mapper needs from a resource's earlier events.
 */
@Injectable()
@RegisterProjection()
export class NotificationsProjection implements Projection {
  readonly name = 'webhooks.notifications';
  readonly serves = ['/external-api/v1/events'];
  // 2: webhook_endpoint.disabled (from webhooks.EndpointDisabled) too.
  // 3: resource_version in every payload; webhook_endpoint.failing and webhook_delivery.failed.
  readonly version = 3;
  readonly tables = ['webhook_notifications', 'webhook_notification_facts'];
  readonly handles = NOTIFIABLE_EVENT_PREFIXES;
  /** `apply` finds rows by stream and event id alone (unique indexes stay during a rebuild). */
  readonly indexesAfterLoad = true;

  setup(db: Database.Database): void {
    db.exec(`CREATE TABLE IF NOT EXISTS webhook_notifications (
      seq INTEGER PRIMARY KEY, account_id TEXT NOT NULL, event_id TEXT NOT NULL, event_type TEXT NOT NULL,
      occurred_at TEXT NOT NULL, position TEXT NOT NULL, payload TEXT NOT NULL);
    CREATE UNIQUE INDEX IF NOT EXISTS webhook_notifications_event ON webhook_notifications (event_id);
    CREATE INDEX IF NOT EXISTS webhook_notifications_account ON webhook_notifications (account_id, seq);
    CREATE INDEX IF NOT EXISTS webhook_notifications_account_type ON webhook_notifications (account_id, event_type, seq);
    CREATE TABLE IF NOT EXISTS webhook_notification_facts (stream_id TEXT PRIMARY KEY, facts TEXT NOT NULL)`);
  }

  /**
   * Within a batch (its transaction): each stream's facts as they stand, read at most once and
   * written once at the batch's end (a resource's events usually come together). null: none.
   */
  private batchFacts: Map<string, ResourceFacts | null> | null = null;
  private readonly changedFacts = new Set<string>();
  /**
   * In a rebuild: the facts as the last batch left them, and as the batch being committed does. A
   * rebuild's statements may run on a thread a batch behind (ProjectionRunner.replay), where a
   * read waits for it: a stream's events mostly come together, so the facts an event needs are
   * nearly always in this batch or the last one.
   */
  private lastBatchFacts: ReadonlyMap<string, ResourceFacts | null> | null = null;
  private committingFacts: ReadonlyMap<string, ResourceFacts | null> | null = null;
  /** In a rebuild the tables start empty and each event is applied once, in `$all` order. */
  private rebuilding = false;
  /** Rows written at once live; in a rebuild many to an INSERT (written by the batch's end, in order). */
  private readonly notificationRows = new MultiRowInsert(
    'INSERT INTO webhook_notifications (account_id, event_id, event_type, occurred_at, position, payload)',
    6,
    'ON CONFLICT (event_id) DO NOTHING',
  );
  private readonly factRows = new MultiRowInsert(
    'INSERT INTO webhook_notification_facts (stream_id, facts)',
    2,
    'ON CONFLICT (stream_id) DO UPDATE SET facts = excluded.facts',
  );

  beginBatch(_db: Database.Database, batch: { readonly rebuild: boolean }): void {
    this.batchFacts = new Map();
    this.changedFacts.clear();
    this.rebuilding = batch.rebuild;
    this.committingFacts = null;
    if (!batch.rebuild) this.lastBatchFacts = null;
    this.notificationRows.clear();
    this.factRows.clear();
  }

  endBatch(db: Database.Database): void {
    const facts = this.batchFacts;
    this.batchFacts = null;
    if (!facts) return;
    if (this.rebuilding) this.committingFacts = facts;
    this.notificationRows.flush(db);
    for (const streamId of this.changedFacts) this.saveFacts(db, streamId, facts.get(streamId) ?? null);
    this.changedFacts.clear();
    this.factRows.flush(db);
  }

  afterCommit(): void {
    this.lastBatchFacts = this.committingFacts;
    this.committingFacts = null;
  }

  apply(db: Database.Database, event: RecordedEnvelope): void {
    const known = mayHaveFacts(event) ? this.factsOf(db, event.streamId) : null;
    const { notification, facts, accountId, occurredAt } = notificationOf(event, known ?? undefined);
    if (facts) {
      if (this.batchFacts) {
        this.batchFacts.set(event.streamId, facts);
        this.changedFacts.add(event.streamId);
      } else this.saveFacts(db, event.streamId, facts);
    }
    if (!notification || !accountId) return;
    const row = [
      accountId,
      event.id,
      notification.event_type,
      occurredAt,
      positionToString(event.position),
      serializeNotification(notification),
    ] as const;
    if (this.rebuilding) this.notificationRows.add(db, ...row);
    else this.notificationRows.run(db, ...row);
  }

  private factsOf(db: Database.Database, streamId: string): ResourceFacts | null {
    const cached = this.batchFacts?.get(streamId);
    if (cached !== undefined) return cached;
    const last = this.lastBatchFacts?.get(streamId);
    if (last !== undefined) {
      this.batchFacts?.set(streamId, last);
      return last;
    }
    const row = stmt(db, 'SELECT facts FROM webhook_notification_facts WHERE stream_id = ?').get(streamId) as
      { facts: string } | undefined;
    const facts = row ? (JSON.parse(row.facts) as ResourceFacts) : null;
    this.batchFacts?.set(streamId, facts);
    return facts;
  }

  private saveFacts(db: Database.Database, streamId: string, facts: ResourceFacts | null): void {
    if (!facts) return;
    if (this.rebuilding) this.factRows.add(db, streamId, factsText(facts));
    else this.factRows.run(db, streamId, factsText(facts));
  }
}
