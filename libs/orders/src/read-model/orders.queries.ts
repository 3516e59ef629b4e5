import { cachedStatement, ResourceQueries, type ResourceView, extend } from '@filing/platform';
import type { OrderFields } from '../order.events';
import { ORDERS_TABLE } from './orders.projection';

/** The resource as the API answers it (CONTRACT.md §3). */
export type OrderView = ResourceView<OrderFields>;

/** What the operator API answers: the order and whose it is. */
export type OperatorOrderView = OrderView & { readonly account_id: string };

/** Reads of the `orders` read model, within one account (the operator's `getInAnyAccount` aside). */
export class OrdersQueries extends ResourceQueries.of<OrderView, { entity_id?: string; status?: string }>(
  ORDERS_TABLE,
) {
  /** For operators, who act on every account's orders. */
  getInAnyAccount(id: string): OperatorOrderView | null {
    const row = cachedStatement(this.runner.db, 'SELECT * FROM orders WHERE id = ?').get(id) as
      { account_id: string } | undefined;
    return row ? extend(this.fromRow(row), { account_id: row.account_id }) : null;
  }
}
