import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiPropertyOptions } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { AbsentOr } from '../../common/validation/absent-or';
import { IsLabel } from '../../common/validation/is-text';
import { PUBLIC_API_SCOPES, type PublicApiScope } from '../public-api.rules';

/** The most calls a minute a key may be given (the config's own bound). */
export const KEY_RATE_LIMIT_MAX = 1_000_000;

const NAME = {
  type: String,
  minLength: 1,
  maxLength: 64,
  description: 'What the key is for, shown in lists',
  example: 'Discord bot',
} as const;
const SCOPES: ApiPropertyOptions = {
  enum: [...PUBLIC_API_SCOPES],
  isArray: true,
  minItems: 1,
  uniqueItems: true,
  description: '`read:boards`: boards, charts, first places; `read:players`: player profiles and the name search',
  example: ['read:boards', 'read:players'],
};
const RATE_LIMIT = {
  type: 'integer',
  nullable: true,
  minimum: 1,
  maximum: KEY_RATE_LIMIT_MAX,
  description: 'Calls a minute for this key; null: PUBLIC_API_KEY_RATE_LIMIT (1,200 by default)',
  example: 1200,
} as const;
const SCOPES_MESSAGE = `scopes must be a non-empty list of distinct scopes among ${PUBLIC_API_SCOPES.join(', ')}`;
const RATE_LIMIT_MESSAGE = `rateLimit must be null or an integer from 1 to ${KEY_RATE_LIMIT_MAX}`;

/** A key's scopes: one to all of PUBLIC_API_SCOPES, each once. */
const Scopes = () =>
  applyDecorators(
    IsArray({ message: SCOPES_MESSAGE }),
    ArrayMinSize(1, { message: SCOPES_MESSAGE }),
    ArrayMaxSize(PUBLIC_API_SCOPES.length, { message: SCOPES_MESSAGE }),
    ArrayUnique({ message: SCOPES_MESSAGE }),
    IsIn(PUBLIC_API_SCOPES, { each: true, message: SCOPES_MESSAGE }),
  );

/** A key's own limit a minute; absent or null: PUBLIC_API_KEY_RATE_LIMIT. */
const RateLimit = () =>
  applyDecorators(
    ApiPropertyOptional(RATE_LIMIT),
    IsOptional(),
    IsInt({ message: RATE_LIMIT_MESSAGE }),
    Min(1, { message: RATE_LIMIT_MESSAGE }),
    Max(KEY_RATE_LIMIT_MAX, { message: RATE_LIMIT_MESSAGE }),
  );

/** A key's name: 1 to 64 characters as its column counts them. */
const Name = () => IsLabel(64);

/** POST /admin/api-keys. */
export class CreateApiKeyDto {
  @ApiProperty(NAME)
  @Name()
  name!: string;

  @ApiProperty(SCOPES)
  @Scopes()
  scopes!: PublicApiScope[];

  @RateLimit()
  rateLimit?: number | null;
}

/** PATCH /admin/api-keys/{id}: the fields given change, the others stay. */
export class UpdateApiKeyDto {
  @ApiPropertyOptional(NAME)
  @AbsentOr()
  @Name()
  name?: string;

  @ApiPropertyOptional(SCOPES)
  @AbsentOr()
  @Scopes()
  scopes?: PublicApiScope[];

  /** null: back to PUBLIC_API_KEY_RATE_LIMIT; absent: unchanged. */
  @RateLimit()
  rateLimit?: number | null;
}

/** A key as staff see it: never the key itself, which only the creating answer holds. */
export class ApiKeyResponse {
  @ApiProperty({ type: 'integer', example: 3 })
  id!: number;

  @ApiProperty(NAME)
  name!: string;

  @ApiProperty(SCOPES)
  scopes!: PublicApiScope[];

  @ApiProperty(RATE_LIMIT)
  rateLimit!: number | null;

  @ApiProperty({
    type: 'integer',
    description: 'The limit in force: rateLimit, or PUBLIC_API_KEY_RATE_LIMIT when it is null',
    example: 1200,
  })
  effectiveRateLimit!: number;

  @ApiProperty({ type: String, description: 'ISO 8601 local date-time, no zone', example: '2026-11-28T10:00:00' })
  createdAt!: string;

  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'The latest call, as recorded: each instance writes its keys’ last use once a minute (and when it stops, or lists the keys)',
    example: '2026-11-28T10:05:00',
  })
  lastUsedAt!: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'When it was revoked; null while it works', example: null })
  revokedAt!: string | null;
}

/** 201 of POST /admin/api-keys: the key's record and, this once, the key. */
export class CreatedApiKeyResponse extends ApiKeyResponse {
  @ApiProperty({
    type: String,
    description: 'The key, for `Authorization: Bearer <key>`: shown only in this answer (only its SHA-256 is stored)',
    example: 'rpk_Qm9vdHN0cmFwVG9rZW5FeGFtcGxlMDEyMzQ1Njc4OWFi',
  })
  key!: string;
}

/** GET /admin/api-keys. */
export class ApiKeyPage {
  @ApiProperty({ type: [ApiKeyResponse], description: 'By id ascending, revoked keys included' })
  items!: ApiKeyResponse[];

  @ApiProperty({ type: String, nullable: true, description: 'Cursor of the next page; null on the last' })
  nextCursor!: string | null;
}
