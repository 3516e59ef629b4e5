import { IsOptionalNonNull, SatisfiesRule } from '@filing/platform';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined } from 'class-validator';
import { MAX_REPLAY } from '../endpoint-health/replay.service';
import { sinceProblem, untilProblem } from '../endpoint-health/endpoint-health';

const NULLABLE_TIME = { type: String, format: 'date-time', nullable: true };
const NULLABLE_MS = { type: 'integer', minimum: 0, nullable: true } as const;
const COUNT = { type: 'integer', minimum: 0 } as const;

/** `POST /webhook-endpoints/{id}/recover`. */
export class RecoverDeliveriesDto {
  @ApiProperty({
    type: String,
    format: 'date-time',
    example: '2026-11-22T10:00:00.000Z',
    description:
      'Every `failed` delivery whose event happened at or after this instant (ISO 8601 with its UTC offset) is sent again',
  })
  @IsDefined()
  @SatisfiesRule('isInstant', sinceProblem)
  since!: string;
}

/** `POST /webhook-endpoints/{id}/replay`. */
export class ReplayNotificationsDto {
  @ApiProperty({
    type: String,
    format: 'date-time',
    example: '2026-11-22T10:00:00.000Z',
    description:
      "Every notification of the account that happened at or after this instant (ISO 8601 with its UTC offset) and matches the endpoint's event types is sent to it again, with its original event_id",
  })
  @IsDefined()
  @SatisfiesRule('isInstant', sinceProblem)
  since!: string;

  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    example: '2026-11-23T10:00:00.000Z',
    description: 'Only those that happened before this instant (default: up to now)',
  })
  // Absent means "up to now"; null is not a time (a 400 naming it).
  @IsOptionalNonNull()
  @SatisfiesRule('isInstant', untilProblem)
  until?: string;
}

export class ReplayedNotificationsDto {
  @ApiProperty({
    ...COUNT,
    description: `How many notifications are now pending delivery to the endpoint (at most ${MAX_REPLAY} per call), after its live deliveries`,
  })
  deliveries!: number;
}

export class RecoveredDeliveriesDto {
  @ApiProperty({
    ...COUNT,
    description: 'How many failed deliveries are pending again (new attempts, the same webhook-id)',
  })
  deliveries!: number;
}

/** `GET /webhook-endpoints/{id}/stats` (`EndpointStats`). */
export class WebhookEndpointStatsDto {
  @ApiProperty({ ...COUNT, description: 'Deliveries that succeeded in the last 24 h' })
  delivered!: number;

  @ApiProperty({ ...COUNT, description: 'Deliveries that ended `failed` in the last 24 h' })
  failed!: number;

  @ApiProperty({ ...COUNT, description: 'Deliveries waiting now for their first attempt or a retry' })
  pending!: number;

  @ApiProperty({
    ...NULLABLE_MS,
    description: "Median response time of the last 24 h's attempts that got an HTTP answer; null without any",
  })
  p50_ms!: number | null;

  @ApiProperty({ ...NULLABLE_MS, description: '99th percentile of the same' })
  p99_ms!: number | null;

  @ApiProperty({ ...NULLABLE_TIME, description: 'The latest attempt the receiver answered 2xx; null if none ever did' })
  last_success_at!: string | null;

  @ApiProperty({
    ...NULLABLE_TIME,
    description: 'The first failed attempt after the last success; null when the last attempt succeeded or none failed',
  })
  failing_since!: string | null;
}
