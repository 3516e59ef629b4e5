import type { StreamRevision } from '@filing/event-store';
import { type CommandContext, createValidationPipe, Ctx, IfMatch, ResourceIdPipe } from '@filing/platform';
import { Body, Controller, Get, HttpCode, Param, Post, UsePipes } from '@nestjs/common';
import { ApiAcceptedResponse, ApiConflictResponse, ApiOkResponse } from '@nestjs/swagger';
import { parseInstant } from '../endpoint-health/endpoint-health';
import { EndpointHealthQueries } from '../endpoint-health/endpoint-health.queries';
import { RecoveryService } from '../endpoint-health/recovery.service';
import { ReplayService } from '../endpoint-health/replay.service';
import { EndpointsService } from '../endpoints/endpoints.service';
import {
  RecoverDeliveriesDto,
  RecoveredDeliveriesDto,
  ReplayedNotificationsDto,
  ReplayNotificationsDto,
  WebhookEndpointStatsDto,
} from './endpoint-health.dto';

/** An endpoint's health and the recovery of its failed deliveries (CONTRACT.md §4). */
@Controller('external-api/v1/webhook-endpoints')
@UsePipes(createValidationPipe())
export class EndpointHealthController {
  constructor(
    private readonly endpoints: EndpointsService,
    private readonly health: EndpointHealthQueries,
    private readonly recovery: RecoveryService,
    private readonly replays: ReplayService,
  ) {}

  @Post(':id/recover')
  @HttpCode(202)
  @ApiAcceptedResponse({
    type: RecoveredDeliveriesDto,
    description: 'The failed deliveries since `since` are pending again',
  })
  @ApiConflictResponse({
    description:
      'They could not be sent now: the endpoint is disabled, or Webhook Notifications are off (nothing was resent)',
  })
  recover(
    @Ctx() ctx: CommandContext,
    @Param('id', ResourceIdPipe) id: string,
    @Body() body: RecoverDeliveriesDto,
    @IfMatch() ifMatch: StreamRevision | undefined,
  ) {
    return this.recovery.recover(ctx, id, parseInstant(body.since)!, ifMatch);
  }

  @Post(':id/replay')
  @HttpCode(202)
  @ApiAcceptedResponse({
    type: ReplayedNotificationsDto,
    description:
      "The window's notifications that match the endpoint's event types are pending delivery to it (original event_id and webhook-id), behind its live deliveries",
  })
  @ApiConflictResponse({
    description:
      'They could not be sent now: the endpoint is disabled, or Webhook Notifications are off (nothing was scheduled)',
  })
  replay(
    @Ctx() ctx: CommandContext,
    @Param('id', ResourceIdPipe) id: string,
    @Body() body: ReplayNotificationsDto,
    @IfMatch() ifMatch: StreamRevision | undefined,
  ) {
    return this.replays.replay(
      ctx,
      id,
      parseInstant(body.since)!,
      body.until ? parseInstant(body.until) : null,
      ifMatch,
    );
  }

  @Get(':id/stats')
  @ApiOkResponse({ type: WebhookEndpointStatsDto, description: 'The last 24 h of deliveries and attempts' })
  stats(@Ctx() ctx: CommandContext, @Param('id', ResourceIdPipe) id: string): WebhookEndpointStatsDto {
    return this.health.stats(this.endpoints.get(ctx, id).id);
  }
}
