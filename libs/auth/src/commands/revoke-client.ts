import { EVENT_STORE, type EventStore, type Position } from '@filing/event-store';
import { handleCommand, loadAggregate, NotFoundError, type CommandContext, extend } from '@filing/platform';
import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { clientStream } from '../auth.events';
import { decideClient, evolveClient, initialClientState } from '../client';
import { isUuid } from './load';

export interface RevokeClientResult {
  readonly clientId: string;
  /** null when the client was already revoked (nothing appended). */
  readonly position: Position | null;
}

export class RevokeClientCommand extends Command<RevokeClientResult> {
  constructor(
    readonly clientId: string,
    readonly context: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(RevokeClientCommand)
export class RevokeClientHandler implements ICommandHandler<RevokeClientCommand, RevokeClientResult> {
  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  async execute({ clientId: id, context }: RevokeClientCommand): Promise<RevokeClientResult> {
    if (!isUuid(id)) throw NotFoundError.of('client', id);
    const clientId = id.toLowerCase();
    const streamId = clientStream(clientId);
    const { state } = await loadAggregate(this.store, streamId, initialClientState, evolveClient);
    if (state.status === 'new') throw NotFoundError.of('client', id);
    const result = await handleCommand({
      store: this.store,
      streamId,
      initialState: initialClientState,
      evolve: evolveClient,
      decide: decideClient,
      command: { type: 'RevokeClient' },
      context: extend(context, { account_id: state.accountId }),
    });
    return { clientId, position: result.position };
  }
}
