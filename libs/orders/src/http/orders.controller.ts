import type { StreamRevision } from '@filing/event-store';
import {
  ApiResourceResponse,
  type CommandContext,
  Ctx,
  createValidationPipe,
  expectedVersion,
  FamilyController,
  IfMatch,
  ReadYourWrites,
  ResourceIdPipe,
  withETag,
  extend,
} from '@filing/platform';
import { Body, Controller, HttpCode, Param, Post, Res, UsePipes } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBody, ApiConflictResponse } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { CompleteOrderCommand } from '../commands/complete-order';
import { OrderAggregate } from '../order.aggregate';
import { type OperatorOrderView, OrdersQueries } from '../read-model/orders.queries';
import { CancelOrderDto, ListOrdersQueryDto, OrderDto, SubmitOrderDto } from './orders.dto';

/** The customer's orders: the family routes (no PATCH: an order changes by its lifecycle), submit and cancel. */
@Controller('external-api/v1/orders')
export class OrdersController extends FamilyController({
  path: 'orders',
  aggregate: OrderAggregate,
  queries: OrdersQueries,
  dto: OrderDto,
  listQuery: ListOrdersQueryDto,
}) {
  @Post()
  @ApiResourceResponse(OrderDto, { created: true })
  submit(
    @Body() dto: SubmitOrderDto,
    @Ctx() ctx: CommandContext,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    return this.created(reply, OrderAggregate.create(ctx, { kind: 'submit', input: dto }));
  }

  /** submitted → cancelled; anything else is a 409 naming the current status. */
  @Post(':id/cancel')
  @ApiResourceResponse(OrderDto)
  @ApiBody({ type: CancelOrderDto, required: false, description: 'Optional: no body cancels without a reason' })
  @ApiConflictResponse({ description: 'The order is not `submitted` (nothing is appended)' })
  @HttpCode(200)
  cancel(
    @Param('id', ResourceIdPipe) id: string,
    @Body() dto: CancelOrderDto,
    @IfMatch() ifMatch: StreamRevision | undefined,
    @Ctx() ctx: CommandContext,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    const command = OrderAggregate.command(ctx, {
      kind: 'cancel',
      id,
      reason: dto.reason,
      expected_version: expectedVersion(ifMatch),
    });
    return this.written(reply, command);
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
    @IfMatch() ifMatch: StreamRevision | undefined,
    @Ctx() ctx: CommandContext,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<OperatorOrderView> {
    const { position, resource } = await this.commands.execute(new CompleteOrderCommand(ctx, id, ifMatch));
    await this.readYourWrites.await(position);
    return withETag(
      reply,
      this.queries.getInAnyAccount(id) ?? extend(this.queries.view(resource), { account_id: resource.account_id }),
    );
  }
}
