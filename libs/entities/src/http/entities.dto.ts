import {
  ApiResourceFields,
  ResourceDto,
  IsCalendarDate,
  IsJurisdictionCode,
  IsOptionalNonNull,
  JURISDICTION_CODE,
  PageQueryDto,
  SatisfiesRule,
} from '@filing/platform';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { ENTITY_STATUSES, ENTITY_TYPES } from '../entity.events';
import { NAME_MAX_LENGTH, nameProblem } from '../entity';

/*
 * The DTOs check shape and field rules so that one 400 lists every bad field; the rules are the
 * domain's own predicates (entity.ts, platform field rules), so HTTP and decide() cannot drift
 * apart. Property names are the JSON names. Unknown properties are refused by the validation
 * pipe. The @Api* decorators describe the same DTOs in the OpenAPI document.
 */

const NAME = { type: String, maxLength: NAME_MAX_LENGTH, example: 'Acme Holdings LLC' };
const JURISDICTION = {
  type: String,
  nullable: true,
  pattern: JURISDICTION_CODE.source,
  example: 'US-DE',
  description: 'ISO 3166-2 subdivision code',
};
const DATE = { type: String, nullable: true, format: 'date', example: '2020-01-31' };
const SEARCH = { maxLength: NAME_MAX_LENGTH, description: 'Case-insensitive substring of the name' };

const IsEntityName = () => SatisfiesRule('isEntityName', nameProblem);

export class CreateEntityDto {
  @ApiProperty(NAME) @IsEntityName() name!: string;
  @ApiProperty({ enum: ENTITY_TYPES }) @IsIn(ENTITY_TYPES) entity_type!: string;
  @ApiPropertyOptional(JURISDICTION) @IsOptional() @IsJurisdictionCode() formation_jurisdiction?: string | null;
  @ApiPropertyOptional(DATE) @IsOptional() @IsCalendarDate() formation_date?: string | null;
}

/** PATCH: only the writable fields; absent ones stay as they are, `null` clears an optional one. */
export class UpdateEntityDto {
  @ApiPropertyOptional(NAME) @IsOptionalNonNull() @IsEntityName() name?: string;
  @ApiPropertyOptional({ enum: ENTITY_STATUSES }) @IsOptionalNonNull() @IsIn(ENTITY_STATUSES) status?: string;
  @ApiPropertyOptional({ ...JURISDICTION, description: 'ISO 3166-2 subdivision code; null clears it' })
  @IsOptional()
  @IsJurisdictionCode()
  formation_jurisdiction?: string | null;
  @ApiPropertyOptional({ ...DATE, description: 'null clears it' })
  @IsOptional()
  @IsCalendarDate()
  formation_date?: string | null;
}

/** The resource (CONTRACT.md §3), for the OpenAPI document; the controller answers `EntityView`s. */
@ApiResourceFields()
export class EntityDto extends ResourceDto {
  @ApiProperty(NAME) name!: string;
  @ApiProperty({ enum: ENTITY_TYPES }) entity_type!: string;
  @ApiProperty({ enum: ENTITY_STATUSES }) status!: string;
  @ApiProperty(JURISDICTION) formation_jurisdiction!: string | null;
  @ApiProperty(DATE) formation_date!: string | null;
}

export class ListEntitiesQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: ENTITY_STATUSES }) @IsOptional() @IsIn(ENTITY_STATUSES) status?: string;
  @ApiPropertyOptional({ enum: ENTITY_TYPES }) @IsOptional() @IsIn(ENTITY_TYPES) entity_type?: string;
  /** Case-insensitive substring of the name. */
  @ApiPropertyOptional(SEARCH) @IsOptional() @IsString() @MaxLength(NAME_MAX_LENGTH) q?: string;
}
