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
import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Res, UsePipes } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBody, ApiConflictResponse } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { CancelOrderCommand } from '../commands/cancel-order';
import { CompleteOrderCommand } from '../commands/complete-order';
import { type OrderWriteResult, SubmitOrderCommand } from '../commands/submit-order';
import { ORDER_STREAM_CONTEXT } from '../order.events';
import {
  type OperatorOrderView,
  ORDERS_COLLECTION,
  OrdersQueries,
  type OrderView,
  toOperatorOrderView,
  toOrderView,
} from '../read-model/orders.queries';
import { CancelOrderDto, ListOrdersQueryDto, SubmitOrderDto, OrderDto } from './orders.dto';

export const ORDERS_PATH = '/external-api/v1/orders';
const HISTORY_COLLECTION = 'orders/history';

/**
 * The customer's orders. Thin: validate (DTOs, pipes), send a command or a query, answer. Every
 * query is scoped by the token's account; another account's order is a 404 like a missing one.
 */
@Controller(ORDERS_PATH.slice(1))
@UsePipes(createValidationPipe())
export class OrdersController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: OrdersQueries,
    private readonly readYourWrites: ReadYourWrites,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly cursors: CursorCodec,
  ) {}

  @Post()
  @ApiResourceResponse(OrderDto, { created: true })
  async submit(
    @Body() dto: SubmitOrderDto,
    @Ctx() ctx: CommandContext,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<OrderView> {
    const result = await this.commands.execute(new SubmitOrderCommand(ctx, dto));
    const order = await this.readBack(ctx, result);
    reply.header('location', `${ORDERS_PATH}/${order.id}`);
    return withETag(reply, order);
  }

  @Get()
  @ApiPageResponse(OrderDto)
  list(@Query() query: ListOrdersQueryDto, @AccountId() accountId: string): Page<OrderView> {
    return this.queries.list(accountId, query, pageRequest(query, ORDERS_COLLECTION, 'string', this.cursors));
  }

  @Get(':id')
  @ApiResourceResponse(OrderDto)
  get(@Param('id', ResourceIdPipe) id: string, @AccountId() accountId: string, @Res({ passthrough: true }) reply: FastifyReply): OrderView {
    const order = this.queries.get(accountId, id);
    if (!order) throw NotFoundError.of('order', id);
    return withETag(reply, order);
  }

  /** submitted → cancelled; anything else is a 409 naming the current status. */
  @Post(':id/cancel')
  @ApiResourceResponse(OrderDto)
  @ApiBody({ type: CancelOrderDto, required: false, description: 'Optional: no body cancels without a reason' })
  @ApiConflictResponse({ description: 'The order is not `submitted` (nothing is appended)' })
  @HttpCode(200)
  async cancel(
    @Param('id', ResourceIdPipe) id: string,
    @Body() dto: CancelOrderDto,
    @IfMatch() ifMatch: bigint | undefined,
    @Ctx() ctx: CommandContext,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<OrderView> {
    const result = await this.commands.execute(new CancelOrderCommand(ctx, id, dto.reason, ifMatch));
    return withETag(reply, await this.readBack(ctx, result));
  }

  @Get(':id/history')
  @ApiHistoryResponse()
  history(@Param('id', ResourceIdPipe) id: string, @Query() query: PageQueryDto, @AccountId() accountId: string): Promise<Page<HistoryItem>> {
    return readHistory({
      store: this.store,
      streamId: streamName(ORDER_STREAM_CONTEXT, id),
      accountId,
      page: pageRequest(query, HISTORY_COLLECTION, 'number', this.cursors),
      collection: HISTORY_COLLECTION,
      notFound: () => NotFoundError.of('order', id),
    });
  }

  /**
   * Read-your-writes: wait until the read model has the write, then answer from it, as a GET
   * would. If the projections are late (the wait is bounded), answer from the command's state.
   */
  private async readBack(ctx: CommandContext, result: OrderWriteResult): Promise<OrderView> {
    await this.readYourWrites.await(result.position);
    return this.queries.get(ctx.account_id!, result.order.id) ?? toOrderView(result.order);
  }
}

/**
 * The operator's side of the lifecycle (CONTRACT.md §3, operator API): the global ApiAccessGuard
 * lets only `operator` tokens in. The answer names the order's account.
 */
@Controller('internal-api/v1/orders')
@UsePipes(createValidationPipe())
export class OperatorOrdersController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: OrdersQueries,
    private readonly readYourWrites: ReadYourWrites,
  ) {}

  /** submitted → completed; anything else is a 409 naming the current status. */
  @Post(':id/complete')
  @HttpCode(200)
  async complete(
    @Param('id', ResourceIdPipe) id: string,
    @IfMatch() ifMatch: bigint | undefined,
    @Ctx() ctx: CommandContext,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<OperatorOrderView> {
    const result = await this.commands.execute(new CompleteOrderCommand(ctx, id, ifMatch));
    await this.readYourWrites.await(result.position);
    return withETag(reply, this.queries.getInAnyAccount(id) ?? toOperatorOrderView(result.order));
  }
}
