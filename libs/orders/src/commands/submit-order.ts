import { EVENT_STORE, type EventStore, type Position } from '@filing/event-store';
import { type CommandContext, handleCommand, ReferenceChecker, streamName } from '@filing/platform';
import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { v7 as uuidv7 } from 'uuid';
import { decide, evolve, initialOrderState, type Order, type OrderCommand, type SubmitOrderInput } from '../order';
import { ORDER_EVENT_SCHEMA_VERSIONS, ORDER_STREAM_CONTEXT, type OrderEvent } from '../order.events';

/** What an order write returns: the position read-your-writes waits for, and the order after it. */
export interface OrderWriteResult {
  /** null when nothing was appended. */
  readonly position: Position | null;
  readonly order: Order;
}

export class SubmitOrderCommand extends Command<OrderWriteResult> {
  constructor(
    readonly context: CommandContext,
    readonly input: SubmitOrderInput,
    /** UUID v7, so ids sort by submission (lists are ordered by id). */
    readonly orderId: string = uuidv7(),
  ) {
    super();
  }
}

@CommandHandler(SubmitOrderCommand)
export class SubmitOrderHandler implements ICommandHandler<SubmitOrderCommand, OrderWriteResult> {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly references: ReferenceChecker,
  ) {}

  async execute({ context, input, orderId }: SubmitOrderCommand): Promise<OrderWriteResult> {
    const accountId = accountOf(context);
    // Ids are stored lower-case; a client may send a UUID in capitals.
    const entityId = typeof input.entity_id === 'string' ? input.entity_id.toLowerCase() : input.entity_id;
    await this.references.assertExist(accountId, { entity_id: entityId });
    return runOrderCommand(this.store, context, {
      kind: 'submit',
      order_id: orderId,
      account_id: accountId,
      input: { ...input, entity_id: entityId },
    });
  }
}

/** Load → decide → append for any order command (the shared part of the handlers). */
export async function runOrderCommand(store: EventStore, context: CommandContext, command: OrderCommand): Promise<OrderWriteResult> {
  const result = await handleCommand<ReturnType<typeof evolve>, OrderEvent, OrderCommand>({
    store,
    streamId: streamName(ORDER_STREAM_CONTEXT, command.order_id),
    initialState: initialOrderState,
    evolve,
    decide,
    command,
    context,
    schemaVersion: (type) => ORDER_EVENT_SCHEMA_VERSIONS[type as OrderEvent['type']] ?? 1,
  });
  // decide() either appended or threw for a missing order, so the state exists here.
  return { position: result.position, order: result.state! };
}

/** Customer commands always belong to an account; a context without one is a wiring bug, not bad input. */
export function accountOf(context: CommandContext): string {
  if (!context.account_id) throw new Error('Order commands of a customer need an account');
  return context.account_id;
}
