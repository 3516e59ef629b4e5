import type { StreamRevision } from '@filing/event-store';
import {
  type CommandContext,
  createValidationPipe,
  Ctx,
  ApiPageResponse,
  ApiResourceResponse,
  IfMatch,
  PageQueryDto,
  RedactOnReplay,
  ResourceIdPipe,
  withETag,
} from '@filing/platform';
import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query, Res, UsePipes } from '@nestjs/common';
import { ApiAcceptedResponse, ApiConflictResponse, ApiNoContentResponse, ApiOkResponse } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { publishedEventTypes } from '../notifications/notification-mapper';
import { DeliveriesQueries } from '../read-model/deliveries.queries';
import { RedeliveryService } from '../deliveries/redelivery.service';
import { EndpointsService } from '../endpoints/endpoints.service';
import { SettingsService } from '../settings/settings.service';
import {
  CreateEndpointDto,
  DeliveriesQueryDto,
  SettingsDto,
  UpdateEndpointDto,
  WebhookDeliveryDetailDto,
  WebhookDeliveryDto,
  WebhookEndpointDto,
  WebhookEndpointWithSecretDto,
  WebhookEventTypeListDto,
  WebhookSecretDto,
} from './webhooks.dto';

/** Webhook endpoints, the account switch, the catalog and the delivery log (CONTRACT.md §4). */
@Controller('external-api/v1')
@UsePipes(createValidationPipe())
export class WebhooksController {
  constructor(
    private readonly endpoints: EndpointsService,
    private readonly settings: SettingsService,
    private readonly deliveries: DeliveriesQueries,
    private readonly redelivery: RedeliveryService,
  ) {}

  @Get('webhook-event-types')
  @ApiOkResponse({ type: WebhookEventTypeListDto, description: 'The catalog of notifications' })
  eventTypes() {
    return { data: publishedEventTypes() };
  }

  @Post('webhook-endpoints')
  @ApiResourceResponse(WebhookEndpointWithSecretDto, {
    created: true,
    description:
      'Created, disabled, with its signing secret (an Idempotency-Key replay answers without it: GET …/secret)',
  })
  @ApiConflictResponse({
    description:
      'The account already has the most endpoints allowed (WEBHOOK_MAX_ENDPOINTS_PER_ACCOUNT, default 16; deleted ones do not count): the problem names the limit',
  })
  // The secret is not kept with the key: only sealed in the endpoint's events, shown again by GET …/secret.
  @RedactOnReplay('secret')
  async create(
    @Ctx() ctx: CommandContext,
    @Body() body: CreateEndpointDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const created = await this.endpoints.create(ctx, body);
    // The answer carries the signing secret: no cache may keep it.
    reply
      .status(201)
      .header('location', `/external-api/v1/webhook-endpoints/${created.id}`)
      .header('cache-control', 'no-store');
    return withETag(reply, created);
  }

  @Get('webhook-endpoints')
  @ApiPageResponse(WebhookEndpointDto)
  list(@Ctx() ctx: CommandContext, @Query() query: PageQueryDto) {
    return this.endpoints.list(ctx, query);
  }

  @Get('webhook-endpoints/:id')
  @ApiResourceResponse(WebhookEndpointDto)
  get(
    @Ctx() ctx: CommandContext,
    @Param('id', ResourceIdPipe) id: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    return withETag(reply, this.endpoints.get(ctx, id));
  }

  @Patch('webhook-endpoints/:id')
  @ApiResourceResponse(WebhookEndpointDto)
  async update(
    @Ctx() ctx: CommandContext,
    @Param('id', ResourceIdPipe) id: string,
    @Body() body: UpdateEndpointDto,
    @IfMatch() ifMatch: StreamRevision | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    return withETag(reply, await this.endpoints.update(ctx, id, body, ifMatch));
  }

