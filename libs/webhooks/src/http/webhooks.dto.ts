import { IsOptionalNonNull, PageQueryDto, SatisfiesRule } from '@filing/platform';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsOptional,
  IsString,
  MaxLength,
  ValidateIf,
} from 'class-validator';
import { WEBHOOK_EVENT_TYPES } from '../catalog/event-types';
import { DISABLED_REASONS, type DisabledReason } from '../endpoints/endpoint.events';

/*
 * Requests are checked here for shape; the URL (HTTPS, public address) and the event type names
 * are checked by EndpointsService, which the settings screen shares. The @Api* decorators
 * describe the same DTOs, and the answers' shapes (CONTRACT.md §4), in the OpenAPI document.
 */

const URL_MAX_LENGTH = 2048;
const DESCRIPTION_MAX_LENGTH = 500;
const MAX_EVENT_TYPES = 20;
const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'cancelled'];
const EVENT_TYPE_NAMES = WEBHOOK_EVENT_TYPES.map((t) => t.name);

const ID = { type: String, format: 'uuid' };
const URL_FIELD = {
  type: String,
  maxLength: URL_MAX_LENGTH,
  example: 'https://hooks.example.com/filing',
  description: 'An absolute https:// URL whose host resolves to public addresses',
};
const DESCRIPTION = { type: String, nullable: true, maxLength: DESCRIPTION_MAX_LENGTH };
const EVENT_TYPES = {
  enum: EVENT_TYPE_NAMES,
  isArray: true,
  maxItems: MAX_EVENT_TYPES,
  description:
    'The event types to send (GET /webhook-event-types); empty means every type but the operational `webhook_endpoint.disabled`, which an endpoint receives only when it lists it',
};
const VERSION = { description: 'Stream revision; also sent as ETag: "<version>"', minimum: 0 };
const RATE_LIMIT_MAX = 1000;
const RATE_LIMIT = {
  type: 'integer' as const,
  minimum: 1,
  maximum: RATE_LIMIT_MAX,
  nullable: true,
  description:
    'Requests per second at most to this endpoint (1–1,000; null: no limit). Deliveries beyond it wait their turn, none is dropped. Applied by each service instance on its own',
};

/** `rate_limit_per_second`: a whole number 1–1,000; null (or absent) is no limit. */
function rateLimitProblem(value: unknown): string | null {
  const fine = typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= RATE_LIMIT_MAX;
  return fine ? null : `rate_limit_per_second must be a whole number from 1 to ${RATE_LIMIT_MAX}, or null for no limit`;
}
const NULLABLE_TIME = { type: String, format: 'date-time', nullable: true };

export class CreateEndpointDto {
  @ApiProperty(URL_FIELD)
  @IsDefined()
  @IsString()
  @MaxLength(URL_MAX_LENGTH)
  url!: string;

  @ApiPropertyOptional(DESCRIPTION)
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsString()
  @MaxLength(DESCRIPTION_MAX_LENGTH)
  description?: string | null;

  @ApiPropertyOptional({ ...EVENT_TYPES, default: [] })
  @IsOptionalNonNull()
  @IsArray()
  @ArrayMaxSize(MAX_EVENT_TYPES)
  @IsString({ each: true })
  event_types?: string[];

  @ApiPropertyOptional({ ...RATE_LIMIT, default: null })
  @IsOptional()
  @SatisfiesRule('isRateLimit', rateLimitProblem)
  rate_limit_per_second?: number | null;
}

/** PATCH: absent fields stay as they are; `description: null` and `rate_limit_per_second: null` clear them; `url` and `event_types` cannot be null (`[]` is every type). */
export class UpdateEndpointDto {
  @ApiPropertyOptional(URL_FIELD)
  @IsOptionalNonNull()
  @IsString()
  @MaxLength(URL_MAX_LENGTH)
  url?: string;

  @ApiPropertyOptional({ ...DESCRIPTION, description: 'null clears it' })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsString()
  @MaxLength(DESCRIPTION_MAX_LENGTH)
  description?: string | null;

  @ApiPropertyOptional(EVENT_TYPES)
  @IsOptionalNonNull()
  @IsArray()
  @ArrayMaxSize(MAX_EVENT_TYPES)
  @IsString({ each: true })
  event_types?: string[];

  @ApiPropertyOptional({ ...RATE_LIMIT, description: `${RATE_LIMIT.description}. null removes the limit` })
  @IsOptional()
  @SatisfiesRule('isRateLimit', rateLimitProblem)
  rate_limit_per_second?: number | null;
}

/** The account switch *Webhook Notifications*: the PUT body and the answer of GET and PUT. */
export class SettingsDto {
  @ApiProperty({ type: Boolean, description: 'Off for a new account; nothing is sent while off' })
  @IsDefined()
  @IsBoolean()
  notifications_enabled!: boolean;
}

