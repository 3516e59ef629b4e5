import { EVENT_STORE, type EventStore, type Position } from '@filing/event-store';
import { handleCommand, loadAggregate, NotFoundError, type CommandContext, extend } from '@filing/platform';
import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { clientStream } from '../auth.events';
import { decideClient, evolveClient, initialClientState } from '../client';
import { generateSecret, hashSecret } from '../crypto/secrets';
import { isUuid } from './load';

export interface RotateClientSecretResult {
  readonly clientId: string;
  /** The new secret, shown once. The old one, and every token issued with it, stop working. */
  readonly clientSecret: string;
  readonly secretGeneration: number;
  readonly position: Position | null;
}

export class RotateClientSecretCommand extends Command<RotateClientSecretResult> {
  constructor(
    readonly clientId: string,
    readonly context: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(RotateClientSecretCommand)
export class RotateClientSecretHandler implements ICommandHandler<RotateClientSecretCommand, RotateClientSecretResult> {
  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  async execute({ clientId: id, context }: RotateClientSecretCommand): Promise<RotateClientSecretResult> {
    if (!isUuid(id)) throw NotFoundError.of('client', id);
    const clientId = id.toLowerCase();
    const streamId = clientStream(clientId);
    // Checked before paying for a hash; handleCommand checks again against the stream.
    const { state } = await loadAggregate(this.store, streamId, initialClientState, evolveClient);
    if (state.status === 'new') throw NotFoundError.of('client', id);
    const clientSecret = generateSecret();
    const secretHash = await hashSecret(clientSecret);
    const result = await handleCommand({
      store: this.store,
      streamId,
      initialState: initialClientState,
      evolve: evolveClient,
      decide: decideClient,
      command: { type: 'RotateClientSecret', secretHash },
      context: extend(context, { account_id: state.accountId }),
    });
    const generation = result.state.status === 'new' ? 0 : result.state.secretGeneration;
    return { clientId, clientSecret, secretGeneration: generation, position: result.position };
  }
}
