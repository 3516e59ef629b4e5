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
  readonly version = 1;
  readonly tables = ['webhook_health_deliveries', 'webhook_health_attempts'];
  readonly handles = [DELIVERY_EVENT_PREFIX];
  /** `apply` finds rows by delivery id alone. */
  readonly indexesAfterLoad = true;

  setup(db: Database.Database): void {
    // event_at: when the notified domain event happened; status_at: when the status last changed.
    db.exec(`CREATE TABLE IF NOT EXISTS webhook_health_deliveries (
      delivery_id TEXT PRIMARY KEY, endpoint_id TEXT NOT NULL, seq INTEGER NOT NULL, event_at TEXT NOT NULL,
      status TEXT NOT NULL, status_at TEXT NOT NULL, last_attempt_at TEXT);
    CREATE INDEX IF NOT EXISTS webhook_health_deliveries_status_at ON webhook_health_deliveries (endpoint_id, status, status_at);
    CREATE INDEX IF NOT EXISTS webhook_health_deliveries_event_at ON webhook_health_deliveries (endpoint_id, status, event_at);
    CREATE INDEX IF NOT EXISTS webhook_health_deliveries_seq ON webhook_health_deliveries (endpoint_id, seq);
    CREATE TABLE IF NOT EXISTS webhook_health_attempts (
      delivery_id TEXT NOT NULL, attempt INTEGER NOT NULL, endpoint_id TEXT NOT NULL, attempted_at TEXT NOT NULL,
      succeeded INTEGER NOT NULL, status_code INTEGER, duration_ms INTEGER NOT NULL, PRIMARY KEY (delivery_id, attempt));
    CREATE INDEX IF NOT EXISTS webhook_health_attempts_time ON webhook_health_attempts (endpoint_id, attempted_at);
    CREATE INDEX IF NOT EXISTS webhook_health_attempts_outcome ON webhook_health_attempts (endpoint_id, succeeded, attempted_at)`);
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