export class DeliveriesQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: DELIVERY_STATUSES })
  @IsOptional()
  @IsIn(DELIVERY_STATUSES)
  status?: string;
}

/** A webhook endpoint (`EndpointView`). */
export class WebhookEndpointDto {
  @ApiProperty(ID)
  id!: string;

  @ApiProperty(URL_FIELD)
  url!: string;

  @ApiProperty(DESCRIPTION)
  description!: string | null;

  @ApiProperty(EVENT_TYPES)
  event_types!: string[];

  @ApiProperty({ type: Boolean, description: 'false when created: enable it once the receiver is ready' })
  enabled!: boolean;

  @ApiProperty({
    type: String,
    enum: DISABLED_REASONS,
    nullable: true,
    description:
      'null while enabled; else why it is disabled: `manual` (by a user; also a new endpoint until it is enabled), `gone` (the receiver answered 410 Gone), `failing` (every attempt failed for WEBHOOK_DISABLE_AFTER, 5 days by default). Enabling clears it.',
  })
  disabled_reason!: DisabledReason | null;

  @ApiProperty(RATE_LIMIT)
  rate_limit_per_second!: number | null;

  @ApiProperty({ format: 'date-time' })
  created_at!: string;

  @ApiProperty({ format: 'date-time' })
  updated_at!: string;

  @ApiProperty(VERSION)
  version!: number;
}

const SECRET = {
  type: String,
  pattern: '^whsec_[A-Za-z0-9+/]{43}=$',
  description: 'The signing secret: `whsec_` + base64 of 32 random bytes',
};

/** The answer of create and rotate-secret: the endpoint with its (new) signing secret. */
export class WebhookEndpointWithSecretDto extends WebhookEndpointDto {
  @ApiProperty(SECRET)
  secret!: string;
}

export class WebhookSecretDto {
  @ApiProperty(SECRET)
  secret!: string;
}

/** One entry of the delivery log (`DeliveryView`). */
export class WebhookDeliveryDto {
  @ApiProperty(ID)
  id!: string;

  @ApiProperty({ ...ID, description: "The notification's event_id (and webhook-id header)" })
  event_id!: string;

  @ApiProperty({ enum: EVENT_TYPE_NAMES })
  event_type!: string;

  @ApiProperty(ID)
  endpoint_id!: string;

  @ApiProperty({ enum: DELIVERY_STATUSES })
  status!: string;

  @ApiProperty({ type: 'integer', minimum: 0 })
  attempt_count!: number;

  @ApiProperty(NULLABLE_TIME)
  last_attempt_at!: string | null;

  @ApiProperty({ ...NULLABLE_TIME, description: 'When the next attempt is due; null unless pending' })
  next_attempt_at!: string | null;

  @ApiProperty({ format: 'date-time' })
  created_at!: string;
}

export class WebhookDeliveryAttemptDto {
  @ApiProperty({ format: 'date-time' })
  attempted_at!: string;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: "The receiver's status; null when none came (timeout, connection or TLS failure)",
  })
  status_code!: number | null;

  @ApiProperty({ type: String, nullable: true, description: 'Why the attempt failed without a status' })
  error!: string | null;

  @ApiProperty({ type: 'integer', minimum: 0 })
  duration_ms!: number;
}

/** `GET /webhook-deliveries/{id}`: the log entry with every attempt, oldest first. */
export class WebhookDeliveryDetailDto extends WebhookDeliveryDto {
  @ApiProperty({ type: [WebhookDeliveryAttemptDto] })
  attempts!: WebhookDeliveryAttemptDto[];
}

export class WebhookEventTypeDto {
  @ApiProperty({ enum: EVENT_TYPE_NAMES })
  name!: string;

  @ApiProperty({ example: 'New Entity', description: 'As the settings screen shows it' })
  label!: string;

  @ApiProperty({ example: 'Entities' })
  category!: string;

  @ApiProperty({ example: 'An entity was created', description: 'What the notification means' })
  description!: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'A JSON Schema (2020-12) of the exact payload: every field, `additionalProperties: false`. The same schemas are the OpenAPI components named `…Notification`',
  })
  schema!: Record<string, unknown>;

  @ApiProperty({
    type: 'integer',
    example: 1,
    description:
      "The payload contract's version: it changes only when a field changes meaning or goes; added fields keep it (ignore fields you do not know)",
  })
  schema_version!: number;
}

/** The whole catalog at once: not paginated, so no next_cursor. */
export class WebhookEventTypeListDto {
  @ApiProperty({ type: [WebhookEventTypeDto] })
  data!: WebhookEventTypeDto[];
}
