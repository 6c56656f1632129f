import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  Max,
  Min,
  ValidateBy,
} from 'class-validator';
import { AbsentOr } from '../../common/validation/absent-or';
import { ListQueryDto, OneOfFilter } from '../../common/pagination/list-query';
import { IsLabel } from '../../common/validation/is-text';
import { WEBHOOK_EVENTS, WEBHOOK_FORMATS, type WebhookEvent, type WebhookFormat } from '../webhook-events';

const EVENTS_MESSAGE = `events must be a non-empty list of distinct events among ${WEBHOOK_EVENTS.join(', ')}`;
const URL_MESSAGE = 'url must be an http or https URL of at most 2048 characters, without user or password';
const ATP_TOP_MESSAGE = 'atpTop must be an integer from 1 to 1000';

/** http(s), no credentials in the URL (they would be sent as Basic auth and shown in lists), ≤ 2048. */
export function isWebhookUrl(value: unknown): boolean {
  if (typeof value !== 'string' || value.length > 2_048) return false;
  try {
    const url = new URL(value);
    return (
      ['http:', 'https:'].includes(url.protocol) && url.username === '' && url.password === '' && url.hostname !== ''
    );
  } catch {
    return false;
  }
}

const URL_DOC = { type: String, maxLength: 2048, example: 'https://discord.com/api/webhooks/123/abc' };
const Url = () =>
  ValidateBy({ name: 'isWebhookUrl', validator: { validate: isWebhookUrl, defaultMessage: () => URL_MESSAGE } });
const Events = () =>
  applyDecorators(
    IsArray({ message: EVENTS_MESSAGE }),
    ArrayMinSize(1, { message: EVENTS_MESSAGE }),
    ArrayMaxSize(WEBHOOK_EVENTS.length, { message: EVENTS_MESSAGE }),
    ArrayUnique({ message: EVENTS_MESSAGE }),
    IsIn(WEBHOOK_EVENTS, { each: true, message: EVENTS_MESSAGE }),
  );
const EVENTS_DOC = {
  enum: [...WEBHOOK_EVENTS],
  isArray: true,
  minItems: 1,
  uniqueItems: true,
  example: ['chart.first_place'],
};
const FORMAT_DOC = {
  enum: [...WEBHOOK_FORMATS],
  description: '`json`: the signed event; `discord`: a Discord webhook message (embeds), also signed',
  example: 'discord',
};
const AtpTop = () =>
  applyDecorators(
    IsInt({ message: ATP_TOP_MESSAGE }),
    Min(1, { message: ATP_TOP_MESSAGE }),
    Max(1_000, { message: ATP_TOP_MESSAGE }),
  );
const Name = () => IsLabel(64);

/** POST /admin/webhooks. */
export class CreateWebhookDto {
  @ApiProperty({ type: String, minLength: 1, maxLength: 64, example: 'Discord #scores' })
  @Name()
  name!: string;

  @ApiProperty(URL_DOC)
  @Url()
  url!: string;

  @ApiProperty(EVENTS_DOC)
  @Events()
  events!: WebhookEvent[];

  @ApiPropertyOptional({ ...FORMAT_DOC, default: 'json' })
  @IsOptional()
  @IsIn(WEBHOOK_FORMATS, { message: `format must be one of ${WEBHOOK_FORMATS.join(', ')}` })
  format?: WebhookFormat;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 1000, default: 10, description: 'N of player.atp_top' })
  @IsOptional()
  @AtpTop()
  atpTop?: number;
}

/** PATCH /admin/webhooks/{id}: the fields given change. `enabled: true` also clears a failure streak. */
export class UpdateWebhookDto {
  @ApiPropertyOptional({ type: String, minLength: 1, maxLength: 64 })
  @AbsentOr()
  @Name()
  name?: string;

  @ApiPropertyOptional(URL_DOC)
  @AbsentOr()
  @Url()
  url?: string;

  @ApiPropertyOptional(EVENTS_DOC)
  @AbsentOr()
  @Events()
  events?: WebhookEvent[];

  @ApiPropertyOptional(FORMAT_DOC)
  @AbsentOr()
  @IsIn(WEBHOOK_FORMATS, { message: `format must be one of ${WEBHOOK_FORMATS.join(', ')}` })
  format?: WebhookFormat;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 1000 })
  @AbsentOr()
  @AtpTop()
  atpTop?: number;

  @ApiPropertyOptional({ type: Boolean })
  @AbsentOr()
  @IsBoolean({ message: 'enabled must be a boolean' })
  enabled?: boolean;
}

