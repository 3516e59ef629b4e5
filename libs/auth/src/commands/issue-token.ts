import { ANY, EVENT_STORE, type EventStore, type Position } from '@filing/event-store';
import { buildMetadata, toEventData, type CommandContext, extend } from '@filing/platform';
import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { AuthEvents, clientTokensStream, type TokenIssued, type TokenRevoked } from '../auth.events';
import { generateSecret, sha256 } from '../crypto/secrets';

export interface IssueTokenInput {
  readonly clientId: string;
  readonly accountId: string | null;
  readonly scopes: readonly string[];
  readonly secretGeneration: number;
  readonly ttlSeconds: number;
  /** No later than this (epoch ms): the expiry of the previous secret the client authenticated with. */
  readonly notAfter?: number | null;
}

export interface IssueTokenResult {
  /** The opaque token, given to the client once; only its SHA-256 is stored. */
  readonly accessToken: string;
  readonly issuedAt: Date;
  readonly expiresAt: Date;
  readonly position: Position;
}

/**
 * A token is an event (so it survives a restart and a replay) on its client's token stream. The
 * authorization decision (client authenticated, scopes granted) was made by the token endpoint.
 */
export class IssueTokenCommand extends Command<IssueTokenResult> {
  constructor(
    readonly input: IssueTokenInput,
    readonly context: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(IssueTokenCommand)
export class IssueTokenHandler implements ICommandHandler<IssueTokenCommand, IssueTokenResult> {
  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  async execute({ input, context }: IssueTokenCommand): Promise<IssueTokenResult> {
    const accessToken = generateSecret();
    const issuedAt = new Date();
    const expiresAt = new Date(Math.min(issuedAt.getTime() + input.ttlSeconds * 1000, input.notAfter ?? Infinity));
    const event: TokenIssued = {
      type: AuthEvents.TokenIssued,
      data: {
        token_hash: sha256(accessToken),
        client_id: input.clientId,
        account_id: input.accountId,
        scopes: [...input.scopes],
        issued_at: issuedAt.toISOString(),
        expires_at: expiresAt.toISOString(),
        client_secret_generation: input.secretGeneration,
      },
    };
    const result = await this.store.appendToStream(
      clientTokensStream(input.clientId),
      [toEventData(event, buildMetadata(extend(context, { account_id: input.accountId }), issuedAt))],
      { expectedRevision: ANY },
    );
    return { accessToken, issuedAt, expiresAt, position: result.position };
  }
}

export interface RevokeTokenInput {
  readonly clientId: string;
  readonly accountId: string | null;
  readonly tokenHash: string;
}

/** RFC 7009 revocation of one token; the endpoint has checked that the token is the client's own. */
export class RevokeTokenCommand extends Command<{ position: Position }> {
  constructor(
    readonly input: RevokeTokenInput,
    readonly context: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(RevokeTokenCommand)
export class RevokeTokenHandler implements ICommandHandler<RevokeTokenCommand, { position: Position }> {
  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  async execute({ input, context }: RevokeTokenCommand): Promise<{ position: Position }> {
    const event: TokenRevoked = {
      type: AuthEvents.TokenRevoked,
      data: { token_hash: input.tokenHash, client_id: input.clientId },
    };
    const result = await this.store.appendToStream(
      clientTokensStream(input.clientId),
      [toEventData(event, buildMetadata(extend(context, { account_id: input.accountId })))],
      { expectedRevision: ANY },
    );
    return { position: result.position };
  }
}
