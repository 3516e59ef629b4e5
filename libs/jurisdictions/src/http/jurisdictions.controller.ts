import { EVENT_STORE, type EventStore } from '@filing/event-store';
import {
  AccountId,
  type CommandContext,
  Ctx,
  CursorCodec,
  createValidationPipe,
  type HistoryItem,
  IfMatch,
  NotFoundError,
  type Page,
  PageQueryDto,
  pageRequest,
  ReadYourWrites,
  readHistory,
  ResourceIdPipe,
  streamName,
  withETag,
  ApiHistoryResponse,
  ApiPageResponse,
  ApiResourceResponse,
} from '@filing/platform';
import { Body, Controller, Get, Inject, Param, Patch, Post, Query, Res, UsePipes } from '@nestjs/common';
import { ApiConflictResponse } from '@nestjs/swagger';
import { CommandBus } from '@nestjs/cqrs';
import type { FastifyReply } from 'fastify';
import { AddJurisdictionCommand, type JurisdictionWriteResult } from '../commands/add-jurisdiction';
import { UpdateJurisdictionCommand } from '../commands/update-jurisdiction';
import { JURISDICTION_STREAM_CONTEXT } from '../jurisdiction.events';
import {
  JURISDICTIONS_COLLECTION,
  JurisdictionsQueries,
  type JurisdictionView,
  toJurisdictionView,
} from '../read-model/jurisdictions.queries';
import { AddJurisdictionDto, ListJurisdictionsQueryDto, UpdateJurisdictionDto, JurisdictionDto } from './jurisdictions.dto';

export const JURISDICTIONS_PATH = '/external-api/v1/jurisdictions';
const HISTORY_COLLECTION = 'jurisdictions/history';

/**
 * `/external-api/v1/jurisdictions`: an entity's registrations. Thin: validate (DTOs, pipes), send
 * a command or a query, answer. Every query is scoped by the token's account; another account's
 * registration is a 404 like a missing one.
 */
@Controller(JURISDICTIONS_PATH.slice(1))
@UsePipes(createValidationPipe())
export class JurisdictionsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: JurisdictionsQueries,
    private readonly readYourWrites: ReadYourWrites,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly cursors: CursorCodec,
  ) {}

  @Post()
  @ApiResourceResponse(JurisdictionDto, { created: true })
  @ApiConflictResponse({ description: 'The entity is already registered in this jurisdiction: change that registration with PATCH' })
  async add(
    @Body() dto: AddJurisdictionDto,
    @Ctx() ctx: CommandContext,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<JurisdictionView> {
    const result = await this.commands.execute(new AddJurisdictionCommand(ctx, dto));
    const jurisdiction = await this.readBack(ctx, result);
    reply.header('location', `${JURISDICTIONS_PATH}/${jurisdiction.id}`);
    return withETag(reply, jurisdiction);
  }

  @Get()
  @ApiPageResponse(JurisdictionDto)
  list(@Query() query: ListJurisdictionsQueryDto, @AccountId() accountId: string): Page<JurisdictionView> {
    return this.queries.list(accountId, query, pageRequest(query, JURISDICTIONS_COLLECTION, 'string', this.cursors));
  }

  @Get(':id')
  @ApiResourceResponse(JurisdictionDto)
  get(
    @Param('id', ResourceIdPipe) id: string,
    @AccountId() accountId: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): JurisdictionView {
    const jurisdiction = this.queries.get(accountId, id);
    if (!jurisdiction) throw NotFoundError.of('jurisdiction', id);
    return withETag(reply, jurisdiction);
  }

  @Patch(':id')
  @ApiResourceResponse(JurisdictionDto)
  async update(
    @Param('id', ResourceIdPipe) id: string,
    @Body() dto: UpdateJurisdictionDto,
    @IfMatch() ifMatch: bigint | undefined,
    @Ctx() ctx: CommandContext,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<JurisdictionView> {
    const result = await this.commands.execute(new UpdateJurisdictionCommand(ctx, id, dto, ifMatch));
    return withETag(reply, await this.readBack(ctx, result));
  }

  @Get(':id/history')
  @ApiHistoryResponse()
  history(
    @Param('id', ResourceIdPipe) id: string,
    @Query() query: PageQueryDto,
    @AccountId() accountId: string,
  ): Promise<Page<HistoryItem>> {
    return readHistory({
      store: this.store,
      streamId: streamName(JURISDICTION_STREAM_CONTEXT, id),
      accountId,
      page: pageRequest(query, HISTORY_COLLECTION, 'number', this.cursors),
      collection: HISTORY_COLLECTION,
      notFound: () => NotFoundError.of('jurisdiction', id),
    });
  }

  /**
   * Read-your-writes: wait until the read model has the write, then answer from it, as a GET
   * would. If the projections are late (the wait is bounded), answer from the command's state.
   */
  private async readBack(ctx: CommandContext, result: JurisdictionWriteResult): Promise<JurisdictionView> {
    await this.readYourWrites.await(result.position);
    return this.queries.get(ctx.account_id!, result.jurisdiction.id) ?? toJurisdictionView(result.jurisdiction);
  }
}
