import { RegisterProjection, ResourceProjection, type ResourceTable } from '@filing/platform';

/** `orders`: one row per order, scoped by account_id, with what the API answers (`details` as JSON text); listed by entity and status. */
export const ORDERS_TABLE: ResourceTable = {
  name: 'orders',
  idField: 'order_id',
  filters: { entity: 'entity_id', status: 'status' },
  columns:
    'entity_id TEXT NOT NULL, order_type TEXT NOT NULL, jurisdiction_code TEXT, ' +
    'details TEXT NOT NULL, status TEXT NOT NULL, cancellation_reason TEXT',
  json: ['details'],
};

@RegisterProjection()
export class OrdersProjection extends ResourceProjection.of(ORDERS_TABLE) {}
