import { ApiResourceResponse, type CommandContext, Ctx, newResourceId, UpdatableFamilyController } from '@filing/platform';
import { Body, Controller, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { TasksQueries, type TaskView } from '../read-model/tasks.queries';
import { TaskAggregate } from '../task.aggregate';
import { CreateTaskDto, ListTasksQueryDto, TaskDto, UpdateTaskDto } from './tasks.dto';

/** `/external-api/v1/tasks`: to-dos about an entity. The family routes, PATCH (`{"status": "completed"}`) among them, and POST. */
@Controller('external-api/v1/tasks')
export class TasksController extends UpdatableFamilyController({
  path: 'tasks', aggregate: TaskAggregate, dto: TaskDto, listQuery: ListTasksQueryDto, queries: TasksQueries, update: UpdateTaskDto,
}) {
  @Post()
  @ApiResourceResponse(TaskDto, { created: true })
  create(@Body() dto: CreateTaskDto, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) reply: FastifyReply): Promise<TaskView> {
    return this.created(reply, TaskAggregate.command(ctx, { kind: 'create', id: newResourceId(), input: dto }));
  }
}
