import { PageQueryDto } from '@filing/platform';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength, ValidateBy, ValidateIf, type ValidationOptions } from 'class-validator';
import { ENTITY_STATUSES, ENTITY_TYPES } from '../entity.events';
import { isCalendarDate, isJurisdictionCode, JURISDICTION_CODE, NAME_MAX_LENGTH, nameProblem } from '../entity';

/*
 * The DTOs check shape and field rules so that one 400 lists every bad field; the rules are the
 * domain's own predicates (entity.ts), so HTTP and decide() cannot drift apart. Property names
 * are the JSON names. Unknown properties are refused by the validation pipe. The @Api*
 * decorators describe the same DTOs in the OpenAPI document.
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

const IsEntityName = (options?: ValidationOptions) =>
  ValidateBy(
    { name: 'isEntityName', validator: { validate: (v) => nameProblem(v) === null, defaultMessage: (a) => nameProblem(a?.value) ?? '' } },
    options,
  );
const IsJurisdictionCode = () =>
  ValidateBy({
    name: 'isJurisdictionCode',
    validator: {
      validate: isJurisdictionCode,
      defaultMessage: () => 'formation_jurisdiction must be an ISO 3166-2 subdivision code like US-DE',
    },
  });
const IsCalendarDate = () =>
  ValidateBy({
    name: 'isCalendarDate',
    validator: { validate: isCalendarDate, defaultMessage: (a) => `${a?.property} must be a date as YYYY-MM-DD` },
  });
/** Optional, but not nullable: `null` is checked (and refused) rather than skipped like `undefined`. */
const IsOptionalNonNull = () => ValidateIf((_, value) => value !== undefined);

export class CreateEntityDto {
  @ApiProperty(NAME)
  @IsEntityName()
  name!: string;

  @ApiProperty({ enum: ENTITY_TYPES })
  @IsIn(ENTITY_TYPES)
  entity_type!: string;

  @ApiPropertyOptional(JURISDICTION)
  @IsOptional()
  @IsJurisdictionCode()
  formation_jurisdiction?: string | null;

  @ApiPropertyOptional(DATE)
  @IsOptional()
  @IsCalendarDate()
  formation_date?: string | null;
}

/** PATCH: only the writable fields; absent ones stay as they are, `null` clears an optional one. */
export class UpdateEntityDto {
  @ApiPropertyOptional(NAME)
  @IsOptionalNonNull()
  @IsEntityName()
  name?: string;

  @ApiPropertyOptional({ enum: ENTITY_STATUSES })
  @IsOptionalNonNull()
  @IsIn(ENTITY_STATUSES)
  status?: string;

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
export class EntityDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty(NAME)
  name!: string;

  @ApiProperty({ enum: ENTITY_TYPES })
  entity_type!: string;

  @ApiProperty({ enum: ENTITY_STATUSES })
  status!: string;

  @ApiProperty(JURISDICTION)
  formation_jurisdiction!: string | null;

  @ApiProperty(DATE)
  formation_date!: string | null;

  @ApiProperty({ format: 'date-time' })
  created_at!: string;

  @ApiProperty({ format: 'date-time' })
  updated_at!: string;

  @ApiProperty({ description: 'Stream revision; also sent as ETag: "<version>"', minimum: 0 })
  version!: number;
}

export class ListEntitiesQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: ENTITY_STATUSES })
  @IsOptional()
  @IsIn(ENTITY_STATUSES)
  status?: string;

  @ApiPropertyOptional({ enum: ENTITY_TYPES })
  @IsOptional()
  @IsIn(ENTITY_TYPES)
  entity_type?: string;

  /** Case-insensitive substring of the name. */
  @ApiPropertyOptional({ maxLength: NAME_MAX_LENGTH, description: 'Case-insensitive substring of the name' })
  @IsOptional()
  @IsString()
  @MaxLength(NAME_MAX_LENGTH)
  q?: string;
}
