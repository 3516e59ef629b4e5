import { EVENT_STORE, NO_STREAM, WrongExpectedVersionError, type EventStore, type Position } from '@filing/event-store';
import {
  buildMetadata,
  ConflictError,
  handleCommand,
  toEventData,
  type CommandContext,
  extend,
} from '@filing/platform';
import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { v7 as uuidv7 } from 'uuid';
import { AuthEvents, userEmailStream, userStream, type UserEmailReserved } from '../auth.events';
import { hashSecret, sha256 } from '../crypto/secrets';
import { decideUser, evolveUser, initialUserState, normalizeEmail, validateNewUser } from '../user';
import { requireAccount } from './load';

export interface CreateUserInput {
  readonly accountId: string;
  readonly email: string;
  /** Stored only as a scrypt hash. */
  readonly password: string;
}

export interface CreateUserResult {
  readonly userId: string;
  readonly accountId: string;
  readonly email: string;
  readonly createdAt: string;
  readonly position: Position | null;
}

export class CreateUserCommand extends Command<CreateUserResult> {
  constructor(
    readonly input: CreateUserInput,
    readonly context: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(CreateUserCommand)
export class CreateUserHandler implements ICommandHandler<CreateUserCommand, CreateUserResult> {
  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  async execute({ input, context }: CreateUserCommand): Promise<CreateUserResult> {
    validateNewUser(input.email, input.password);
    await requireAccount(this.store, input.accountId);
    const accountId = input.accountId.toLowerCase();
    const email = normalizeEmail(input.email);
    const userId = uuidv7();
    const ctx = extend(context, { account_id: accountId });
    const passwordHash = await hashSecret(input.password);

    // One user per email, service-wide: the first append to the email's reservation stream wins.
    // A crash between this append and the user's own leaves a reservation without a user; the
    // email then stays taken (an operator can see it in the stream), never doubly used.
    const reservation: UserEmailReserved = {
      type: AuthEvents.UserEmailReserved,
      data: { email, user_id: userId, account_id: accountId },
    };
    try {
      await this.store.appendToStream(userEmailStream(sha256(email)), [toEventData(reservation, buildMetadata(ctx))], {
        expectedRevision: NO_STREAM,
      });
    } catch (err) {
      if (err instanceof WrongExpectedVersionError)
        throw new ConflictError(`A user with email ${email} already exists`);
      throw err;
    }

    const result = await handleCommand({
      store: this.store,
      streamId: userStream(userId),
      initialState: initialUserState,
      evolve: evolveUser,
      decide: decideUser,
      command: { type: 'CreateUser', userId, accountId, email, passwordHash },
      context: ctx,
    });
    const [created] = result.events;
    return { userId, accountId, email, createdAt: created.metadata.occurred_at, position: result.position };
  }
}
