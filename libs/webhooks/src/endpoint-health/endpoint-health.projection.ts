import { cachedStatement as stmt, RegisterProjection, type Projection, type RecordedEnvelope } from '@filing/platform';
import { Injectable } from '@nestjs/common';
import type Database from 'better-sqlite3';
import { DELIVERY_EVENT_PREFIX, type DeliveryEvent, DeliveryEvents } from '../deliveries/delivery.events';
import { isSuccessfulAttempt } from './endpoint-health';

/**
 * Per endpoint, its deliveries' states and its attempts, indexed for an endpoint's health over a
 * time window (stats, the settings screen's list) and for a recovery by event time. Its own
 * tables beside the delivery log's (`webhook_delivery_attempts` has no endpoint column): times
 * are the events' own (attempted_at, occurred_at, the event's due_at), so a rebuild gives the
 * same rows.
 */
@Injectable()
@RegisterProjection()
export class EndpointHealthProjection implements Projection {
  readonly name = 'webhooks.endpoint-health';
  // 2: failed deliveries and each outcome of attempts in partial indexes; attempts kept by endpoint and time.
  // 3: webhook_health_endpoints (pending count, newest delivery, last success), kept by triggers.
  readonly version = 3;
  readonly tables = ['webhook_health_deliveries', 'webhook_health_attempts', 'webhook_health_endpoints'];
  readonly handles = [DELIVERY_EVENT_PREFIX];
  /** `apply` finds rows by delivery id alone (the triggers by endpoint id). */
  readonly indexesAfterLoad = true;

  setup(db: Database.Database): void {
    // event_at: when the notified domain event happened; status_at: when the status last changed.
    // Indexes hold only what a query counts or lists (delivered or failed deliveries; failed ones
    // by event time for a recovery): a pending delivery enters none, and one that succeeds only
    // the delivered one.
    db.exec(`CREATE TABLE IF NOT EXISTS webhook_health_deliveries (
      delivery_id TEXT PRIMARY KEY, endpoint_id TEXT NOT NULL, seq INTEGER NOT NULL, event_at TEXT NOT NULL,
      status TEXT NOT NULL, status_at TEXT NOT NULL, last_attempt_at TEXT);
    CREATE INDEX IF NOT EXISTS webhook_health_deliveries_delivered ON webhook_health_deliveries (endpoint_id, status_at)
      WHERE status = 'delivered';
    CREATE INDEX IF NOT EXISTS webhook_health_deliveries_failed ON webhook_health_deliveries (endpoint_id, status_at)
      WHERE status = 'failed';
    CREATE INDEX IF NOT EXISTS webhook_health_deliveries_failed_event ON webhook_health_deliveries (endpoint_id, event_at, seq)
      WHERE status = 'failed';`);
    // Keyed by endpoint and time (no rowid): the window's response times are one range of the
    // table, and a new attempt lands at its endpoint's end. (delivery_id, attempt) is unique in
    // the delivery's stream (each attempt is appended at the revision after the last). A streak
    // reads failed attempts only; the last success is kept per endpoint (below).
    db.exec(`CREATE TABLE IF NOT EXISTS webhook_health_attempts (
      endpoint_id TEXT NOT NULL, attempted_at TEXT NOT NULL, delivery_id TEXT NOT NULL, attempt INTEGER NOT NULL,
      succeeded INTEGER NOT NULL, status_code INTEGER, duration_ms INTEGER NOT NULL,
      PRIMARY KEY (endpoint_id, attempted_at, delivery_id, attempt)) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS webhook_health_attempts_failed ON webhook_health_attempts (endpoint_id, attempted_at)
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
    CREATE TRIGGER IF NOT EXISTS webhook_health_delivery_added AFTER INSERT ON webhook_health_deliveries BEGIN
      INSERT INTO webhook_health_endpoints (endpoint_id, pending, last_seq, last_delivery_id)
      VALUES (new.endpoint_id, new.status = 'pending', new.seq, new.delivery_id)
      ON CONFLICT (endpoint_id) DO UPDATE SET pending = pending + excluded.pending,
        last_delivery_id = iif(excluded.last_seq >= last_seq, excluded.last_delivery_id, last_delivery_id),
        last_seq = max(last_seq, excluded.last_seq);
    END;
    CREATE TRIGGER IF NOT EXISTS webhook_health_pending_changed AFTER UPDATE OF status ON webhook_health_deliveries
    WHEN (old.status = 'pending') <> (new.status = 'pending') BEGIN
      UPDATE webhook_health_endpoints SET pending = pending + iif(new.status = 'pending', 1, -1)
      WHERE endpoint_id = new.endpoint_id;
    END;
    CREATE TRIGGER IF NOT EXISTS webhook_health_success_added AFTER INSERT ON webhook_health_attempts
    WHEN new.succeeded = 1 BEGIN
      UPDATE webhook_health_endpoints SET last_success_at = max(coalesce(last_success_at, ''), new.attempted_at)
      WHERE endpoint_id = new.endpoint_id;
    END`);
  }

  apply(db: Database.Database, envelope: RecordedEnvelope): void {
    const event = envelope as RecordedEnvelope<DeliveryEvent>;
    const at = event.metadata.occurred_at;
    const id = event.data.delivery_id;
    const setStatus = (status: string) =>
      stmt(db, 'UPDATE webhook_health_deliveries SET status = ?, status_at = ? WHERE delivery_id = ?').run(
        status,
        at,
        id,
      );
    switch (event.type) {
      case DeliveryEvents.DeliveryScheduled:
        stmt(
          db,
          `INSERT INTO webhook_health_deliveries (delivery_id, endpoint_id, seq, event_at, status, status_at)
           VALUES (?, ?, ?, ?, 'pending', ?) ON CONFLICT (delivery_id) DO NOTHING`,
        ).run(id, event.data.endpoint_id, Number(event.position.commit), event.data.due_at, at);
        return;
      case DeliveryEvents.DeliveryAttempted: {
        const d = event.data;
        stmt(
          db,
          `INSERT INTO webhook_health_attempts (delivery_id, attempt, endpoint_id, attempted_at, succeeded, status_code, duration_ms)
           SELECT delivery_id, ?, endpoint_id, ?, ?, ?, ? FROM webhook_health_deliveries WHERE delivery_id = ?
           ON CONFLICT DO NOTHING`,
        ).run(d.attempt, d.attempted_at, isSuccessfulAttempt(d.status_code) ? 1 : 0, d.status_code, d.duration_ms, id);
        if (d.outcome === 'succeeded') {
          // Also the older streams' DeliverySucceeded (same occurred_at: one append): one UPDATE.
          stmt(
            db,
            `UPDATE webhook_health_deliveries SET last_attempt_at = ?, status = 'delivered', status_at = ? WHERE delivery_id = ?`,
          ).run(d.attempted_at, at, id);
        } else {
          stmt(db, 'UPDATE webhook_health_deliveries SET last_attempt_at = ? WHERE delivery_id = ?').run(
            d.attempted_at,
            id,
          );
        }
        return;
      }
      case DeliveryEvents.DeliverySucceeded:
        setStatus('delivered');
        return;
      case DeliveryEvents.DeliveryFailed:
        setStatus('failed');
        return;
      case DeliveryEvents.DeliveryCancelled:
        setStatus('cancelled');
        return;
      case DeliveryEvents.DeliveryRedeliveryRequested:
        setStatus('pending');
        return;
      case DeliveryEvents.DeliveryClaimed:
      case DeliveryEvents.DeliveryRetryScheduled:
        // Still pending: a claim comes before its attempt, a retry after the failed one (recorded).
        return;
    }
  }
}
