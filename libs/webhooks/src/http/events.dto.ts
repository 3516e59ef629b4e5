import { IsResourceId, PageQueryDto, SatisfiesRule } from '@filing/platform';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { WEBHOOK_EVENT_TYPES } from '../catalog/event-types';
import { eventTypeFilterProblem } from '../events/event-filters';
import { WebhookDeliveryAttemptDto } from './webhooks.dto';

const EVENT_TYPE_NAMES = WEBHOOK_EVENT_TYPES.map((t) => t.name);
const ID = { type: String, format: 'uuid' };

/** `GET /events`: the page, and the two filters of CONTRACT.md §3 "Events". */
export class ListEventsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    type: [String],
    enum: EVENT_TYPE_NAMES,
    isArray: true,
    description:
      'Only these types: repeat the parameter (`event_type=a&event_type=b`) or separate names with commas (`event_type=a,b`). Without it every type but the operational ones (`webhook_endpoint.disabled`, `webhook_endpoint.failing`, `webhook_delivery.failed`), which are listed only when named',
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
      'Every type but the operational ones (webhook_*): the entity itself (entity.*), or the one the resource belongs to',
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

  @ApiPropertyOptional({
    ...ID,
    description:
      'webhook_endpoint.disabled, webhook_endpoint.failing: the endpoint; webhook_delivery.failed: the endpoint of the delivery',
  })
  endpoint_id?: string;

  @ApiPropertyOptional({
    type: String,
    enum: ['gone', 'failing'],
    description: 'webhook_endpoint.disabled: why (its `disabled_reason`)',
  })
  reason?: string;

  @ApiPropertyOptional({
    type: String,
    description:
      "The resource's status after the event (`available`/`deleted` for documents; `disabled` for webhook_endpoint.disabled); absent from webhook_endpoint.failing and webhook_delivery.failed",
  })
  status?: string;

  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    description: 'webhook_endpoint.failing: the first failed attempt of the streak',
  })
  failing_since?: string;

  @ApiPropertyOptional({ ...ID, description: 'webhook_delivery.failed: the delivery that gave up' })
  delivery_id?: string;

  @ApiPropertyOptional({ ...ID, description: 'webhook_delivery.failed: the event_id of the notification it carried' })
  failed_event_id?: string;

  @ApiPropertyOptional({
    type: String,
    description: 'webhook_delivery.failed: the event_type of the notification it carried',
  })
  failed_event_type?: string;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description:
      'The `version` of the resource the notification is about, right after the event (what GET answered then): keep the highest per resource, ignore lower ones',
  })
  resource_version!: number;

  @ApiProperty({
    format: 'date-time',
    description: "When the domain event happened (the instant of `timestamp`): the Events API's own field",
  })
  occurred_at!: string;
}

/** One delivery of a notification, in `GET /events/{id}`. */
export class EventDeliveryDto {
  @ApiProperty(ID)
  delivery_id!: string;

  @ApiProperty(ID)
  endpoint_id!: string;

  @ApiProperty({ type: String, enum: ['pending', 'delivered', 'failed', 'cancelled'] })
  status!: string;

  @ApiProperty({ type: [WebhookDeliveryAttemptDto], description: 'Every attempt, oldest first' })
  attempts!: WebhookDeliveryAttemptDto[];
}

/** `GET /events/{id}`: the notification as listed, and where it went. */
export class EventTimelineDto extends EventDto {
  @ApiProperty({
    type: [EventDeliveryDto],
    description:
      "Every delivery of it (one per endpoint it went to, and a replay's), oldest first, with their attempts",
  })
  deliveries!: EventDeliveryDto[];
}
