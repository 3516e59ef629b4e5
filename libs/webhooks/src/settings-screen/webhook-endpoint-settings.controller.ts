import { type CommandContext, Ctx } from '@filing/platform';
import { Body, Controller, Get, Param, Post, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { RedeliveryService } from '../deliveries/redelivery.service';
import { STATS_WINDOW_MS } from '../endpoint-health/endpoint-health';
import type { EndpointDetails } from '../endpoints/endpoint-views';
import { EndpointsService } from '../endpoints/endpoints.service';
import { UpdateEndpointDto } from '../http/webhooks.dto';
import { DeliveriesQueries } from '../read-model/deliveries.queries';
import { fieldErrors, type Form, formValues, validatedInput, valuesOf } from './endpoint-form-input';
import { setFlash, takeFlash } from './session/flash';
import { type CurrentSession, Session, SettingsSessionGuard } from './session/session.guard';
import { SettingsErrorFilter } from './settings-errors.filter';
import { checkId, redirect, sendPage, userOf } from './settings-http';
import type { EndpointFormValues, FieldErrors } from './views/endpoint-form';
import { endpointPage, RECENT_DELIVERIES } from './views/endpoint.page';
import { dateTimeLocal } from './views/endpoint-health.view';
import { endpointUrl } from './views/profile.page';

/**
 * One endpoint's settings page (Profile → Webhook Settings → an endpoint): its form, its signing
 * secret (shown or rotated), its recent deliveries and their redelivery. Like the list's
 * controller (WebhookSettingsController), every action goes through the webhook API's services
 * with the signed-in user's command context.
 */
@Controller('settings/profile')
@UseFilters(SettingsErrorFilter)
@UseGuards(SettingsSessionGuard)
export class WebhookEndpointSettingsController {
  constructor(
    private readonly endpoints: EndpointsService,
    private readonly deliveries: DeliveriesQueries,
    private readonly redelivery: RedeliveryService,
  ) {}

  @Get('webhook-endpoints/:id')
  endpoint(
    @Ctx() ctx: CommandContext,
    @Session() current: CurrentSession,
    @Param('id') id: string,
    @Res() reply: FastifyReply,
  ): void {
    const endpoint = this.endpoints.details(ctx, checkId(id));
    this.renderEndpoint(reply, ctx, current, endpoint, { values: valuesOf(endpoint), errors: {} });
  }

  @Post('webhook-endpoints/:id')
  async update(
    @Ctx() ctx: CommandContext,
    @Session() current: CurrentSession,
    @Param('id') id: string,
    @Body() body: Form,
    @Res() reply: FastifyReply,
  ) {
    const endpoint = this.endpoints.details(ctx, checkId(id));
    const values = formValues(body);
    try {
      await this.endpoints.update(ctx, endpoint.id, await validatedInput(values, UpdateEndpointDto));
    } catch (err) {
      return this.renderEndpoint(reply, ctx, current, endpoint, { values, errors: fieldErrors(err) }, 400);
    }
    setFlash(reply, current.token, 'Your changes to the endpoint were saved.');
    redirect(reply, endpointUrl(endpoint.id));
  }

  /** Answered with the page itself (not a redirect): the secret is never put in the session. */
  @Post('webhook-endpoints/:id/secret')
  reveal(
    @Ctx() ctx: CommandContext,
    @Session() current: CurrentSession,
    @Param('id') id: string,
    @Res() reply: FastifyReply,
  ): void {
    const endpoint = this.endpoints.details(ctx, checkId(id));
    const { secret } = this.endpoints.secret(ctx, endpoint.id);
    this.renderSecret(reply, ctx, current, endpoint, { value: secret, rotated: false });
  }

  @Post('webhook-endpoints/:id/rotate-secret')
  async rotate(
    @Ctx() ctx: CommandContext,
    @Session() current: CurrentSession,
    @Param('id') id: string,
    @Res() reply: FastifyReply,
  ) {
    const { secret, id: rotated } = await this.endpoints.rotateSecret(ctx, checkId(id));
    const endpoint = this.endpoints.details(ctx, rotated);
    this.renderSecret(reply, ctx, current, endpoint, { value: secret, rotated: true });
  }

  @Post('webhook-deliveries/:id/redeliver')
  async redeliver(
    @Ctx() ctx: CommandContext,
    @Session() current: CurrentSession,
    @Param('id') id: string,
    @Res() reply: FastifyReply,
  ) {
    const delivery = await this.redelivery.request(ctx, current.session.accountId, checkId(id));
    setFlash(reply, current.token, 'The delivery will be sent again.');
    redirect(reply, `${endpointUrl(delivery.endpoint_id)}#deliveries`);
  }

  /** The endpoint's page showing its signing secret (revealed, or just rotated). */
  private renderSecret(
    reply: FastifyReply,
    ctx: CommandContext,
    current: CurrentSession,
    endpoint: EndpointDetails,
    secret: { value: string; rotated: boolean },
  ): void {
    this.renderEndpoint(reply, ctx, current, endpoint, { values: valuesOf(endpoint), errors: {} }, 200, secret);
  }

  private renderEndpoint(
    reply: FastifyReply,
    ctx: CommandContext,
    current: CurrentSession,
    endpoint: EndpointDetails,
    editForm: { values: EndpointFormValues; errors: FieldErrors },
    status = 200,
    secret?: { value: string; rotated: boolean },
  ): void {
    const model = {
      user: userOf(current),
      flash: takeFlash(reply, current.token),
      endpoint,
      secret,
      deliveries: this.deliveries.recent(ctx, endpoint.id, RECENT_DELIVERIES),
      editForm,
      recoverSince: dateTimeLocal(new Date(Date.now() - STATS_WINDOW_MS)),
    };
    sendPage(reply, endpointPage(model), status);
  }
}
