import { type CommandContext, Ctx, isUuid, ValidationError } from '@filing/platform';
import { Body, Controller, Get, Param, Post, Query, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { parseInstant } from '../endpoint-health/endpoint-health';
import { RecoveryService } from '../endpoint-health/recovery.service';
import { ReplayService } from '../endpoint-health/replay.service';
import { EventsQueries } from '../events/events.queries';
import { EndpointsService } from '../endpoints/endpoints.service';
import { type CurrentSession, Session, SettingsSessionGuard } from './session/session.guard';
import { setFlash } from './session/flash';
import { SettingsErrorFilter } from './settings-errors.filter';
import { redirect, sendPage } from './settings-http';
import { eventTimelinePage } from './views/event-timeline.page';
import { endpointUrl } from './views/profile.page';
import { checkId } from './settings-http';

/** An endpoint page's "Recover failed deliveries" and "Replay notifications" forms: the API's, for the signed-in user's account. */
@Controller('settings/profile')
@UseFilters(SettingsErrorFilter)
@UseGuards(SettingsSessionGuard)
export class EndpointRecoveryController {
  constructor(
    private readonly endpoints: EndpointsService,
    private readonly recovery: RecoveryService,
    private readonly replays: ReplayService,
  ) {}

  @Post('webhook-endpoints/:id/recover')
  async recover(
    @Ctx() ctx: CommandContext,
    @Session() current: CurrentSession,
    @Param('id') id: string,
    @Body() body: Record<string, unknown>,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const endpoint = this.endpoints.get(ctx, checkId(id));
    const since = formInstant(body.since);
    if (!since)
      throw ValidationError.field('since', 'Enter the date and time (UTC) to recover failed deliveries from.');
    const { deliveries } = await this.recovery.recover(ctx, endpoint.id, since);
    backToDeliveries(
      reply,
      current,
      endpoint.id,
      deliveries === 0
        ? 'No failed deliveries to recover since then.'
        : `${deliveries} failed ${deliveries === 1 ? 'delivery' : 'deliveries'} will be sent again.`,
    );
  }

  @Post('webhook-endpoints/:id/replay')
  async replay(
    @Ctx() ctx: CommandContext,
    @Session() current: CurrentSession,
    @Param('id') id: string,
    @Body() body: Record<string, unknown>,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const endpoint = this.endpoints.get(ctx, checkId(id));
    const since = formInstant(body.since);
    if (!since) throw ValidationError.field('since', 'Enter the date and time (UTC) to replay notifications from.');
    const untilGiven = typeof body.until === 'string' && body.until.trim() !== '';
    const until = untilGiven ? formInstant(body.until) : null;
    if (untilGiven && !until) {
      throw ValidationError.field(
        'until',
        'Enter the date and time (UTC) to replay notifications until, or leave it empty.',
      );
    }
    const { deliveries } = await this.replays.replay(ctx, endpoint.id, since, until);
    backToDeliveries(
      reply,
      current,
      endpoint.id,
      deliveries === 0
        ? 'No notifications of its event types in that window.'
        : `${deliveries} ${deliveries === 1 ? 'notification' : 'notifications'} will be sent to this endpoint, after its live deliveries.`,
    );
  }
}

/**
 * An event's timeline (GET /events/{id} as a page), reached from an endpoint's recent deliveries:
 * only the signed-in user's account's events (another's is the same 404 as an unknown one).
 */
@Controller('settings/profile')
@UseFilters(SettingsErrorFilter)
@UseGuards(SettingsSessionGuard)
export class EventTimelineController {
  constructor(private readonly events: EventsQueries) {}

  @Get('events/:id')
  async timeline(
    @Ctx() ctx: CommandContext,
    @Session() current: CurrentSession,
    @Param('id') id: string,
    @Query('endpoint') from: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const event = await this.events.get(ctx, checkId(id));
    const user = { email: current.session.email, csrfToken: current.session.csrfToken };
    const back = typeof from === 'string' && isUuid(from) ? from : null;
    sendPage(reply, eventTimelinePage({ user, event, deliveries: event.deliveries, from: back }));
  }
}

/** A `datetime-local` value is the UTC time the form says it is; a value with its own offset is taken as is. */
function formInstant(value: unknown): Date | null {
  if (typeof value !== 'string') return null;
  const text = value.trim();
  const zoned = /(Z|[+-]\d{2}:\d{2})$/.test(text) ? text : `${/T\d{2}:\d{2}$/.test(text) ? `${text}:00` : text}Z`;
  return parseInstant(zoned);
}

/** After scheduling deliveries: say how many, and show the endpoint's deliveries. */
function backToDeliveries(reply: FastifyReply, current: CurrentSession, endpointId: string, message: string): void {
  setFlash(reply, current.token, message);
  redirect(reply, `${endpointUrl(endpointId)}#deliveries`);
}
