import {
  ApiResourceFields,
  ResourceDto,
  IsJurisdictionCode,
  IsOptionalNonNull,
  IsResourceId,
  JURISDICTION_CODE,
  PageQueryDto,
} from '@filing/platform';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { JURISDICTION_STATUSES, REGISTRATION_TYPES } from '../jurisdiction.events';

/*
 * The DTOs check shape and field rules so that one 400 lists every bad field; the rules are the
 * domain's own predicates (platform field rules, jurisdiction.ts), so HTTP and decide() cannot
 * drift apart. Property names are the JSON names. Unknown properties are refused by the
 * validation pipe. The @Api* decorators describe the same DTOs in the OpenAPI document.
 */

const ID = { type: String, format: 'uuid' };
const CODE = {
  type: String,
  pattern: JURISDICTION_CODE.source,
  example: 'US-DE',
  description: 'ISO 3166-2 subdivision code',
};

export class AddJurisdictionDto {
  @ApiProperty({ ...ID, description: 'An entity of the same account' }) @IsResourceId() entity_id!: string;
  @ApiProperty(CODE) @IsJurisdictionCode() code!: string;
  @ApiProperty({ enum: REGISTRATION_TYPES }) @IsIn(REGISTRATION_TYPES) registration_type!: string;
}

/** PATCH: only the writable fields; absent ones stay as they are. Neither may be null. */
export class UpdateJurisdictionDto {
  @ApiPropertyOptional({ enum: REGISTRATION_TYPES })
  @IsOptionalNonNull()
  @IsIn(REGISTRATION_TYPES)
  registration_type?: string;
  @ApiPropertyOptional({ enum: JURISDICTION_STATUSES })
  @IsOptionalNonNull()
  @IsIn(JURISDICTION_STATUSES)
  status?: string;
}

/** The resource (CONTRACT.md §3), for the OpenAPI document; the controller answers `JurisdictionView`s. */
@ApiResourceFields()
export class JurisdictionDto extends ResourceDto {
  @ApiProperty(ID) entity_id!: string;
  @ApiProperty(CODE) code!: string;
  @ApiProperty({ enum: REGISTRATION_TYPES }) registration_type!: string;
  @ApiProperty({ enum: JURISDICTION_STATUSES, description: 'pending when added' }) status!: string;
}

export class ListJurisdictionsQueryDto extends PageQueryDto {
  @ApiPropertyOptional(ID) @IsOptional() @IsResourceId() entity_id?: string;
  @ApiPropertyOptional({ enum: JURISDICTION_STATUSES }) @IsOptional() @IsIn(JURISDICTION_STATUSES) status?: string;
}
