import {
  ApiResourceFields,
  ResourceDto,
  IsJurisdictionCode,
  IsOptionalNonNull,
  IsResourceId,
  JURISDICTION_CODE,
  PageQueryDto,
  SatisfiesRule,
} from '@filing/platform';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { DETAILS_MAX_BYTES, detailsProblem, REASON_MAX_LENGTH, reasonProblem } from '../order';
import { ORDER_STATUSES, ORDER_TYPES, type OrderDetails } from '../order.events';

/*
 * The DTOs check shape and field rules so that one 400 lists every bad field; the rules are the
 * domain's own predicates (order.ts), so HTTP and decide() cannot drift apart. Property names
 * are the JSON names. Unknown properties are refused by the validation pipe. The @Api*
 * decorators describe the same DTOs in the OpenAPI document.
 */

const ID = { type: String, format: 'uuid' };
const JURISDICTION = {
  type: String,
  nullable: true,
  pattern: JURISDICTION_CODE.source,
  example: 'US-DE',
  description: 'ISO 3166-2 subdivision code',
};
const DETAILS = {
  type: 'object',
  additionalProperties: true,
  description: `Free-form facts of the order: a JSON object of at most ${DETAILS_MAX_BYTES} bytes`,
  example: { state_filing_number: '7654321' },
} as const;
const REASON = { type: String, nullable: true, maxLength: REASON_MAX_LENGTH, example: 'Filed elsewhere' };

const IsOrderDetails = () => SatisfiesRule('isOrderDetails', detailsProblem);
const IsReason = () => SatisfiesRule('isReason', reasonProblem);

export class SubmitOrderDto {
  @ApiProperty({ ...ID, description: 'An entity of the same account' }) @IsResourceId() entity_id!: string;
  @ApiProperty({ enum: ORDER_TYPES }) @IsIn(ORDER_TYPES) order_type!: string;
  @ApiPropertyOptional(JURISDICTION) @IsOptional() @IsJurisdictionCode() jurisdiction_code?: string | null;
  // Declared non-nullable: `null` is refused (a 400 naming it), not taken for "no details".
  @ApiPropertyOptional(DETAILS) @IsOptionalNonNull() @IsOrderDetails() details?: OrderDetails;
}

/** `POST /orders/{id}/cancel`: the body is optional. */
export class CancelOrderDto {
  @ApiPropertyOptional(REASON) @IsOptional() @IsReason() reason?: string | null;
}

/** The resource (CONTRACT.md §3), for the OpenAPI document; the controllers answer `OrderView`s. */
@ApiResourceFields()
export class OrderDto extends ResourceDto {
  @ApiProperty(ID) entity_id!: string;
  @ApiProperty({ enum: ORDER_TYPES }) order_type!: string;
  @ApiProperty(JURISDICTION) jurisdiction_code!: string | null;
  @ApiProperty(DETAILS) details!: OrderDetails;
  @ApiProperty({ enum: ORDER_STATUSES, description: 'submitted → cancelled (customer) or completed (operator)' })
  status!: string;
  @ApiProperty({ ...REASON, description: 'The reason given when the order was cancelled' })
  cancellation_reason!: string | null;
}

export class ListOrdersQueryDto extends PageQueryDto {
  @ApiPropertyOptional(ID) @IsOptional() @IsResourceId() entity_id?: string;
  @ApiPropertyOptional({ enum: ORDER_STATUSES }) @IsOptional() @IsIn(ORDER_STATUSES) status?: string;
}
