import { AccountClientsQuery, ExpirePreviousSecretCommand, RotateClientSecretCommand } from '@filing/auth';
import { type CommandContext, Ctx, NotFoundError, ReadYourWrites, ValidationError } from '@filing/platform';
import { Body, Controller, Get, Param, Post, Res, UseFilters, UseGuards } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import type { FastifyReply } from 'fastify';
import { setFlash, takeFlash } from './session/flash';
import { type CurrentSession, Session, SettingsSessionGuard } from './session/session.guard';
import { SettingsErrorFilter } from './settings-errors.filter';
import { redirect, sendPage } from './settings-http';
import {
  API_CLIENTS_URL,
  type ApiClientsPageModel,
  apiClientsPage,
  KEEP_PREVIOUS_CHOICES,
} from './views/api-clients.page';
import { checkId } from './settings-http';

/**
 * Profile Settings → API clients: the signed-in user's account's clients, and *Roll secret*
 * with the old secret kept for a chosen while (the operator API's rotate-secret, narrowed to the
 * account: another account's client is the same 404 as a missing one, forged form or not).
 */
@Controller('settings/profile/api-clients')
@UseFilters(SettingsErrorFilter)
@UseGuards(SettingsSessionGuard)
export class ApiClientsController {
  constructor(
    private readonly commandBus: CommandBus,
    private readonly queryBus: QueryBus,
    private readonly readYourWrites: ReadYourWrites,
  ) {}

  @Get()
  async list(@Session() current: CurrentSession, @Res() reply: FastifyReply): Promise<void> {
    await this.render(reply, current);
  }

  /** Answered with the page itself (not a redirect): the new secret is never put in the session. */
  @Post(':id/roll-secret')
  async roll(
    @Ctx() ctx: CommandContext,
    @Session() current: CurrentSession,
    @Param('id') id: string,
    @Body() body: Record<string, unknown>,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const { accountId } = current.session;
    const clientId = await this.ownClient(accountId, id);
    const previousSecretExpiresIn = keepPrevious(body.keep_previous);
    const result = await this.commandBus.execute(
      new RotateClientSecretCommand(clientId, ctx, { previousSecretExpiresIn, accountId }),
    );
    await this.readYourWrites.await(result.position);
    await this.render(reply, current, {
      clientId,
      secret: result.clientSecret,
      previousExpiresAt: result.previousSecretExpiresAt,
    });
  }

  /** Ends the overlap of the last roll now: the old secret and its tokens stop working. */
  @Post(':id/expire-previous-secret')
  async expirePrevious(
    @Ctx() ctx: CommandContext,
    @Session() current: CurrentSession,
    @Param('id') id: string,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const { accountId } = current.session;
    const clientId = await this.ownClient(accountId, id);
    const result = await this.commandBus.execute(new ExpirePreviousSecretCommand(clientId, ctx, accountId));
    await this.readYourWrites.await(result.position);
    setFlash(reply, current.token, `The previous secret of ${clientId} no longer works, nor do its tokens.`);
    redirect(reply, `${API_CLIENTS_URL}#client-${clientId}`);
  }

  /** The id of a client of this account; a malformed, missing or foreign one is the same 404. */
  private async ownClient(accountId: string, id: string): Promise<string> {
    const clientId = checkId(id);
    const [own] = await this.queryBus.execute(new AccountClientsQuery(accountId, clientId));
    if (!own) throw new NotFoundError();
    return clientId;
  }

  private async render(reply: FastifyReply, current: CurrentSession, rolled?: ApiClientsPageModel['rolled']) {
    const clients = await this.queryBus.execute(new AccountClientsQuery(current.session.accountId));
    const user = { email: current.session.email, csrfToken: current.session.csrfToken };
    sendPage(reply, apiClientsPage({ user, flash: takeFlash(reply, current.token), clients, rolled }));
  }
}

/** The form's choice, in seconds: only one the form offers. */
function keepPrevious(value: unknown): number {
  const seconds = typeof value === 'string' && /^\d{1,6}$/.test(value) ? Number(value) : NaN;
  if (!KEEP_PREVIOUS_CHOICES.some((k) => k.seconds === seconds)) {
    throw ValidationError.field('keep_previous', 'Choose how long the old secret keeps working.');
  }
  return seconds;
}
