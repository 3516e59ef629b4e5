import {
  ApiResourceFields,
  ResourceDto,
  IsCalendarDate,
  IsOptionalNonNull,
  IsResourceId,
  PageQueryDto,
  SatisfiesRule,
} from '@filing/platform';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { DESCRIPTION_MAX_LENGTH, descriptionProblem, TITLE_MAX_LENGTH, titleProblem } from '../task';
import { TASK_STATUSES } from '../task.events';

/*
 * The DTOs check shape and field rules so that one 400 lists every bad field; the rules are the
 * domain's own predicates (task.ts, platform field rules), so HTTP and decide() cannot drift
 * apart. Property names are the JSON names. Unknown properties are refused by the validation
 * pipe. The @Api* decorators describe the same DTOs in the OpenAPI document.
 */

const ID = { type: String, format: 'uuid' };
const TITLE = { type: String, maxLength: TITLE_MAX_LENGTH, example: 'File the 2026 annual report' };
const DESCRIPTION = { type: String, nullable: true, maxLength: DESCRIPTION_MAX_LENGTH };
const DATE = { type: String, nullable: true, format: 'date', example: '2026-03-01' };

const IsTitle = () => SatisfiesRule('isTaskTitle', titleProblem);
const IsDescription = () => SatisfiesRule('isTaskDescription', descriptionProblem);

export class CreateTaskDto {
  @ApiProperty({ ...ID, description: 'An entity of the same account' }) @IsResourceId() entity_id!: string;
  @ApiProperty(TITLE) @IsTitle() title!: string;
  @ApiPropertyOptional(DESCRIPTION) @IsOptional() @IsDescription() description?: string | null;
  @ApiPropertyOptional(DATE) @IsOptional() @IsCalendarDate() due_date?: string | null;
}

/** PATCH: only the writable fields; absent ones stay as they are, `null` clears an optional one. */
export class UpdateTaskDto {
  @ApiPropertyOptional(TITLE) @IsOptionalNonNull() @IsTitle() title?: string;
  @ApiPropertyOptional({ ...DESCRIPTION, description: 'null clears it' })
  @IsOptional()
  @IsDescription()
  description?: string | null;
  @ApiPropertyOptional({ ...DATE, description: 'null clears it' }) @IsOptional() @IsCalendarDate() due_date?:
    string | null;
  @ApiPropertyOptional({ enum: TASK_STATUSES }) @IsOptionalNonNull() @IsIn(TASK_STATUSES) status?: string;
}

/** The resource (CONTRACT.md §3), for the OpenAPI document; the controller answers `TaskView`s. */
@ApiResourceFields()
export class TaskDto extends ResourceDto {
  @ApiProperty(ID) entity_id!: string;
  @ApiProperty(TITLE) title!: string;
  @ApiProperty(DESCRIPTION) description!: string | null;
  @ApiProperty(DATE) due_date!: string | null;
  @ApiProperty({ enum: TASK_STATUSES, description: 'open when created' }) status!: string;
}

export class ListTasksQueryDto extends PageQueryDto {
  @ApiPropertyOptional(ID) @IsOptional() @IsResourceId() entity_id?: string;
  @ApiPropertyOptional({ enum: TASK_STATUSES }) @IsOptional() @IsIn(TASK_STATUSES) status?: string;
}
