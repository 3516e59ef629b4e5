import { applyDecorators, type Type } from '@nestjs/common';
import { ApiCreatedResponse, ApiExtraModels, ApiOkResponse, ApiProperty, getSchemaPath } from '@nestjs/swagger';

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

  @ApiProperty({ description: 'Who caused it: `client:<client_id>` or `operator:<id>`', example: 'client:0193a5b2-0000-7000-8000-000000000001' })
  actor!: string;

  @ApiProperty({ type: 'object', additionalProperties: true, description: "The resource's state after the event (and `changed` for updates)" })
  data!: Record<string, unknown>;
}

/** `200 {data: [item…], next_cursor}`: one page of a collection, oldest first. */
export function ApiPageResponse(item: Type<unknown>, description = 'One page, oldest first'): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ApiExtraModels(item),
    ApiOkResponse({
      description,
      schema: {
        type: 'object',
        required: ['data', 'next_cursor'],
        properties: {
          data: { type: 'array', items: { $ref: getSchemaPath(item) } },
          next_cursor: { type: 'string', nullable: true, description: 'Pass as `cursor` for the next page; null on the last page' },
        },
      },
    }),
  );
}

/** `GET /{family}/{id}/history`: a page of the resource's own events. */
export const ApiHistoryResponse = () => ApiPageResponse(HistoryItemDto, "The resource's own events, oldest first");

const ETAG_HEADER = { description: 'The version, quoted: send it back as If-Match', schema: { type: 'string', example: '"3"' } };

/**
 * The answer of a single resource: `200` (or `201` with `Location` when `created`), with its
 * ETag.
 */
export function ApiResourceResponse(type: Type<unknown>, options: { created?: boolean; description?: string } = {}): MethodDecorator & ClassDecorator {
  if (!options.created) return ApiOkResponse({ type, description: options.description, headers: { ETag: ETAG_HEADER } });
  return ApiCreatedResponse({
    type,
    description: options.description ?? 'Created',
    headers: { ETag: ETAG_HEADER, Location: { description: 'The URL of the new resource', schema: { type: 'string' } } },
  });
}
