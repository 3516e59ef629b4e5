import { EVENT_STORE, type EventStore, type Position } from '@filing/event-store';
import { handleCommand, type CommandContext, extend } from '@filing/platform';
import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { v7 as uuidv7 } from 'uuid';
import { decideAccount, evolveAccount, initialAccountState } from '../account';
import { accountStream } from '../auth.events';

export interface CreateAccountResult {
  readonly accountId: string;
  readonly name: string;
  readonly createdAt: string;
  /** Where the HTTP layer waits for read-your-writes. */
  readonly position: Position | null;
}

export class CreateAccountCommand extends Command<CreateAccountResult> {
  constructor(
    readonly name: string,
    readonly context: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(CreateAccountCommand)
export class CreateAccountHandler implements ICommandHandler<CreateAccountCommand, CreateAccountResult> {
  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  async execute({ name, context }: CreateAccountCommand): Promise<CreateAccountResult> {
    const accountId = uuidv7();
    const result = await handleCommand({
      store: this.store,
      streamId: accountStream(accountId),
      initialState: initialAccountState,
      evolve: evolveAccount,
      decide: decideAccount,
      command: { type: 'CreateAccount', accountId, name },
      context: extend(context, { account_id: accountId }),
    });
    const [created] = result.events;
    return { accountId, name: created.data.name, createdAt: created.metadata.occurred_at, position: result.position };
  }
}
