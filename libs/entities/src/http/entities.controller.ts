import { type CommandContext, Ctx, newResourceId, UpdatableFamilyController, ApiResourceResponse } from '@filing/platform';
import { Body, Controller, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { EntityAggregate } from '../entity.aggregate';
import { EntitiesQueries, type EntityView } from '../read-model/entities.queries';
import { CreateEntityDto, EntityDto, ListEntitiesQueryDto, UpdateEntityDto } from './entities.dto';

/** `/external-api/v1/entities`: GET, list, history and PATCH are the platform's family routes; POST is the entities' own. */
@Controller('external-api/v1/entities')
export class EntitiesController extends UpdatableFamilyController({
  path: 'entities', aggregate: EntityAggregate, dto: EntityDto, listQuery: ListEntitiesQueryDto, queries: EntitiesQueries, update: UpdateEntityDto,
}) {
  @Post()
  @ApiResourceResponse(EntityDto, { created: true })
  create(@Body() dto: CreateEntityDto, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) reply: FastifyReply): Promise<EntityView> {
    return this.created(reply, EntityAggregate.command(ctx, { kind: 'create', id: newResourceId(), input: dto }));
  }
}
