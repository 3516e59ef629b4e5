import { EVENT_STORE, type EventStore, type Position } from '@filing/event-store';
import { handleCommand, type CommandContext, extend } from '@filing/platform';
import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { v7 as uuidv7 } from 'uuid';
import { clientStream, type ClientKind } from '../auth.events';
import { decideClient, evolveClient, initialClientState } from '../client';
import { generateSecret, hashSecret } from '../crypto/secrets';
import { requireAccount } from './load';

export interface CreateClientInput {
  /** Required for a customer client; null for an operator client. */
  readonly accountId: string | null;
  readonly kind: ClientKind;
  /** Space-separated subset of what the kind allows; default: all of it. */
  readonly scope?: string;
}

export interface CreateClientResult {
  readonly clientId: string;
  /** Shown once: only its scrypt hash is stored. */
  readonly clientSecret: string;
  readonly accountId: string | null;
  readonly kind: ClientKind;
  readonly scopes: readonly string[];
  readonly createdAt: string;
  readonly position: Position | null;
}

export class CreateClientCommand extends Command<CreateClientResult> {
  constructor(
    readonly input: CreateClientInput,
    readonly context: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(CreateClientCommand)
export class CreateClientHandler implements ICommandHandler<CreateClientCommand, CreateClientResult> {
  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  async execute({ input, context }: CreateClientCommand): Promise<CreateClientResult> {
    const accountId = input.accountId?.toLowerCase() ?? null;
    if (input.kind === 'customer' && accountId !== null) await requireAccount(this.store, accountId);
    const clientId = uuidv7();
    const clientSecret = generateSecret();
    const result = await handleCommand({
      store: this.store,
      streamId: clientStream(clientId),
      initialState: initialClientState,
      evolve: evolveClient,
      decide: decideClient,
      command: {
        type: 'CreateClient',
        clientId,
        accountId,
        kind: input.kind,
        scope: input.scope,
        secretHash: await hashSecret(clientSecret),
      },
      context: extend(context, { account_id: accountId }),
    });
    const [created] = result.events;
    if (created.type !== 'auth.ClientCreated') throw new Error('CreateClient did not create a client');
    return {
      clientId,
      clientSecret,
      accountId,
      kind: input.kind,
      scopes: created.data.scopes,
      createdAt: created.metadata.occurred_at,
      position: result.position,
    };
  }
}
