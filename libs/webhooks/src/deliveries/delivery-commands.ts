import {
  EVENT_STORE,
  type EventStore,
  type Position,
  type StreamRevision,
  WrongExpectedVersionError,
} from '@filing/event-store';
import {
  buildMetadata,
  type CommandContext,
  handleCommand,
  loadAggregate,
  streamName,
  toEventData,
  extend,
} from '@filing/platform';
import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { DELIVERY_STREAM, type DeliveryEvent } from './delivery.events';
import { decideDelivery, evolveDelivery, initialDelivery, type DeliveryCommand, type DeliveryState } from './delivery';

const SYSTEM: Omit<CommandContext, 'account_id' | 'correlation_id'> = { actor: 'system:webhooks', causation_id: null };

/** The context of a write the service makes on its own, in `accountId` (one per delivery attempt). */
function systemContext(accountId: string | null): CommandContext {
  return extend(SYSTEM, { account_id: accountId, correlation_id: randomUUID() });
}

/** Load → decide → append on a delivery stream (the dispatcher's, the fan-out's and the API's writes). */
@Injectable()
export class DeliveryCommands {
  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  load(deliveryId: string): Promise<{ state: DeliveryState; revision: StreamRevision | null }> {
    return loadAggregate(this.store, streamName(DELIVERY_STREAM, deliveryId), initialDelivery, evolveDelivery);
  }

  /**
   * Decides on a state the caller has just loaded and appends expecting its revision: the
   * dispatcher's hot path, one stream read per attempt instead of three. A concurrent write
   * (a cancel, a redelivery) falls back to load → decide → append.
   */
  async executeOn(
    loaded: { state: DeliveryState; revision: StreamRevision | null },
    command: DeliveryCommand,
  ): Promise<{ position: Position | null }> {
    const events = decideDelivery(loaded.state, command);
    if (events.length === 0 || loaded.revision === null) return this.execute(command);
    const metadata = buildMetadata(systemContext(loaded.state.accountId));
    try {
      const result = await this.store.appendToStream(
        streamName(DELIVERY_STREAM, command.deliveryId),
        events.map((e) => toEventData(e, metadata)),
        { expectedRevision: loaded.revision },
      );
      return { position: result.position };
    } catch (err) {
      if (!(err instanceof WrongExpectedVersionError)) throw err;
      return this.execute(command);
    }
  }

  /**
   * Claims the next attempt on the state the caller loaded, expecting its revision: of several
   * instances (or a customer's redelivery, a cancel) writing at once, one wins. Returns the state
   * after the claim, or null when something was written first or the claim is not allowed: the
   * caller then leaves the delivery alone (another instance has it, or its read model was stale).
   *
   * On a store one process owns (`sharedByInstances` false: sqlite) no `DeliveryClaimed` is
   * written: there is no other instance to arbitrate with, and the dispatcher's in-flight and
   * settling maps already keep one attempt per delivery. What is left is a write the loaded state
   * missed (a cancel, a redelivery, an attempt recorded before a restart): it moved the stream's
   * revision, so the claim holds exactly when the revision is still the loaded one, and the
   * attempt is then recorded expecting it, as after a written claim.
   *
   * `leaseUntil` (epoch ms) is the end of the written claim's lease as the other instances see
   * it (null: none written, nobody else to race with): its holder must be done by then.
   */
  async claim(
    loaded: { state: DeliveryState; revision: StreamRevision | null },
    command: Extract<DeliveryCommand, { kind: 'claim' }>,
  ): Promise<{ state: DeliveryState; revision: StreamRevision; leaseUntil: number | null } | null> {
    const events = decideDelivery(loaded.state, command);
    if (events.length === 0 || loaded.revision === null) return null;
    if (!this.store.sharedByInstances) {
      const current = await this.store.streamRevision(streamName(DELIVERY_STREAM, command.deliveryId));
      return current === loaded.revision ? { state: loaded.state, revision: loaded.revision, leaseUntil: null } : null;
    }
    const metadata = buildMetadata(systemContext(loaded.state.accountId), command.now);
    try {
      const result = await this.store.appendToStream(
        streamName(DELIVERY_STREAM, command.deliveryId),
        events.map((e) => toEventData(e, metadata)),
        { expectedRevision: loaded.revision },
      );
      const state = events.reduce((s, e) => evolveDelivery(s, extend(e, { metadata }) as never), loaded.state);
      return { state, revision: result.nextExpectedRevision, leaseUntil: command.now.getTime() + command.leaseMs };
    } catch (err) {
      if (err instanceof WrongExpectedVersionError) return null;
      throw err;
    }
  }

  async execute(
    command: DeliveryCommand,
    context?: CommandContext,
  ): Promise<{ position: Position | null; state: DeliveryState }> {
    const result = await handleCommand<DeliveryState, DeliveryEvent, DeliveryCommand>({
      store: this.store,
      streamId: streamName(DELIVERY_STREAM, command.deliveryId),
      initialState: initialDelivery,
      evolve: evolveDelivery,
      decide: decideDelivery,
      command,
      context: context ?? systemContext(null),
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
