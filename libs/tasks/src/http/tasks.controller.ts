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
import { CommandBus } from '@nestjs/cqrs';
import type { FastifyReply } from 'fastify';
import { CreateTaskCommand, type TaskWriteResult } from '../commands/create-task';
import { UpdateTaskCommand } from '../commands/update-task';
import { TASKS_COLLECTION, TasksQueries, type TaskView, toTaskView } from '../read-model/tasks.queries';
import { TASK_STREAM_CONTEXT } from '../task.events';
import { CreateTaskDto, ListTasksQueryDto, UpdateTaskDto, TaskDto } from './tasks.dto';

export const TASKS_PATH = '/external-api/v1/tasks';
const HISTORY_COLLECTION = 'tasks/history';

/**
 * `/external-api/v1/tasks`: to-dos about an entity. Thin: validate (DTOs, pipes), send a command
 * or a query, answer. Every query is scoped by the token's account; another account's task is a
 * 404 like a missing one.
 */
@Controller(TASKS_PATH.slice(1))
@UsePipes(createValidationPipe())
export class TasksController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: TasksQueries,
    private readonly readYourWrites: ReadYourWrites,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly cursors: CursorCodec,
  ) {}

  @Post()
  @ApiResourceResponse(TaskDto, { created: true })
  async create(
    @Body() dto: CreateTaskDto,
    @Ctx() ctx: CommandContext,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<TaskView> {
    const result = await this.commands.execute(new CreateTaskCommand(ctx, dto));
    const task = await this.readBack(ctx, result);
    reply.header('location', `${TASKS_PATH}/${task.id}`);
    return withETag(reply, task);
  }

  @Get()
  @ApiPageResponse(TaskDto)
  list(@Query() query: ListTasksQueryDto, @AccountId() accountId: string): Page<TaskView> {
    return this.queries.list(accountId, query, pageRequest(query, TASKS_COLLECTION, 'string', this.cursors));
  }

  @Get(':id')
  @ApiResourceResponse(TaskDto)
  get(@Param('id', ResourceIdPipe) id: string, @AccountId() accountId: string, @Res({ passthrough: true }) reply: FastifyReply): TaskView {
    const task = this.queries.get(accountId, id);
    if (!task) throw NotFoundError.of('task', id);
    return withETag(reply, task);
  }

  /** e.g. `{"status": "completed"}`. */
  @Patch(':id')
  @ApiResourceResponse(TaskDto)
  async update(
    @Param('id', ResourceIdPipe) id: string,
    @Body() dto: UpdateTaskDto,
    @IfMatch() ifMatch: bigint | undefined,
    @Ctx() ctx: CommandContext,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<TaskView> {
    const result = await this.commands.execute(new UpdateTaskCommand(ctx, id, dto, ifMatch));
    return withETag(reply, await this.readBack(ctx, result));
  }

  @Get(':id/history')
  @ApiHistoryResponse()
  history(@Param('id', ResourceIdPipe) id: string, @Query() query: PageQueryDto, @AccountId() accountId: string): Promise<Page<HistoryItem>> {
    return readHistory({
      store: this.store,
      streamId: streamName(TASK_STREAM_CONTEXT, id),
      accountId,
      page: pageRequest(query, HISTORY_COLLECTION, 'number', this.cursors),
      collection: HISTORY_COLLECTION,
      notFound: () => NotFoundError.of('task', id),
    });
  }

  /**
   * Read-your-writes: wait until the read model has the write, then answer from it, as a GET
   * would. If the projections are late (the wait is bounded), answer from the command's state.
   */
  private async readBack(ctx: CommandContext, result: TaskWriteResult): Promise<TaskView> {
    await this.readYourWrites.await(result.position);
    return this.queries.get(ctx.account_id!, result.task.id) ?? toTaskView(result.task);
  }
}
