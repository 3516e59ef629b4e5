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
  readonly version = 2;
  readonly tables = ['webhook_health_deliveries', 'webhook_health_attempts'];
  readonly handles = [DELIVERY_EVENT_PREFIX];
  /** `apply` finds rows by delivery id alone. */
  readonly indexesAfterLoad = true;

  setup(db: Database.Database): void {
    // event_at: when the notified domain event happened; status_at: when the status last changed.
    // Only a recovery reads by event time, and only failed deliveries: a delivery that succeeds
    // never enters that index.
    db.exec(`CREATE TABLE IF NOT EXISTS webhook_health_deliveries (
      delivery_id TEXT PRIMARY KEY, endpoint_id TEXT NOT NULL, seq INTEGER NOT NULL, event_at TEXT NOT NULL,
      status TEXT NOT NULL, status_at TEXT NOT NULL, last_attempt_at TEXT);
    CREATE INDEX IF NOT EXISTS webhook_health_deliveries_status_at ON webhook_health_deliveries (endpoint_id, status, status_at);
    CREATE INDEX IF NOT EXISTS webhook_health_deliveries_failed ON webhook_health_deliveries (endpoint_id, event_at, seq)
      WHERE status = 'failed';
    CREATE INDEX IF NOT EXISTS webhook_health_deliveries_seq ON webhook_health_deliveries (endpoint_id, seq);`);
    // Keyed by endpoint and time (no rowid): the window's response times are one range of the
    // table, and a new attempt lands at its endpoint's end. (delivery_id, attempt) is unique in
    // the delivery's stream (each attempt is appended at the revision after the last). The streak
    // queries read one outcome each, so each outcome has its own index.
    db.exec(`CREATE TABLE IF NOT EXISTS webhook_health_attempts (
      endpoint_id TEXT NOT NULL, attempted_at TEXT NOT NULL, delivery_id TEXT NOT NULL, attempt INTEGER NOT NULL,
      succeeded INTEGER NOT NULL, status_code INTEGER, duration_ms INTEGER NOT NULL,
      PRIMARY KEY (endpoint_id, attempted_at, delivery_id, attempt)) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS webhook_health_attempts_succeeded ON webhook_health_attempts (endpoint_id, attempted_at)
      WHERE succeeded = 1;
    CREATE INDEX IF NOT EXISTS webhook_health_attempts_failed ON webhook_health_attempts (endpoint_id, attempted_at)
      WHERE succeeded = 0`);
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
