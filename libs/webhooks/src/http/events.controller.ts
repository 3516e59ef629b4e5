import { ApiPageResponse, type CommandContext, createValidationPipe, Ctx } from '@filing/platform';
import { Controller, Get, Query, UsePipes } from '@nestjs/common';
import { EventsQueries } from '../events/events.queries';
import { EventDto, ListEventsQueryDto } from './events.dto';

/** The Events API (CONTRACT.md §3 "Events"): every notification of the account, however its webhooks fared. */
@Controller('external-api/v1')
@UsePipes(createValidationPipe())
export class EventsController {
  constructor(private readonly events: EventsQueries) {}

  @Get('events')
  @ApiPageResponse(
    EventDto,
    "One page of the account's notifications, oldest first in stream order; each is the webhook body plus `occurred_at`",
  )
  list(@Ctx() ctx: CommandContext, @Query() query: ListEventsQueryDto) {
    return this.events.list(ctx, query);
  }
}
