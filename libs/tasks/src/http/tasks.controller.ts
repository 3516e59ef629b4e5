import { FamilyController } from '@filing/platform';
import { Controller } from '@nestjs/common';
import { TasksQueries } from '../read-model/tasks.queries';
import { TaskAggregate } from '../task.aggregate';
import { CreateTaskDto, ListTasksQueryDto, TaskDto, UpdateTaskDto } from './tasks.dto';

/** `/external-api/v1/tasks`: to-dos about an entity, completed with PATCH `{"status": "completed"}`; all family routes. */
@Controller('external-api/v1/tasks')
export class TasksController extends FamilyController({
  path: 'tasks',
  aggregate: TaskAggregate,
  queries: TasksQueries,
  dto: TaskDto,
  listQuery: ListTasksQueryDto,
  create: CreateTaskDto,
  update: UpdateTaskDto,
}) {}
