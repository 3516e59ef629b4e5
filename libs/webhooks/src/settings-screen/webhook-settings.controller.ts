import { type CommandContext, Ctx, ConflictError, extend } from '@filing/platform';
import { Body, Controller, Get, Param, Post, Query, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { EndpointHealthQueries } from '../endpoint-health/endpoint-health.queries';
import type { EndpointView } from '../endpoints/endpoint-views';
import { EndpointsService } from '../endpoints/endpoints.service';
import { CreateEndpointDto } from '../http/webhooks.dto';
import { SettingsService } from '../settings/settings.service';
import { fieldErrors, type Form, formValues, validatedInput } from './endpoint-form-input';
import { setFlash, takeFlash } from './session/flash';
import { type CurrentSession, Session, SettingsSessionGuard } from './session/session.guard';
import { SettingsErrorFilter } from './settings-errors.filter';
import { checkId, redirect, sendPage, userOf } from './settings-http';
import { EMPTY_ENDPOINT_FORM, type EndpointFormValues, type FieldErrors } from './views/endpoint-form';
import { deleteConfirmPage } from './views/endpoint.page';
import { PROFILE_URL } from './views/layout';
import { endpointUrl, profilePage } from './views/profile.page';

const ENDPOINTS_PER_PAGE = '50';

/**
 * Profile Settings → Profile tab → Webhook Settings: the account's switch and its endpoints (the
 * list, a new one, enabling, disabling, deleting); one endpoint's own page is
 * WebhookEndpointSettingsController's. Every action maps a form onto the same services the
 * webhook API's controller uses (EndpointsService, SettingsService) with the signed-in user's
 * command context, so the account scoping, validation and events are the API's: another
 * account's id is a 404 here too.
 */
@Controller('settings/profile')
@UseFilters(SettingsErrorFilter)
@UseGuards(SettingsSessionGuard)
export class WebhookSettingsController {
  constructor(
    private readonly endpoints: EndpointsService,
    private readonly settings: SettingsService,
    private readonly health: EndpointHealthQueries,
  ) {}

  @Get()
  profile(
    @Ctx() ctx: CommandContext,
    @Session() current: CurrentSession,
    @Res() reply: FastifyReply,
    @Query('cursor') cursor?: string,
  ): void {
    this.renderProfile(reply, ctx, current, { values: EMPTY_ENDPOINT_FORM, errors: {} }, 200, cursor);
  }

  @Post('webhook-notifications')
  async switchNotifications(
    @Ctx() ctx: CommandContext,
    @Session() current: CurrentSession,
    @Body() body: Form,
    @Res() reply: FastifyReply,
  ) {
    const enabled = body.notifications_enabled === 'true';
    await this.settings.set(ctx, current.session.accountId, enabled);
    setFlash(reply, current.token, `Webhook Notifications are ${enabled ? 'on' : 'off'}.`);
    redirect(reply, `${PROFILE_URL}#webhook-settings`);
  }

  @Post('webhook-endpoints')
  async create(
    @Ctx() ctx: CommandContext,
    @Session() current: CurrentSession,
    @Body() body: Form,
    @Res() reply: FastifyReply,
  ) {
    const values = formValues(body);
    let created: EndpointView;
    try {
      created = await this.endpoints.create(ctx, await validatedInput(values, CreateEndpointDto));
    } catch (err) {
      // The account's cap: the form again with why, as the API's 409 says it.
      if (err instanceof ConflictError) {
        return this.renderProfile(reply, ctx, current, { values, errors: { endpoints: err.message } }, 409);
      }
      return this.renderProfile(reply, ctx, current, { values, errors: fieldErrors(err) }, 400);
    }
    setFlash(reply, current.token, `Endpoint ${created.url} was created. It stays disabled until you enable it.`);
    redirect(reply, `${PROFILE_URL}#endpoint-${created.id}`);
  }

  @Post('webhook-endpoints/:id/enable')
  enable(
    @Ctx() ctx: CommandContext,
    @Session() current: CurrentSession,
    @Param('id') id: string,
    @Body() body: Form,
    @Res() reply: FastifyReply,
  ) {
    return this.toggle(ctx, current, checkId(id), 'enable', body, reply);
  }

  @Post('webhook-endpoints/:id/disable')
  disable(
    @Ctx() ctx: CommandContext,
    @Session() current: CurrentSession,
    @Param('id') id: string,
    @Body() body: Form,
    @Res() reply: FastifyReply,
  ) {
    return this.toggle(ctx, current, checkId(id), 'disable', body, reply);
  }

  @Get('webhook-endpoints/:id/delete')
  confirmDelete(
    @Ctx() ctx: CommandContext,
    @Session() current: CurrentSession,
    @Param('id') id: string,
    @Res() reply: FastifyReply,
  ): void {
    const endpoint = this.endpoints.get(ctx, checkId(id));
    sendPage(reply, deleteConfirmPage(userOf(current), endpoint));
  }

  @Post('webhook-endpoints/:id/delete')
  async delete(
    @Ctx() ctx: CommandContext,
    @Session() current: CurrentSession,
    @Param('id') id: string,
    @Res() reply: FastifyReply,
  ) {
    const endpoint = this.endpoints.get(ctx, checkId(id));
    await this.endpoints.action(ctx, endpoint.id, 'delete');
    setFlash(reply, current.token, `Endpoint ${endpoint.url} was deleted.`);
    redirect(reply, `${PROFILE_URL}#webhook-settings`);
  }

  private async toggle(
    ctx: CommandContext,
    current: CurrentSession,
    id: string,
    kind: 'enable' | 'disable',
    body: Form,
    reply: FastifyReply,
  ) {
    const endpoint = (await this.endpoints.action(ctx, id, kind))!;
    setFlash(reply, current.token, `Endpoint ${endpoint.url} is ${kind === 'enable' ? 'enabled' : 'disabled'}.`);
    redirect(reply, body.back === 'endpoint' ? endpointUrl(id) : `${PROFILE_URL}#endpoint-${id}`);
  }

  private renderProfile(
    reply: FastifyReply,
    ctx: CommandContext,
    current: CurrentSession,
    createForm: { values: EndpointFormValues; errors: FieldErrors },
    status = 200,
    cursor?: string,
  ): void {
    const page = this.endpoints.listDetails(ctx, { limit: ENDPOINTS_PER_PAGE, cursor });
    const model = {
      user: extend(userOf(current), { accountId: current.session.accountId }),
      flash: takeFlash(reply, current.token),
      notificationsEnabled: this.settings.get(current.session.accountId).notifications_enabled,
      endpoints: page.data,
      health: this.health.health(page.data.map((e) => e.id)),
      nextCursor: page.next_cursor,
      createForm,
    };
    sendPage(reply, profilePage(model), status);
  }
}
