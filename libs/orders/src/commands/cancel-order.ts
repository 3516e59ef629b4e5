import { EVENT_STORE, type EventStore, type StreamRevision } from '@filing/event-store';
import type { CommandContext } from '@filing/platform';
import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { accountOf, type OrderWriteResult, runOrderCommand } from './submit-order';

/** The customer withdraws a submitted order (submitted → cancelled). */
export class CancelOrderCommand extends Command<OrderWriteResult> {
  constructor(
    readonly context: CommandContext,
    readonly orderId: string,
    readonly reason?: string | null,
    /** The client's If-Match: a mismatch is a 412. */
    readonly ifMatch?: StreamRevision,
  ) {
    super();
  }
}

@CommandHandler(CancelOrderCommand)
export class CancelOrderHandler implements ICommandHandler<CancelOrderCommand, OrderWriteResult> {
  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  execute({ context, orderId, reason, ifMatch }: CancelOrderCommand): Promise<OrderWriteResult> {
    return runOrderCommand(this.store, context, {
      kind: 'cancel',
      order_id: orderId,
      account_id: accountOf(context),
      reason,
      // Checked by decide() after ownership, not by handleCommand's ifMatch (see order.ts).
      expected_version: ifMatch === undefined ? undefined : Number(ifMatch),
    });
  }
}
