import { EVENT_STORE, type EventStore, type Position } from '@filing/event-store';
import { handleCommand, loadAggregate, NotFoundError, type CommandContext, extend } from '@filing/platform';
import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { clientStream } from '../auth.events';
import { type ClientCommand, type ClientState, decideClient, evolveClient, initialClientState } from '../client';
import { generateSecret, hashSecret } from '../crypto/secrets';
import { isUuid } from './load';

export interface RotateClientSecretResult {
  readonly clientId: string;
  /** The new secret, shown once. */
  readonly clientSecret: string;
  readonly secretGeneration: number;
  /** Until when the replaced secret (and its tokens) keep working; null: they stopped at once. */
  readonly previousSecretExpiresAt: string | null;
  readonly position: Position | null;
}

export interface RotateClientSecretOptions {
  /** Seconds the replaced secret keeps working (0–604800, default 0: it stops at once, with its tokens). */
  readonly previousSecretExpiresIn?: number;
  /** Only a client of this account (the settings screen): another account's client is not found. */
  readonly accountId?: string;
}

export class RotateClientSecretCommand extends Command<RotateClientSecretResult> {
  constructor(
    readonly clientId: string,
    readonly context: CommandContext,
    readonly options: RotateClientSecretOptions = {},
  ) {
    super();
  }
}

export interface ExpirePreviousSecretResult {
  readonly clientId: string;
  /** null when no previous secret was live (nothing appended). */
  readonly position: Position | null;
}

/** Ends a rotation's overlap now: the previous secret and every token issued with it stop working. */
export class ExpirePreviousSecretCommand extends Command<ExpirePreviousSecretResult> {
  constructor(
    readonly clientId: string,
    readonly context: CommandContext,
    /** Only a client of this account (the settings screen): another account's client is not found. */
    readonly accountId?: string,
  ) {
    super();
  }
}

/** The client's stream and state, or a 404 (also for a client of another account than `accountId`). */
async function loadClient(store: EventStore, id: string, accountId?: string) {
  if (!isUuid(id)) throw NotFoundError.of('client', id);
  const clientId = id.toLowerCase();
  const streamId = clientStream(clientId);
  const { state } = await loadAggregate(store, streamId, initialClientState, evolveClient);
  if (state.status === 'new' || (accountId !== undefined && state.accountId !== accountId)) {
    throw NotFoundError.of('client', id);
  }
  return { clientId, streamId, state };
}

async function runClientCommand(
  store: EventStore,
  streamId: string,
  state: Exclude<ClientState, { status: 'new' }>,
  command: ClientCommand,
  context: CommandContext,
) {
  return handleCommand({
    store,
    streamId,
    initialState: initialClientState,
    evolve: evolveClient,
    decide: decideClient,
    command,
    context: extend(context, { account_id: state.accountId }),
  });
}

@CommandHandler(RotateClientSecretCommand)
export class RotateClientSecretHandler implements ICommandHandler<RotateClientSecretCommand, RotateClientSecretResult> {
  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  async execute({ clientId: id, context, options }: RotateClientSecretCommand): Promise<RotateClientSecretResult> {
    // Checked before paying for a hash; handleCommand checks again against the stream.
    const { clientId, streamId, state } = await loadClient(this.store, id, options.accountId);
    const clientSecret = generateSecret();
    const secretHash = await hashSecret(clientSecret);
    const command: ClientCommand = {
      type: 'RotateClientSecret',
      secretHash,
      previousSecretExpiresIn: options.previousSecretExpiresIn,
      at: new Date().toISOString(),
    };
    const result = await runClientCommand(this.store, streamId, state, command, context);
    const after = result.state;
    return {
      clientId,
      clientSecret,
      secretGeneration: after.status === 'new' ? 0 : after.secretGeneration,
      previousSecretExpiresAt: after.status === 'new' ? null : (after.previousSecret?.expiresAt ?? null),
      position: result.position,
    };
  }
}

@CommandHandler(ExpirePreviousSecretCommand)
export class ExpirePreviousSecretHandler implements ICommandHandler<
  ExpirePreviousSecretCommand,
  ExpirePreviousSecretResult
> {
  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  async execute({
    clientId: id,
    context,
    accountId,
  }: ExpirePreviousSecretCommand): Promise<ExpirePreviousSecretResult> {
    const { clientId, streamId, state } = await loadClient(this.store, id, accountId);
    const command: ClientCommand = { type: 'ExpirePreviousSecret', at: new Date().toISOString() };
    const result = await runClientCommand(this.store, streamId, state, command, context);
    return { clientId, position: result.position };
  }
}
