import { defineAggregate } from '@filing/platform';
import { decide, evolve, initialOrderState } from './order';
import { ORDER_STREAM_CONTEXT } from './order.events';

/** The orders' write side: submit (its entity checked) and cancel run as they are; complete is the operator's (commands/complete-order.ts). */
export const OrderAggregate = defineAggregate({
  streamPrefix: ORDER_STREAM_CONTEXT,
  initialState: initialOrderState,
  evolve,
  decide,
  references: ['entity_id'],
});
