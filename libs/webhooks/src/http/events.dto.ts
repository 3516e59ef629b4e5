import { IsResourceId, PageQueryDto, SatisfiesRule } from '@filing/platform';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { WEBHOOK_EVENT_TYPES } from '../catalog/event-types';
import { eventTypeFilterProblem } from '../events/event-filters';

const EVENT_TYPE_NAMES = WEBHOOK_EVENT_TYPES.map((t) => t.name);
const ID = { type: String, format: 'uuid' };

/** `GET /events`: the page, and the two filters of CONTRACT.md §3 "Events". */
export class ListEventsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    type: [String],
    enum: EVENT_TYPE_NAMES,
    isArray: true,
    description:
      'Only these types: repeat the parameter (`event_type=a&event_type=b`) or separate names with commas (`event_type=a,b`). Without it every type but the operational `webhook_endpoint.disabled`, which is listed only when named',
  })
  @IsOptional()
  @SatisfiesRule('isEventTypeFilter', eventTypeFilterProblem)
  event_type?: string | string[];

  @ApiPropertyOptional({
    ...ID,
    description:
      "Start right after this event: the `event_id` of the last notification you processed. Another account's id, or an unknown one, is a 400",
  })
  @IsOptional()
  @IsResourceId()
  after_event_id?: string;
}

/**
 * One notification as the Events API lists it: exactly the webhook body (CONTRACT.md §4 table:
 * `event_id`, `event_type`, `timestamp` and the type's fields), plus `occurred_at`.
 */
export class EventDto {
  @ApiProperty({ ...ID, description: "The same as the webhook's event_id (and webhook-id header)" })
  event_id!: string;

  @ApiProperty({ enum: EVENT_TYPE_NAMES })
  event_type!: string;

  @ApiProperty({ format: 'date-time', description: 'When the domain event happened (as in the webhook body)' })
  timestamp!: string;

  @ApiPropertyOptional({
    ...ID,
    description:
      'Every type but webhook_endpoint.disabled: the entity itself (entity.*), or the one the resource belongs to',
  })
  entity_id?: string;

  @ApiPropertyOptional({ ...ID, description: 'document.*' })
  document_id?: string;

  @ApiPropertyOptional({ ...ID, description: 'jurisdiction.*' })
  jurisdiction_id?: string;

  @ApiPropertyOptional({ ...ID, description: 'task.created' })
  task_id?: string;

  @ApiPropertyOptional({
    ...ID,
    nullable: true,
    description: 'order.*; document.* (null when the document belongs to no order)',
  })
  order_id?: string | null;

  @ApiPropertyOptional({ ...ID, description: 'webhook_endpoint.disabled: the endpoint the service disabled' })
  endpoint_id?: string;

  @ApiPropertyOptional({
    type: String,
    enum: ['gone', 'failing'],
    description: 'webhook_endpoint.disabled: why (its `disabled_reason`)',
  })
  reason?: string;

  @ApiProperty({
    type: String,
    description:
      "The resource's status after the event (`available`/`deleted` for documents; `disabled` for webhook_endpoint.disabled)",
  })
  status!: string;

  @ApiProperty({
    format: 'date-time',
    description: "When the domain event happened (the instant of `timestamp`): the Events API's own field",
  })
  occurred_at!: string;
}
