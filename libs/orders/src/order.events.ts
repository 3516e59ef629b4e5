import type { DomainEvent } from '@filing/platform';

/**
 * The orders context's public contract: what other modules (webhooks, documents) may depend on.
 * Names are explicit and stable; data is plain JSON. A change of meaning is a new schema version
 * (the aggregate's `schemaVersions`; all are 1 so far), and readers keep understanding the old ones.
 */
export const ORDER_SUBMITTED = 'orders.OrderSubmitted';
export const ORDER_CANCELLED = 'orders.OrderCancelled';
export const ORDER_COMPLETED = 'orders.OrderCompleted';

export const ORDER_TYPES = [
  'formation',
  'annual_report',
  'registered_agent',
  'amendment',
  'dissolution',
  'foreign_qualification',
  'certificate_of_good_standing',
  'other',
] as const;
export type OrderType = (typeof ORDER_TYPES)[number];

export const ORDER_STATUSES = ['submitted', 'cancelled', 'completed'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** A JSON object (the order's free-form `details`). */
export type OrderDetails = { readonly [key: string]: OrderDetailsValue };
type OrderDetailsValue = null | boolean | number | string | OrderDetailsValue[] | { [key: string]: OrderDetailsValue };

/** The order as a customer sees it. A type, not an interface: it must be JSON. */
export type OrderFields = {
  readonly entity_id: string;
  readonly order_type: OrderType;
  /** ISO 3166-2, e.g. `US-DE`. */
  readonly jurisdiction_code: string | null;
  readonly details: OrderDetails;
  readonly status: OrderStatus;
  /** The customer's reason, once cancelled (null otherwise, or when none was given). */
  readonly cancellation_reason: string | null;
};

/** The fields every order event carries, as they are after the event. */
export const ORDER_FIELDS: readonly (keyof OrderFields)[] = [
  'entity_id',
  'order_type',
  'jurisdiction_code',
  'details',
  'status',
  'cancellation_reason',
];

/** Every order event carries the order as it is after the event, so no consumer needs an earlier one. */
export type OrderEventData = OrderFields & { readonly order_id: string };

export type OrderSubmitted = DomainEvent<typeof ORDER_SUBMITTED, OrderEventData & { readonly status: 'submitted' }>;
export type OrderCancelled = DomainEvent<typeof ORDER_CANCELLED, OrderEventData & { readonly status: 'cancelled' }>;
export type OrderCompleted = DomainEvent<typeof ORDER_COMPLETED, OrderEventData & { readonly status: 'completed' }>;
export type OrderEvent = OrderSubmitted | OrderCancelled | OrderCompleted;

/** Streams are `order-<id>`. */
export const ORDER_STREAM_CONTEXT = 'order';
