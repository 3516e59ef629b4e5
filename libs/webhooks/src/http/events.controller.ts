import { ApiPageResponse, type CommandContext, createValidationPipe, Ctx, ResourceIdPipe } from '@filing/platform';
import { Controller, Get, Param, Query, UsePipes } from '@nestjs/common';
import { ApiOkResponse } from '@nestjs/swagger';
import { EventsQueries } from '../events/events.queries';
import { EventDto, EventTimelineDto, ListEventsQueryDto } from './events.dto';

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

  @Get('events/:id')
  @ApiOkResponse({
    type: EventTimelineDto,
    description:
      "The notification (as GET /events lists it) and where it went: each endpoint's delivery with every attempt. Another account's id is a 404",
  })
  get(@Ctx() ctx: CommandContext, @Param('id', ResourceIdPipe) id: string) {
    return this.events.get(ctx, id);
  }
}
