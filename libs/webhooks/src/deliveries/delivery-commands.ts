import { EVENT_STORE, type EventStore, type Position } from '@filing/event-store';
import { type CommandContext, handleCommand, loadAggregate, streamName } from '@filing/platform';
import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { DELIVERY_STREAM, type DeliveryEvent } from './delivery.events';
import { decideDelivery, evolveDelivery, initialDelivery, type DeliveryCommand, type DeliveryState } from './delivery';

const SYSTEM: Omit<CommandContext, 'account_id' | 'correlation_id'> = { actor: 'system:webhooks', causation_id: null };

/** Load → decide → append on a delivery stream (the dispatcher's, the fan-out's and the API's writes). */
@Injectable()
export class DeliveryCommands {
  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  load(deliveryId: string): Promise<{ state: DeliveryState }> {
    return loadAggregate(this.store, streamName(DELIVERY_STREAM, deliveryId), initialDelivery, evolveDelivery);
  }

  async execute(command: DeliveryCommand, context?: CommandContext): Promise<{ position: Position | null; state: DeliveryState }> {
    const result = await handleCommand<DeliveryState, DeliveryEvent, DeliveryCommand>({
      store: this.store,
      streamId: streamName(DELIVERY_STREAM, command.deliveryId),
      initialState: initialDelivery,
      evolve: evolveDelivery,
      decide: decideDelivery,
      command,
      context: context ?? { ...SYSTEM, account_id: null, correlation_id: randomUUID() },
      // The dispatcher, the fan-out and a customer may race on one delivery: decide again.
      maxRetries: 10,
    });
    return { position: result.position, state: result.state };
  }

  /** The newest position in the store: what the read model must reach to be current. */
  head(): Promise<Position | null> {
    return this.store.headPosition();
  }

  cancel(deliveryId: string, reason: string): Promise<{ position: Position | null; state: DeliveryState }> {
    return this.execute({ kind: 'cancel', deliveryId, reason });
  }
}
