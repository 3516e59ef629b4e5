import { EVENT_STORE, type EventStore, type StreamRevision } from '@filing/event-store';
import { type CommandContext, loadAggregate, NotFoundError, streamName } from '@filing/platform';
import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { evolve, initialOrderState } from '../order';
import { ORDER_STREAM_CONTEXT } from '../order.events';
import { type OrderWriteResult, runOrderCommand } from './submit-order';

/**
 * An operator marks an order done (submitted → completed), from the internal API or the CLI.
 * Operators belong to no account: the order may be any account's.
 */
export class CompleteOrderCommand extends Command<OrderWriteResult> {
  constructor(
    readonly context: CommandContext,
    readonly orderId: string,
    /** The operator's If-Match: a mismatch is a 412. */
    readonly ifMatch?: StreamRevision,
  ) {
    super();
  }
}

@CommandHandler(CompleteOrderCommand)
export class CompleteOrderHandler implements ICommandHandler<CompleteOrderCommand, OrderWriteResult> {
  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  async execute({ context, orderId, ifMatch }: CompleteOrderCommand): Promise<OrderWriteResult> {
    // The event belongs to the order's account (its history, read model and webhooks are that
    // account's), while the actor stays the operator. An order never changes account.
    const { state } = await loadAggregate(this.store, streamName(ORDER_STREAM_CONTEXT, orderId), initialOrderState, evolve);
    if (state === null) throw NotFoundError.of('order', orderId);
    return runOrderCommand(this.store, { ...context, account_id: state.account_id }, {
      kind: 'complete',
      order_id: orderId,
      account_id: context.account_id,
      expected_version: ifMatch === undefined ? undefined : Number(ifMatch),
    });
  }
}