/** A webhook as staff see it: never its secret. */
export class WebhookResponse {
  @ApiProperty({ type: 'integer', example: 1 })
  id!: number;

  @ApiProperty({ type: String, example: 'Discord #scores' })
  name!: string;

  @ApiProperty({ type: String })
  url!: string;

  @ApiProperty(EVENTS_DOC)
  events!: WebhookEvent[];

  @ApiProperty(FORMAT_DOC)
  format!: WebhookFormat;

  @ApiProperty({ type: 'integer', example: 10 })
  atpTop!: number;

  @ApiProperty({ type: Boolean })
  enabled!: boolean;

  @ApiProperty({ type: String, nullable: true, description: 'Why the service turned it off; null otherwise' })
  disabledReason!: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Failing since (ISO 8601 local date-time); null while it succeeds',
  })
  failingSince!: string | null;

  @ApiProperty({ type: String, description: 'ISO 8601 local date-time, no zone', example: '2026-11-28T10:00:00' })
  createdAt!: string;

  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'Until when the secret replaced by the last rotation still signs beside the current one (ISO 8601 local date-time); null when none does',
  })
  previousSecretExpiresAt!: string | null;

  @ApiProperty({ type: 'integer', description: 'Deliveries waiting (first attempt or a retry)' })
  pending!: number;

  @ApiProperty({ type: 'integer', description: 'Deliveries given up after WEBHOOK_RETRY_FOR_SECONDS' })
  failed!: number;
}

/** 201 of POST /admin/webhooks: the webhook and, this once, its signing secret. */
export class CreatedWebhookResponse extends WebhookResponse {
  @ApiProperty({
    type: String,
    description: 'HMAC-SHA256 key of X-Rhythmc-Signature; shown only here',
    example: 'whsec_…',
  })
  secret!: string;
}

const OVERLAP_MESSAGE = 'overlapSeconds must be an integer from 0 to 604800 (7 days)';

/** POST /admin/webhooks/{id}/secret. */
export class RotateWebhookSecretDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: 604_800,
    default: 86_400,
    description:
      'How long the replaced secret keeps signing beside the new one (a second signature in X-Rhythmc-Signature), for the receivers to take the new one; 0 drops it at once',
  })
  @AbsentOr()
  @IsInt({ message: OVERLAP_MESSAGE })
  @Min(0, { message: OVERLAP_MESSAGE })
  @Max(604_800, { message: OVERLAP_MESSAGE })
  overlapSeconds?: number;
}

/** 201 of POST /admin/webhooks/{id}/secret: the webhook and, this once, its new secret. */
export class RotatedWebhookSecretResponse extends WebhookResponse {
  @ApiProperty({
    type: String,
    description: 'The new HMAC-SHA256 key of X-Rhythmc-Signature; shown only here',
    example: 'whsec_…',
  })
  secret!: string;
}

export class WebhookList {
  @ApiProperty({ type: [WebhookResponse] })
  items!: WebhookResponse[];
}

export class WebhookDeliveryResponse {
  @ApiProperty({ type: String, format: 'uuid', description: 'The delivery id (X-Rhythmc-Delivery)' })
  id!: string;

  @ApiProperty({ type: String, format: 'uuid' })
  eventId!: string;

  @ApiProperty({ enum: [...WEBHOOK_EVENTS] })
  type!: string;

  @ApiProperty({ enum: ['pending', 'delivered', 'failed'] })
  state!: string;

  @ApiProperty({ type: 'integer' })
  attempts!: number;

  @ApiProperty({ type: 'integer', nullable: true, description: 'HTTP status of the last attempt; null when none came' })
  lastStatus!: number | null;

  @ApiProperty({ type: String, nullable: true })
  lastError!: string | null;

  @ApiProperty({ type: String })
  createdAt!: string;

  @ApiProperty({ type: String, nullable: true, description: 'The next attempt while pending' })
  nextAttemptAt!: string | null;

  @ApiProperty({ type: String, nullable: true })
  deliveredAt!: string | null;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The event data' })
  data!: Record<string, unknown>;
}

export class WebhookDeliveryPage {
  @ApiProperty({ type: [WebhookDeliveryResponse] })
  items!: WebhookDeliveryResponse[];

  @ApiProperty({ type: String, nullable: true })
  nextCursor!: string | null;
}

/** GET /admin/webhooks/{id}/deliveries. */
export class WebhookDeliveriesQueryDto extends ListQueryDto {
  @OneOfFilter(['pending', 'delivered', 'failed'], 'Only deliveries in this state')
  state?: 'pending' | 'delivered' | 'failed';
}
