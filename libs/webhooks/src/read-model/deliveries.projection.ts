import {
  applyHandler,
  cachedStatement as stmt,
  handledTypes,
  RegisterProjection,
  upcast,
  type EventHandlers,
  type Projection,
  type RecordedEnvelope,
} from '@filing/platform';
import { Injectable } from '@nestjs/common';
import type Database from 'better-sqlite3';
import { type DeliveryEnd, type DeliveryEvent, DeliveryEvents } from '../deliveries/delivery.events';
import { DeliveryStates } from '../dispatch/delivery-states';
import { DueWindows } from '../dispatch/due-windows';
import { isSuccessfulAttempt } from '../endpoint-health/endpoint-health';
import { DeliverySignal, type ScheduledDelivery } from './delivery-signal';
import { WEBHOOK_UPCASTERS } from './upcasters';

/** The SET clause of a delivery that has ended (at the bound time): nothing more is due, claimed or pending. */
const ended = (status: DeliveryEnd) =>
  `status = '${status}', status_at = ?, next_attempt_at = NULL, claimed_until = NULL, pending_since = NULL`;

/** A delivery row's UPDATE setting `sets`, then `updated_at`, `version` (by id). */
const update = (sets: string) => `UPDATE webhook_deliveries SET ${sets}, updated_at = ?, version = ? WHERE id = ?`;

/**
 * Each event's UPDATE, built once: the statement cache is keyed by its text, and text built per
 * event would be hashed and compared in full every time (one per delivery attempt).
 */
const UPDATES = {
  claimed: update('claimed_until = ?'),
  attemptDelivered: update(`attempt_count = attempt_count + 1, last_attempt_at = ?, ${ended('delivered')}`),
  attemptFailed: update('attempt_count = attempt_count + 1, last_attempt_at = ?, claimed_until = NULL'),
  retryScheduled: update('next_attempt_at = ?'),
  delivered: update(ended('delivered')),
  failed: update(ended('failed')),
  cancelled: update(ended('cancelled')),
  redelivery: update("status = 'pending', status_at = ?, next_attempt_at = ?, claimed_until = NULL, pending_since = ?"),
} as const;

/** What the handlers write to: the database, and what the signal rings with after the commit. */
interface DeliveriesContext {
  readonly db: Database.Database;
  /** Deliveries scheduled since the last commit, less those with a later event since. */
  readonly scheduled: Map<string, ScheduledDelivery>;
  /** Other work came (a retry, a redelivery). */
  readonly otherWork: () => void;
}

/** Runs one of UPDATES on the event's delivery: `params`, then `updated_at`, `version` (the event's own), the id. */
function set(
  { db }: DeliveriesContext,
  event: RecordedEnvelope<DeliveryEvent>,
  sql: string,
  ...params: unknown[]
): void {
  stmt(db, sql).run(...params, event.metadata.occurred_at, Number(event.revision), event.data.delivery_id);
}

