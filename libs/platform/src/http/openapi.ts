import { applyDecorators, type Type } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiExtraModels,
  ApiHeader,
  ApiOkResponse,
  ApiProperty,
  ApiPropertyOptional,
  ApiSchema,
  ApiServiceUnavailableResponse,
  getSchemaPath,
} from '@nestjs/swagger';
import type { FieldError } from '../errors/domain-errors';
import { IDEMPOTENCY_KEY_PATTERN, IDEMPOTENCY_KEY_RULE } from './idempotency.guard';
import type { ProblemDetails } from './problem-details.filter';

/*
 * OpenAPI descriptions of the answers every family shares (CONTRACT.md conventions), so each
 * controller declares its success answer from its own resource DTO instead of a copy of the
 * envelope: `@ApiPageResponse(EntityDto)`, `@ApiHistoryResponse()`.
 */

/** One item of `GET /{family}/{id}/history` (`HistoryItem`). */
export class HistoryItemDto {
  @ApiProperty({ description: 'The event name without its context prefix', example: 'EntityCreated' })
  type!: string;

  @ApiProperty({ format: 'date-time' })
  occurred_at!: string;

  @ApiProperty({
    description: 'Who caused it: `client:<client_id>` or `operator:<id>`',
    example: 'client:0193a5b2-0000-7000-8000-000000000001',
  })
  actor!: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: "The resource's state after the event (and `changed` for updates)",
  })
  data!: Record<string, unknown>;
}

/** `200 {data: [item…], next_cursor}`: one page of a collection, oldest first. */
export function ApiPageResponse(
  item: Type<unknown>,
  description = 'One page, oldest first',
): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ApiExtraModels(item),
    ApiOkResponse({
      description,
      schema: {
        type: 'object',
        required: ['data', 'next_cursor'],
        properties: {
          data: { type: 'array', items: { $ref: getSchemaPath(item) } },
          next_cursor: {
            type: 'string',
            nullable: true,
            description: 'Pass as `cursor` for the next page; null on the last page',
          },
        },
      },
    }),
  );
}

/**
 * `GET /{family}/{id}/history`: a page of the resource's own events. Read from the event store
 * itself (not a read model), so this read can also be a 503.
 */
export const ApiHistoryResponse = () =>
  applyDecorators(
    ApiPageResponse(HistoryItemDto, "The resource's own events, oldest first"),
    ApiServiceUnavailableResponse({
      description: 'The event store is unreachable (history is read from it); retry after Retry-After',
    }),
  );

const ETAG_HEADER = {
  description: 'The version, quoted: send it back as If-Match',
  schema: { type: 'string', example: '"3"' },
};

/**
 * The answer of a single resource: `200` (or `201` with `Location` when `created`), with its
 * ETag.
 */
export function ApiResourceResponse(
  type: Type<unknown>,
  options: { created?: boolean; description?: string } = {},
): MethodDecorator & ClassDecorator {
  if (!options.created)
    return ApiOkResponse({ type, description: options.description, headers: { ETag: ETAG_HEADER } });
  return ApiCreatedResponse({
    type,
    description: options.description ?? 'Created',
    headers: {
      ETag: ETAG_HEADER,
      Location: { description: 'The URL of the new resource', schema: { type: 'string' } },
    },
  });
}

/** A resource DTO's first field, its `id`: `@ApiResourceFields() class TaskDto extends ResourceDto { … }`. */
export abstract class ResourceDto {
  @ApiProperty({ type: String, format: 'uuid' })
  id!: string;
}

/**
 * A resource DTO's bookkeeping fields (CONTRACT.md §3): `created_at`, `updated_at`, `version`. A
 * class decorator, so they follow the fields the class declares, in the order the API answers them.
 */
export function ApiResourceFields(): ClassDecorator {
  return (target) => {
    const prototype = target.prototype as object;
    ApiProperty({ type: String, format: 'date-time' })(prototype, 'created_at');
    ApiProperty({ type: String, format: 'date-time' })(prototype, 'updated_at');
    ApiProperty({ type: Number, description: 'Stream revision; also sent as ETag: "<version>"', minimum: 0 })(
      prototype,
      'version',
    );
  };
}

/** One bad field of a 400 (`FieldError`). */
@ApiSchema({ name: 'FieldError' })
export class FieldErrorDto implements FieldError {
  @ApiProperty({
    description: 'The JSON name of the field, nested with dots and brackets; or a parameter or header name',
    example: 'entity_type',
  })
  field!: string;

  @ApiProperty({
    example: 'entity_type must be one of llc, corporation, nonprofit, partnership, sole_proprietorship, other',
  })
  message!: string;
}

/** The RFC 9457 body of every error but the bearer-token ones (problem-details.filter.ts). */
@ApiSchema({ name: 'Problem', description: 'RFC 9457 problem details, sent as application/problem+json' })
export class ProblemDto implements ProblemDetails {
  @ApiProperty({
    type: 'string',
    format: 'uri',
    example: 'about:blank',
    description: 'Always about:blank: `status` names the kind of problem',
  })
  type!: 'about:blank';

  @ApiProperty({ description: "The status's standard phrase", example: 'Bad Request' })
  title!: string;

  @ApiProperty({ type: 'integer', example: 400 })
  status!: number;

  @ApiProperty({ description: 'What went wrong in this case', example: 'entity_type: entity_type must be one of …' })
  detail!: string;

  @ApiPropertyOptional({
    type: [FieldErrorDto],
    description: 'On a 400: every bad field, so all can be fixed in one round trip',
  })
  errors?: FieldErrorDto[];
}

/** An RFC 6750 bearer-token error (api-access.guard.ts): sent as application/json, like the OAuth endpoints' errors. */
@ApiSchema({ name: 'BearerError' })
export class BearerErrorDto {
  @ApiProperty({ enum: ['invalid_request', 'invalid_token', 'insufficient_scope'] })
  error!: string;

  @ApiProperty()
  error_description!: string;
}

/** `If-Match` as `parseIfMatch` reads it; applied by the `@IfMatch()` parameter decorator, so every route that checks it declares it. */
export const ApiIfMatchHeader = () =>
  ApiHeader({
    name: 'If-Match',
    required: false,
    description:
      'The version the change is meant for, as sent in ETag (e.g. "3"), or *. Another version is a 412 and changes nothing.',
    schema: { type: 'string', example: '"3"' },
  });

/** `Idempotency-Key` as the IdempotencyGuard checks it (a parameter object: added to POSTs when the document is built). */
export const IDEMPOTENCY_KEY_HEADER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    `${IDEMPOTENCY_KEY_RULE}. A retry with the same key and the same request within 24 h replays the first answer ` +
    '(with `Idempotent-Replayed: true`); the same key with another request is a 422.',
  schema: {
    type: 'string',
    minLength: 1,
    maxLength: 255,
    pattern: IDEMPOTENCY_KEY_PATTERN.source,
    example: 'order-2026-11-22-0001',
  },
} as const;
