import { EVENT_STORE, type EventStore } from '@filing/event-store';
import {
  AccountId,
  type CommandContext,
  Ctx,
  CursorCodec,
  createValidationPipe,
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
  type HistoryItem,
  ApiHistoryResponse,
  ApiPageResponse,
  ApiResourceResponse,
} from '@filing/platform';
import { Body, Controller, Get, Inject, Param, Patch, Post, Query, Res, UsePipes } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type { FastifyReply } from 'fastify';
import { CreateEntityCommand, type EntityWriteResult } from '../commands/create-entity';
import { UpdateEntityCommand } from '../commands/update-entity';
import { ENTITY_STREAM_CONTEXT } from '../entity.events';
import { ENTITIES_COLLECTION, EntitiesQueries, type EntityView, toEntityView } from '../read-model/entities.queries';
import { CreateEntityDto, ListEntitiesQueryDto, UpdateEntityDto, EntityDto } from './entities.dto';

export const ENTITIES_PATH = '/external-api/v1/entities';
const HISTORY_COLLECTION = 'entities/history';

/**
 * Thin: validate (DTOs, pipes), send a command or a query, answer. Every query is scoped by the
 * token's account; another account's entity is a 404 like a missing one.
 */
@Controller(ENTITIES_PATH.slice(1))
@UsePipes(createValidationPipe())
export class EntitiesController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: EntitiesQueries,
    private readonly readYourWrites: ReadYourWrites,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly cursors: CursorCodec,
  ) {}

  @Post()
  @ApiResourceResponse(EntityDto, { created: true })
  async create(
    @Body() dto: CreateEntityDto,
    @Ctx() ctx: CommandContext,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<EntityView> {
    const result = await this.commands.execute(new CreateEntityCommand(ctx, dto));
    const entity = await this.readBack(ctx, result);
    reply.header('location', `${ENTITIES_PATH}/${entity.id}`);
    return withETag(reply, entity);
  }

  @Get()
  @ApiPageResponse(EntityDto)
  list(@Query() query: ListEntitiesQueryDto, @AccountId() accountId: string): Page<EntityView> {
    return this.queries.list(accountId, query, pageRequest(query, ENTITIES_COLLECTION, 'string', this.cursors));
  }

  @Get(':id')
  @ApiResourceResponse(EntityDto)
  get(
    @Param('id', ResourceIdPipe) id: string,
    @AccountId() accountId: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): EntityView {
    const entity = this.queries.get(accountId, id);
    if (!entity) throw NotFoundError.of('entity', id);
    return withETag(reply, entity);
  }

  @Patch(':id')
  @ApiResourceResponse(EntityDto)
  async update(
    @Param('id', ResourceIdPipe) id: string,
    @Body() dto: UpdateEntityDto,
    @IfMatch() ifMatch: bigint | undefined,
    @Ctx() ctx: CommandContext,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<EntityView> {
    const result = await this.commands.execute(new UpdateEntityCommand(ctx, id, dto, ifMatch));
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
      streamId: streamName(ENTITY_STREAM_CONTEXT, id),
      accountId,
      page: pageRequest(query, HISTORY_COLLECTION, 'number', this.cursors),
      collection: HISTORY_COLLECTION,
      notFound: () => NotFoundError.of('entity', id),
    });
  }

  /**
   * Read-your-writes: wait until the read model has the write, then answer from it, as a GET
   * would. If the projections are late (the wait is bounded), answer from the command's state.
   */
  private async readBack(ctx: CommandContext, result: EntityWriteResult): Promise<EntityView> {
    await this.readYourWrites.await(result.position);
    return this.queries.get(ctx.account_id!, result.entity.id) ?? toEntityView(result.entity);
  }
}
