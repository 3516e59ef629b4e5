import { PageQueryDto } from '@filing/platform';
import { IsIn, IsOptional, IsString, MaxLength, ValidateBy, ValidateIf, type ValidationOptions } from 'class-validator';
import { ENTITY_STATUSES, ENTITY_TYPES } from '../entity.events';
import { isCalendarDate, isJurisdictionCode, NAME_MAX_LENGTH, nameProblem } from '../entity';

/*
 * The DTOs check shape and field rules so that one 400 lists every bad field; the rules are the
 * domain's own predicates (entity.ts), so HTTP and decide() cannot drift apart. Property names
 * are the JSON names. Unknown properties are refused by the validation pipe.
 */

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
  @IsEntityName()
  name!: string;

  @IsIn(ENTITY_TYPES)
  entity_type!: string;

  @IsOptional()
  @IsJurisdictionCode()
  formation_jurisdiction?: string | null;

  @IsOptional()
  @IsCalendarDate()
  formation_date?: string | null;
}

/** PATCH: only the writable fields; absent ones stay as they are, `null` clears an optional one. */
export class UpdateEntityDto {
  @IsOptionalNonNull()
  @IsEntityName()
  name?: string;

  @IsOptionalNonNull()
  @IsIn(ENTITY_STATUSES)
  status?: string;

  @IsOptional()
  @IsJurisdictionCode()
  formation_jurisdiction?: string | null;

  @IsOptional()
  @IsCalendarDate()
  formation_date?: string | null;
}

export class ListEntitiesQueryDto extends PageQueryDto {
  @IsOptional()
  @IsIn(ENTITY_STATUSES)
  status?: string;

  @IsOptional()
  @IsIn(ENTITY_TYPES)
  entity_type?: string;

  /** Case-insensitive substring of the name. */
  @IsOptional()
  @IsString()
  @MaxLength(NAME_MAX_LENGTH)
  q?: string;
}