  @Delete('webhook-endpoints/:id')
  @ApiNoContentResponse({ description: 'Deleted; its pending retries end as cancelled' })
  @HttpCode(204)
  async remove(
    @Ctx() ctx: CommandContext,
    @Param('id', ResourceIdPipe) id: string,
    @IfMatch() ifMatch: StreamRevision | undefined,
  ) {
    await this.endpoints.action(ctx, id, 'delete', ifMatch);
  }

  @Post('webhook-endpoints/:id/enable')
  @ApiResourceResponse(WebhookEndpointDto)
  @HttpCode(200)
  async enable(
    @Ctx() ctx: CommandContext,
    @Param('id', ResourceIdPipe) id: string,
    @IfMatch() ifMatch: StreamRevision | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    return withETag(reply, (await this.endpoints.action(ctx, id, 'enable', ifMatch))!);
  }

  @Post('webhook-endpoints/:id/disable')
  @ApiResourceResponse(WebhookEndpointDto, { description: 'Disabled; its pending retries end as cancelled' })
  @HttpCode(200)
  async disable(
    @Ctx() ctx: CommandContext,
    @Param('id', ResourceIdPipe) id: string,
    @IfMatch() ifMatch: StreamRevision | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    return withETag(reply, (await this.endpoints.action(ctx, id, 'disable', ifMatch))!);
  }

  @Post('webhook-endpoints/:id/rotate-secret')
  @ApiResourceResponse(WebhookEndpointWithSecretDto, {
    description:
      'The new secret; the old one keeps signing beside it for 24 h (an Idempotency-Key replay answers without it: GET …/secret)',
  })
  @RedactOnReplay('secret')
  @HttpCode(200)
  async rotate(
    @Ctx() ctx: CommandContext,
    @Param('id', ResourceIdPipe) id: string,
    @IfMatch() ifMatch: StreamRevision | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    reply.header('cache-control', 'no-store');
    return withETag(reply, await this.endpoints.rotateSecret(ctx, id, ifMatch));
  }

  @Get('webhook-endpoints/:id/secret')
  @ApiOkResponse({ type: WebhookSecretDto })
  secret(
    @Ctx() ctx: CommandContext,
    @Param('id', ResourceIdPipe) id: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    // A secret must not sit in a shared cache.
    reply.header('cache-control', 'no-store');
    return this.endpoints.secret(ctx, id);
  }

  @Get('webhook-endpoints/:id/deliveries')
  @ApiPageResponse(WebhookDeliveryDto, "One page of the endpoint's deliveries, oldest first")
  listDeliveries(
    @Ctx() ctx: CommandContext,
    @Param('id', ResourceIdPipe) id: string,
    @Query() query: DeliveriesQueryDto,
  ) {
    return this.deliveries.list(ctx, id, query);
  }

  @Get('webhook-deliveries/:id')
  @ApiOkResponse({ type: WebhookDeliveryDetailDto })
  delivery(@Ctx() ctx: CommandContext, @Param('id', ResourceIdPipe) id: string) {
    return this.deliveries.get(ctx, id);
  }

  @Post('webhook-deliveries/:id/redeliver')
  @ApiAcceptedResponse({
    type: WebhookDeliveryDetailDto,
    description: 'Pending again: it is sent as soon as the dispatcher picks it up',
  })
  @ApiConflictResponse({
    description:
      'The delivery is neither `failed` nor `cancelled`, or it could not be sent now: its endpoint is disabled or deleted, or Webhook Notifications are off',
  })
  @HttpCode(202)
  async redeliver(@Ctx() ctx: CommandContext, @Param('id', ResourceIdPipe) id: string) {
    return this.redelivery.request(ctx, ctx.account_id ?? '', id);
  }

  @Get('webhook-settings')
  @ApiOkResponse({ type: SettingsDto })
  getSettings(@Ctx() ctx: CommandContext) {
    return this.settings.get(ctx.account_id ?? '');
  }

  @Put('webhook-settings')
  @ApiOkResponse({ type: SettingsDto })
  putSettings(@Ctx() ctx: CommandContext, @Body() body: SettingsDto) {
    return this.settings.set(ctx, ctx.account_id ?? '', body.notifications_enabled);
  }
}