const deliveries: EventHandlers<DeliveryEvent, DeliveriesContext> = {
  [DeliveryEvents.DeliveryScheduled]: (e, context) => {
    const d = e.data;
    const at = e.metadata.occurred_at;
    const replay = d.priority === 'replay';
    // seq: the scheduling position, so a delivery log lists oldest first whatever the id.
    stmt(
      context.db,
      `INSERT INTO webhook_deliveries (id, account_id, endpoint_id, event_id, event_type, status, attempt_count,
             next_attempt_at, pending_since, source_position, seq, event_at, status_at, created_at, updated_at, version, replay)
           VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
    ).run(
      d.delivery_id,
      d.account_id,
      d.endpoint_id,
      d.event_id,
      d.event_type,
      d.due_at,
      d.due_at,
      d.source_position,
      Number(e.position.commit),
      d.due_at,
      at,
      at,
      at,
      Number(e.revision),
      replay ? 1 : 0,
    );
    context.scheduled.set(d.delivery_id, { id: d.delivery_id, endpointId: d.endpoint_id, dueAt: d.due_at, replay });
  },
  [DeliveryEvents.DeliveryClaimed]: (e, context) => set(context, e, UPDATES.claimed, e.data.lease_until),
  [DeliveryEvents.DeliveryAttempted]: (e, context) => {
    const d = e.data;
    stmt(
      context.db,
      `INSERT INTO webhook_delivery_attempts (delivery_id, attempt, endpoint_id, delivery_seq, attempted_at, succeeded, status_code, error, duration_ms)
           SELECT id, ?, endpoint_id, seq, ?, ?, ?, ?, ? FROM webhook_deliveries WHERE id = ?
           ON CONFLICT DO NOTHING`,
    ).run(
      d.attempt,
      d.attempted_at,
      isSuccessfulAttempt(d.status_code) ? 1 : 0,
      d.status_code,
      d.error,
      d.duration_ms,
      d.delivery_id,
    );
    // A delivering attempt is also the older streams' DeliverySucceeded: the same row, one UPDATE.
    if (d.outcome === 'succeeded') set(context, e, UPDATES.attemptDelivered, d.attempted_at, e.metadata.occurred_at);
    else set(context, e, UPDATES.attemptFailed, d.attempted_at);
  },
  [DeliveryEvents.DeliveryRetryScheduled]: (e, context) => {
    set(context, e, UPDATES.retryScheduled, e.data.next_attempt_at);
    context.otherWork();
  },
  // No longer appended: older streams hold it after their delivering attempt.
  [DeliveryEvents.DeliverySucceeded]: (e, context) => set(context, e, UPDATES.delivered, e.metadata.occurred_at),
  [DeliveryEvents.DeliveryFailed]: (e, context) => set(context, e, UPDATES.failed, e.metadata.occurred_at),
  [DeliveryEvents.DeliveryCancelled]: (e, context) => set(context, e, UPDATES.cancelled, e.metadata.occurred_at),
  // A redelivery starts a new pending spell: its age is not the original event's.
  [DeliveryEvents.DeliveryRedeliveryRequested]: (e, context) => {
    set(context, e, UPDATES.redelivery, e.metadata.occurred_at, e.data.due_at, e.data.due_at);
    context.otherWork();
  },
};

/**
 * The delivery log and the dispatcher's queue (`webhook_deliveries`, `webhook_delivery_attempts`),
 * and what an endpoint's health reads (EndpointHealthQueries): its deliveries' outcomes by time
 * (partial indexes of `webhook_deliveries`), its attempts by time (`webhook_delivery_attempts`'
 * key) and a row per endpoint (`webhook_health_endpoints`). One projection, so a delivery and an
 * attempt are one row each (a health projection of their own wrote a second of each). Times are
 * the events' own, so a rebuild gives the same rows.
 */
@Injectable()
@RegisterProjection()
export class DeliveriesProjection implements Projection {
  readonly name = 'webhooks.deliveries';
  readonly serves = ['/external-api/v1/webhook-deliveries'];
  // 2: pending_since (when the current pending spell began: the oldest-pending-delivery metric).
  // 3: webhook_deliveries_queue, the dispatcher's per-endpoint queues.
  // 4: claimed_until (DeliveryClaimed), so no instance lists another's live claim as due.
  // 5: the queue's indexes hold pending rows only; no (endpoint_id, status, seq) index.
  // 6: endpoint health folded in: one row per delivery (webhook_deliveries) and per attempt (by endpoint and time).
  // 7: a delivery's attempts found by its seq, not its (random) id: see webhook_delivery_attempts.
  // 8: `replay` (a replay's deliveries queue behind live ones) and deliveries by event (GET /events/{id}).
  readonly version = 8;
  readonly tables = ['webhook_deliveries', 'webhook_delivery_attempts', 'webhook_health_endpoints'];
  readonly supersedes = [
    {
      name: 'webhooks.endpoint-health',
      tables: ['webhook_health_deliveries', 'webhook_health_attempts', 'webhook_health_endpoints'],
    },
  ];
  readonly handles = handledTypes(deliveries);
  /** `apply` finds rows by delivery id alone (the triggers by endpoint id). */
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
    // event_at: when the notified domain event happened; status_at: when the status last changed.
    // The health's indexes hold only what it counts or lists (delivered or failed deliveries;
    // failed ones by event time for a recovery): one that succeeds enters the delivered one.
    db.exec(`CREATE TABLE IF NOT EXISTS webhook_deliveries (
      id TEXT PRIMARY KEY, account_id TEXT NOT NULL, endpoint_id TEXT NOT NULL, event_id TEXT NOT NULL,
      event_type TEXT NOT NULL, status TEXT NOT NULL, attempt_count INTEGER NOT NULL, last_attempt_at TEXT,
      next_attempt_at TEXT, claimed_until TEXT, pending_since TEXT, source_position TEXT NOT NULL, seq INTEGER NOT NULL,
      event_at TEXT NOT NULL, status_at TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
      version INTEGER NOT NULL, replay INTEGER NOT NULL DEFAULT 0);
    CREATE INDEX IF NOT EXISTS webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, seq);
    CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
    CREATE INDEX IF NOT EXISTS webhook_deliveries_queue ON webhook_deliveries (endpoint_id, replay, next_attempt_at, claimed_until)
      WHERE status = 'pending';
    CREATE INDEX IF NOT EXISTS webhook_deliveries_event ON webhook_deliveries (event_id);
    CREATE INDEX IF NOT EXISTS webhook_deliveries_delivered ON webhook_deliveries (endpoint_id, status_at)
      WHERE status = 'delivered';
    CREATE INDEX IF NOT EXISTS webhook_deliveries_failed ON webhook_deliveries (endpoint_id, status_at)
      WHERE status = 'failed';
    CREATE INDEX IF NOT EXISTS webhook_deliveries_failed_event ON webhook_deliveries (endpoint_id, event_at, seq)
      WHERE status = 'failed'`);
    // Keyed by endpoint and time (no rowid): an endpoint's response times over a window are one
    // range of the table, and a new attempt lands at its endpoint's end; a delivery's attempts
    // are found by (delivery_seq, delivery_id, attempt), unique in its stream (each attempt is
    // appended at the revision after the last). By its seq first, not its id: ids are random, so
    // an index led by them took a page of its own for nearly every attempt of a commit, while
    // attempts come roughly in scheduling order, at the index's end (the id after it keeps two
    // deliveries apart should a store ever give two the same seq). A streak reads failed
    // attempts only; the last success is kept per endpoint (below).
    db.exec(`CREATE TABLE IF NOT EXISTS webhook_delivery_attempts (
      endpoint_id TEXT NOT NULL, attempted_at TEXT NOT NULL, delivery_id TEXT NOT NULL, attempt INTEGER NOT NULL,
      delivery_seq INTEGER NOT NULL, succeeded INTEGER NOT NULL, status_code INTEGER, error TEXT,
      duration_ms INTEGER NOT NULL, PRIMARY KEY (endpoint_id, attempted_at, delivery_id, attempt)) WITHOUT ROWID;
    CREATE UNIQUE INDEX IF NOT EXISTS webhook_delivery_attempts_delivery ON webhook_delivery_attempts (delivery_seq, delivery_id, attempt);
    CREATE INDEX IF NOT EXISTS webhook_delivery_attempts_failed ON webhook_delivery_attempts (endpoint_id, attempted_at)
      WHERE succeeded = 0`);
    // Per endpoint, what would otherwise be an index each over every delivery or attempt (each a
    // page or more of writes per endpoint per commit): how many deliveries are pending, the
    // newest delivery (highest seq; of equal ones the later written, as an index scan found it),
    // and the last 2xx attempt. Triggers keep it, so every write of the rows above (a live
    // batch, a rebuild) moves it in the same statement, and a row not written (ON CONFLICT DO
    // NOTHING) moves nothing.
    db.exec(`CREATE TABLE IF NOT EXISTS webhook_health_endpoints (
      endpoint_id TEXT PRIMARY KEY, pending INTEGER NOT NULL, last_seq INTEGER NOT NULL,
      last_delivery_id TEXT NOT NULL, last_success_at TEXT) WITHOUT ROWID;
    CREATE TRIGGER IF NOT EXISTS webhook_health_delivery_added AFTER INSERT ON webhook_deliveries BEGIN
      INSERT INTO webhook_health_endpoints (endpoint_id, pending, last_seq, last_delivery_id)
      VALUES (new.endpoint_id, new.status = 'pending', new.seq, new.id)
      ON CONFLICT (endpoint_id) DO UPDATE SET pending = pending + excluded.pending,
        last_delivery_id = iif(excluded.last_seq >= last_seq, excluded.last_delivery_id, last_delivery_id),
        last_seq = max(last_seq, excluded.last_seq);
    END;
    CREATE TRIGGER IF NOT EXISTS webhook_health_pending_changed AFTER UPDATE OF status ON webhook_deliveries
    WHEN (old.status = 'pending') <> (new.status = 'pending') BEGIN
      UPDATE webhook_health_endpoints SET pending = pending + iif(new.status = 'pending', 1, -1)
      WHERE endpoint_id = new.endpoint_id;
    END;
    CREATE TRIGGER IF NOT EXISTS webhook_health_success_added AFTER INSERT ON webhook_delivery_attempts
    WHEN new.succeeded = 1 BEGIN
      UPDATE webhook_health_endpoints SET last_success_at = max(coalesce(last_success_at, ''), new.attempted_at)
      WHERE endpoint_id = new.endpoint_id;
    END`);
  }

  apply(db: Database.Database, envelope: RecordedEnvelope): void {
    const event = upcast(WEBHOOK_UPCASTERS, envelope) as RecordedEnvelope<DeliveryEvent>;
    // The dispatcher's copy of each pending delivery's state (a hint its claim checks).
    this.states.observe(event);
    // The dispatcher's windows of due ids hold only rows unchanged since they were read.
    this.windows.changed(event.data.delivery_id);
    if (event.type !== DeliveryEvents.DeliveryScheduled) this.scheduled.delete(event.data.delivery_id);
    applyHandler(deliveries, event, { db, scheduled: this.scheduled, otherWork: this.noteOtherWork });
  }

  private readonly noteOtherWork = (): void => {
    this.otherWork = true;
  };

  /** Rung after the commit, not in apply: a batch that rolls back wakes nobody, and a woken dispatcher finds the rows. */
  afterCommit(): void {
    if (this.scheduled.size === 0 && !this.otherWork) return;
    const work = { scheduled: [...this.scheduled.values()], other: this.otherWork };
    this.scheduled.clear();
    this.otherWork = false;
    this.signal.ring(work);
  }
}
