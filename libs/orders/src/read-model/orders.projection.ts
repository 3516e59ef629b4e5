import { cachedStatement, type Projection, type RecordedEnvelope, RegisterProjection } from '@filing/platform';
import { Injectable } from '@nestjs/common';
import type Database from 'better-sqlite3';
import { ORDER_CANCELLED, ORDER_COMPLETED, ORDER_SUBMITTED, type OrderEvent } from '../order.events';

/**
 * `orders`: one row per order, scoped by account_id, with what the API answers (`details` as
 * JSON text). The indexes serve the list: account, optionally one filter, then id (the keyset
 * pagination order).
 */
@Injectable()
@RegisterProjection()
export class OrdersProjection implements Projection {
  readonly name = 'orders';
  readonly version = 1;
  readonly tables = ['orders'];
  readonly handles = ['orders.'];

  setup(db: Database.Database): void {
    db.exec(`
      CREATE TABLE IF NOT EXISTS orders (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        entity_id TEXT NOT NULL,
        order_type TEXT NOT NULL,
        jurisdiction_code TEXT,
        details TEXT NOT NULL,
        status TEXT NOT NULL,
        cancellation_reason TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        version INTEGER NOT NULL
      );
      CREATE INDEX IF NOT EXISTS orders_by_account ON orders (account_id, id);
      CREATE INDEX IF NOT EXISTS orders_by_account_entity ON orders (account_id, entity_id, id);
      CREATE INDEX IF NOT EXISTS orders_by_account_status ON orders (account_id, status, id);
    `);
  }

  apply(db: Database.Database, event: RecordedEnvelope): void {
    const e = event as RecordedEnvelope<OrderEvent>;
    const { metadata } = e;
    const version = Number(e.revision);
    switch (e.type) {
      case ORDER_SUBMITTED:
        cachedStatement(
          db,
          `INSERT INTO orders (id, account_id, entity_id, order_type, jurisdiction_code, details, status,
             cancellation_reason, created_at, updated_at, version)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(
          e.data.order_id,
          metadata.account_id,
          e.data.entity_id,
          e.data.order_type,
          e.data.jurisdiction_code,
          JSON.stringify(e.data.details),
          e.data.status,
          e.data.cancellation_reason,
          metadata.occurred_at,
          metadata.occurred_at,
          version,
        );
        return;
      case ORDER_CANCELLED:
      case ORDER_COMPLETED:
        cachedStatement(db, 'UPDATE orders SET status = ?, cancellation_reason = ?, updated_at = ?, version = ? WHERE id = ?').run(
          e.data.status,
          e.data.cancellation_reason,
          metadata.occurred_at,
          version,
          e.data.order_id,
        );
        return;
    }
  }
}
