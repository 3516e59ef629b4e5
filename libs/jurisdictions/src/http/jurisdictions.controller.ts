import { ApiResourceResponse, type CommandContext, Ctx, FamilyController } from '@filing/platform';
import { Body, Controller, Post, Res } from '@nestjs/common';
import { ApiConflictResponse } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AddJurisdictionCommand } from '../commands/add-jurisdiction';
import { JurisdictionAggregate } from '../jurisdiction.aggregate';
import { JurisdictionsQueries } from '../read-model/jurisdictions.queries';
import {
  AddJurisdictionDto,
  JurisdictionDto,
  ListJurisdictionsQueryDto,
  UpdateJurisdictionDto,
} from './jurisdictions.dto';

/** `/external-api/v1/jurisdictions`: an entity's registrations. The family routes, and adding one (a duplicate is a 409). */
@Controller('external-api/v1/jurisdictions')
export class JurisdictionsController extends FamilyController({
  path: 'jurisdictions',
  aggregate: JurisdictionAggregate,
  queries: JurisdictionsQueries,
  dto: JurisdictionDto,
  listQuery: ListJurisdictionsQueryDto,
  update: UpdateJurisdictionDto,
}) {
  @Post()
  @ApiResourceResponse(JurisdictionDto, { created: true })
  @ApiConflictResponse({
    description: 'The entity is already registered in this jurisdiction: change that registration with PATCH',
  })
  add(
    @Body() dto: AddJurisdictionDto,
    @Ctx() ctx: CommandContext,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    return this.created(reply, new AddJurisdictionCommand(ctx, dto));
  }
}
