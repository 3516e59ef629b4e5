import { cachedStatement, keysetPage, type Page, type PageRequest, ProjectionRunner } from '@filing/platform';
import { Injectable } from '@nestjs/common';
import type { OrderDetails, OrderStatus, OrderType } from '../order.events';

/** The resource as the API answers it (CONTRACT.md §3). */
export interface OrderView {
  readonly id: string;
  readonly entity_id: string;
  readonly order_type: OrderType;
  readonly jurisdiction_code: string | null;
  readonly details: OrderDetails;
  readonly status: OrderStatus;
  readonly cancellation_reason: string | null;
  readonly created_at: string;
  readonly updated_at: string;
  readonly version: number;
}

/** What the operator API answers: the order and whose it is. */
export type OperatorOrderView = OrderView & { readonly account_id: string };

export interface OrderListFilters {
  readonly entity_id?: string;
  readonly status?: string;
}

type OrderRow = Omit<OrderView, 'details'> & { readonly account_id: string; readonly details: string };

export const ORDERS_COLLECTION = 'orders';

/** Reads of the `orders` read model, within one account (the operator's `getInAnyAccount` aside). */
@Injectable()
export class OrdersQueries {
  constructor(private readonly runner: ProjectionRunner) {}

  get(accountId: string, id: string): OrderView | null {
    // runner.db at every call: a replay may have swapped the database.
    const row = cachedStatement(this.runner.db, 'SELECT * FROM orders WHERE id = ? AND account_id = ?').get(id, accountId);
    return row ? toOrderView(fromRow(row as OrderRow)) : null;
  }

  /** For operators, who act on every account's orders. */
  getInAnyAccount(id: string): OperatorOrderView | null {
    const row = cachedStatement(this.runner.db, 'SELECT * FROM orders WHERE id = ?').get(id) as OrderRow | undefined;
    return row ? toOperatorOrderView(fromRow(row)) : null;
  }

  exists(accountId: string, id: string): boolean {
    return cachedStatement(this.runner.db, 'SELECT 1 FROM orders WHERE id = ? AND account_id = ?').get(id, accountId) !== undefined;
  }

  list(accountId: string, filters: OrderListFilters, page: PageRequest<string>): Page<OrderView> {
    return keysetPage<OrderRow, OrderView>(this.runner.db, {
      table: 'orders',
      where: [
        ['account_id = ?', accountId],
        ['entity_id = ?', filters.entity_id?.toLowerCase()],
        ['status = ?', filters.status],
      ],
      page,
      collection: ORDERS_COLLECTION,
      map: (row) => toOrderView(fromRow(row)),
    });
  }
}

function fromRow(row: OrderRow): OrderView & { account_id: string } {
  return { ...row, details: JSON.parse(row.details) as OrderDetails };
}

/** Exactly the API's fields, from a row or from the aggregate's state. */
export function toOrderView(source: OrderView): OrderView {
  return {
    id: source.id,
    entity_id: source.entity_id,
    order_type: source.order_type,
    jurisdiction_code: source.jurisdiction_code,
    details: source.details,
    status: source.status,
    cancellation_reason: source.cancellation_reason,
    created_at: source.created_at,
    updated_at: source.updated_at,
    version: source.version,
  };
}

export function toOperatorOrderView(source: OrderView & { readonly account_id: string }): OperatorOrderView {
  return { ...toOrderView(source), account_id: source.account_id };
}

