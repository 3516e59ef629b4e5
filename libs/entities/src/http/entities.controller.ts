import { FamilyController } from '@filing/platform';
import { Controller } from '@nestjs/common';
import { EntityAggregate } from '../entity.aggregate';
import { EntitiesQueries } from '../read-model/entities.queries';
import { CreateEntityDto, EntityDto, ListEntitiesQueryDto, UpdateEntityDto } from './entities.dto';

/** `/external-api/v1/entities`: the family routes, every one of them the platform's (create and update included). */
@Controller('external-api/v1/entities')
export class EntitiesController extends FamilyController({
  path: 'entities',
  aggregate: EntityAggregate,
  queries: EntitiesQueries,
  dto: EntityDto,
  listQuery: ListEntitiesQueryDto,
  create: CreateEntityDto,
  update: UpdateEntityDto,
}) {}
