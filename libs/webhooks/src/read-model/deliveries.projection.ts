import { RegisterProjection, type Projection, type RecordedEnvelope } from '@filing/platform';
import { Injectable } from '@nestjs/common';
import type Database from 'better-sqlite3';
import {
  DELIVERY_EVENT_PREFIX,
  type DeliveryEnd,
  type DeliveryEvent,
  DeliveryEvents,
} from '../deliveries/delivery.events';
import { DeliveryStates } from '../dispatch/delivery-states';
import { DueWindows } from '../dispatch/due-windows';
import { DeliverySignal, type ScheduledDelivery } from './delivery-signal';
import { cachedStatement as stmt } from '@filing/platform';

/** The SET clause of a delivery that has ended: nothing more is due, claimed or pending. */
const ended = (status: DeliveryEnd) =>
  `status = '${status}', next_attempt_at = NULL, claimed_until = NULL, pending_since = NULL`;

/** `webhook_deliveries` + `webhook_delivery_attempts`: the delivery log and the dispatcher's queue. */
@Injectable()
@RegisterProjection()
export class DeliveriesProjection implements Projection {
  readonly name = 'webhooks.deliveries';
  // 2: pending_since (when the current pending spell began: the oldest-pending-delivery metric).
  // 3: webhook_deliveries_queue, the dispatcher's per-endpoint queues.
  // 4: claimed_until (DeliveryClaimed), so no instance lists another's live claim as due.
  // 5: the queue's indexes hold pending rows only; no (endpoint_id, status, seq) index.
  readonly version = 5;
  readonly tables = ['webhook_deliveries', 'webhook_delivery_attempts'];
  readonly handles = [DELIVERY_EVENT_PREFIX];
  /** `apply` finds rows by delivery id alone. */
  readonly indexesAfterLoad = true;

  /**
   * Deliveries scheduled since the last commit, less those with a later event since (their row
   * is no longer as scheduled), and whether other work came (a retry, a redelivery): the signal
   * rings with them once the transaction has committed.
   */
  private readonly scheduled = new Map<string, ScheduledDelivery>();
  private otherWork = false;

  constructor(
    private readonly signal: DeliverySignal,
    private readonly states: DeliveryStates,
    private readonly windows: DueWindows,
  ) {}

  setup(db: Database.Database): void {
    // The queue's indexes hold pending rows alone: a delivery that ends leaves them (one delete)
    // instead of moving inside them, and the log's ended rows never touch them again.
    db.exec(`CREATE TABLE IF NOT EXISTS webhook_deliveries (
      id TEXT PRIMARY KEY, account_id TEXT NOT NULL, endpoint_id TEXT NOT NULL, event_id TEXT NOT NULL,
      event_type TEXT NOT NULL, status TEXT NOT NULL, attempt_count INTEGER NOT NULL, last_attempt_at TEXT,
      next_attempt_at TEXT, claimed_until TEXT, pending_since TEXT, source_position TEXT NOT NULL, seq INTEGER NOT NULL,
      created_at TEXT NOT NULL, updated_at TEXT NOT NULL, version INTEGER NOT NULL);
    CREATE INDEX IF NOT EXISTS webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, seq);
    CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
    CREATE INDEX IF NOT EXISTS webhook_deliveries_queue ON webhook_deliveries (endpoint_id, next_attempt_at, claimed_until)
      WHERE status = 'pending';
    CREATE TABLE IF NOT EXISTS webhook_delivery_attempts (
      delivery_id TEXT NOT NULL, attempt INTEGER NOT NULL, attempted_at TEXT NOT NULL, status_code INTEGER,
      error TEXT, duration_ms INTEGER NOT NULL, PRIMARY KEY (delivery_id, attempt))`);
  }

  apply(db: Database.Database, envelope: RecordedEnvelope): void {
    const event = envelope as RecordedEnvelope<DeliveryEvent>;
    // The dispatcher's copy of each pending delivery's state (a hint its claim checks).
    this.states.observe(event);
    // The dispatcher's windows of due ids hold only rows unchanged since they were read.
    this.windows.changed(event.data.delivery_id);
    if (event.type !== DeliveryEvents.DeliveryScheduled) this.scheduled.delete(event.data.delivery_id);
    const at = event.metadata.occurred_at;
    const version = Number(event.revision);
    const id = event.data.delivery_id;
    const set = (sets: string, ...params: unknown[]) =>
      stmt(db, `UPDATE webhook_deliveries SET ${sets}, updated_at = ?, version = ? WHERE id = ?`).run(
        ...params,
        at,
        version,
        id,
      );
    switch (event.type) {
      case DeliveryEvents.DeliveryScheduled: {
        const d = event.data;
        // seq: the scheduling position, so a delivery log lists oldest first whatever the id.
        stmt(
          db,
          `INSERT INTO webhook_deliveries (id, account_id, endpoint_id, event_id, event_type, status, attempt_count,
             next_attempt_at, pending_since, source_position, seq, created_at, updated_at, version)
           VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
        ).run(
          id,
          d.account_id,
          d.endpoint_id,
          d.event_id,
          d.event_type,
          d.due_at,
          d.due_at,
          d.source_position,
          Number(event.position.commit),
          at,
          at,
          version,
        );
        this.scheduled.set(id, { id, endpointId: d.endpoint_id, dueAt: d.due_at });
        return;
      }
      case DeliveryEvents.DeliveryClaimed:
        set('claimed_until = ?', event.data.lease_until);
        return;
      case DeliveryEvents.DeliveryAttempted: {
        const d = event.data;
        stmt(
          db,
          `INSERT INTO webhook_delivery_attempts (delivery_id, attempt, attempted_at, status_code, error, duration_ms)
           VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
        ).run(id, d.attempt, d.attempted_at, d.status_code, d.error, d.duration_ms);
        // A delivering attempt is also the older streams' DeliverySucceeded: the same row, one UPDATE.
        if (d.outcome === 'succeeded') {
          set(`attempt_count = attempt_count + 1, last_attempt_at = ?, ${ended('delivered')}`, d.attempted_at);
        } else {
          set('attempt_count = attempt_count + 1, last_attempt_at = ?, claimed_until = NULL', d.attempted_at);
        }
        return;
      }
      case DeliveryEvents.DeliveryRetryScheduled:
        set('next_attempt_at = ?', event.data.next_attempt_at);
        this.otherWork = true;
        return;
      case DeliveryEvents.DeliverySucceeded:
        set(ended('delivered'));
        return;
      case DeliveryEvents.DeliveryFailed:
        set(ended('failed'));
        return;
      case DeliveryEvents.DeliveryCancelled:
        set(ended('cancelled'));
        return;
      case DeliveryEvents.DeliveryRedeliveryRequested:
        // A redelivery starts a new pending spell: its age is not the original event's.
        set(
          "status = 'pending', next_attempt_at = ?, claimed_until = NULL, pending_since = ?",
          event.data.due_at,
          event.data.due_at,
        );
        this.otherWork = true;
        return;
    }
  }

  /** Rung after the commit, not in apply: a batch that rolls back wakes nobody, and a woken dispatcher finds the rows. */
  afterCommit(): void {
    if (this.scheduled.size === 0 && !this.otherWork) return;
    const work = { scheduled: [...this.scheduled.values()], other: this.otherWork };
    this.scheduled.clear();
    this.otherWork = false;
    this.signal.ring(work);
  }
}
