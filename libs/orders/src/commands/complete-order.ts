import { EVENT_STORE, type EventStore, type StreamRevision } from '@filing/event-store';
import { type CommandContext, expectedVersion, NotFoundError, type WriteResult, extend } from '@filing/platform';
import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { Order } from '../order';
import { OrderAggregate } from '../order.aggregate';

/**
 * An operator marks an order done (submitted → completed), from the internal API or the CLI.
 * Operators belong to no account: the order may be any account's.
 */
export class CompleteOrderCommand extends Command<WriteResult<Order>> {
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
export class CompleteOrderHandler implements ICommandHandler<CompleteOrderCommand, WriteResult<Order>> {
  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  async execute({ context, orderId, ifMatch }: CompleteOrderCommand): Promise<WriteResult<Order>> {
    // The event belongs to the order's account (its history, read model and webhooks are that
    // account's), while the actor stays the operator. An order never changes account.
    const { state } = await OrderAggregate.load(this.store, orderId);
    if (state === null) throw NotFoundError.of('order', orderId);
    return OrderAggregate.run(this.store, extend(context, { account_id: state.account_id }), {
      kind: 'complete',
      id: orderId,
      account_id: context.account_id,
      expected_version: expectedVersion(ifMatch),
    });
  }
}
