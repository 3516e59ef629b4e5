import {
  type CommandContext,
  createValidationPipe,
  Ctx,
  isUuid,
  ConflictError,
  NotFoundError,
  ValidationError,
  extend,
} from '@filing/platform';
import { Body, Controller, Get, Param, Post, Query, Res, type Type, UseFilters, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { DeliveriesQueries } from '../read-model/deliveries.queries';
import { STATS_WINDOW_MS } from '../endpoint-health/endpoint-health';
import { EndpointHealthQueries } from '../endpoint-health/endpoint-health.queries';
import { RedeliveryService } from '../deliveries/redelivery.service';
import type { EndpointDetails, EndpointView } from '../endpoints/endpoint-views';
import { EndpointsService } from '../endpoints/endpoints.service';
import { CreateEndpointDto, UpdateEndpointDto } from '../http/webhooks.dto';
import { SettingsService } from '../settings/settings.service';
import { setFlash, takeFlash } from './session/flash';
import { type CurrentSession, Session, SettingsSessionGuard } from './session/session.guard';
import { SettingsErrorFilter } from './settings-errors.filter';
import { redirect, sendPage } from './settings-http';
import { EMPTY_ENDPOINT_FORM, type EndpointFormValues, type FieldErrors } from './views/endpoint-form';
import { deleteConfirmPage, endpointPage, RECENT_DELIVERIES } from './views/endpoint.page';
import { dateTimeLocal } from './views/endpoint-health.view';
import { PROFILE_URL } from './views/layout';
import { endpointUrl, profilePage } from './views/profile.page';

type Form = Record<string, unknown>;

const ENDPOINTS_PER_PAGE = '50';

/**
 * Profile Settings → Profile tab → Webhook Settings. Every action maps a form onto the same
 * services the webhook API's controller uses (EndpointsService, SettingsService,
 * DeliveriesQueries, RedeliveryService) with the signed-in user's command context, so the
 * account scoping, validation and events are the API's: another account's id is a 404 here too.
 */
@Controller('settings/profile')
@UseFilters(SettingsErrorFilter)
@UseGuards(SettingsSessionGuard)
export class WebhookSettingsController {
  private readonly pipe = createValidationPipe();

  constructor(
    private readonly endpoints: EndpointsService,
    private readonly settings: SettingsService,
    private readonly deliveries: DeliveriesQueries,
    private readonly redelivery: RedeliveryService,
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
      created = await this.endpoints.create(ctx, await this.input(values, CreateEndpointDto));
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
      await this.endpoints.update(ctx, endpoint.id, await this.input(values, UpdateEndpointDto));
    } catch (err) {
      return this.renderEndpoint(reply, ctx, current, endpoint, { values, errors: fieldErrors(err) }, 400);
    }
    setFlash(reply, current.token, 'Your changes to the endpoint were saved.');
    redirect(reply, endpointUrl(endpoint.id));
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
    this.renderEndpoint(reply, ctx, current, endpoint, { values: valuesOf(endpoint), errors: {} }, 200, {
      value: secret,
      rotated: false,
    });
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
    this.renderEndpoint(reply, ctx, current, endpoint, { values: valuesOf(endpoint), errors: {} }, 200, {
      value: secret,
      rotated: true,
    });
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

  /** The form as the API's body, validated by the API's DTO (a ValidationError names the field). */
  private async input<T>(values: EndpointFormValues, metatype: Type<T>): Promise<T> {
    requireUrl(values);
    return (await this.pipe.transform(toInput(values), { type: 'body', metatype })) as T;
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

function userOf(current: CurrentSession): { email: string; csrfToken: string } {
  return { email: current.session.email, csrfToken: current.session.csrfToken };
}

/** A malformed id names no endpoint of this account: the same 404 as a foreign one. */
export function checkId(id: string): string {
  if (!isUuid(id)) throw new NotFoundError();
  return id.toLowerCase();
}

function text(value: unknown): string {
  return typeof value === 'string' ? value.trim() : '';
}

/** The form as typed (to show it again on an error). Checkboxes arrive as one value or several. */
function formValues(body: Form): EndpointFormValues {
  const types = body.event_types;
  const list = Array.isArray(types) ? types : types === undefined ? [] : [types];
  return {
    url: text(body.url),
    description: text(body.description),
    event_types: list.filter((t): t is string => typeof t === 'string'),
    rate_limit_per_second: text(body.rate_limit_per_second),
  };
}

/**
 * The API's body for the same change: an empty description is none; no box checked is every
 * event; an empty rate limit is none (a number as typed; anything else goes to the validator as is).
 */
function toInput(values: EndpointFormValues): {
  url: string;
  description: string | null;
  event_types: string[];
  rate_limit_per_second: number | string | null;
} {
  const limit = values.rate_limit_per_second;
  return {
    url: values.url,
    description: values.description || null,
    event_types: [...values.event_types],
    rate_limit_per_second: limit === '' ? null : /^\d{1,7}$/.test(limit) ? Number(limit) : limit,
  };
}

function requireUrl(values: EndpointFormValues): void {
  if (!values.url) throw ValidationError.field('url', 'Enter the endpoint URL (https://…)');
}

function valuesOf(endpoint: EndpointView): EndpointFormValues {
  return {
    url: endpoint.url,
    description: endpoint.description ?? '',
    event_types: endpoint.event_types,
    rate_limit_per_second: endpoint.rate_limit_per_second === null ? '' : String(endpoint.rate_limit_per_second),
  };
}

/** `event_types[2]` → `event_types`: one message per form field. Anything else is not the form's fault: thrown on. */
function fieldErrors(err: unknown): FieldErrors {
  if (!(err instanceof ValidationError)) throw err;
  const errors: Record<string, string> = {};
  for (const e of err.errors) {
    const field = e.field.split(/[.[]/, 1)[0] || 'url';
    errors[field] = errors[field] ? `${errors[field]} ${e.message}` : e.message;
  }
  return errors;
}
