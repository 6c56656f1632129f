import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  Equals,
  IsBoolean,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  ValidateBy,
  ValidateNested,
} from 'class-validator';
import { IsUid, UID_REQUEST_SCHEMA } from '../../common/validation/is-uid';
import { NullAsAbsent, PluginBody } from '../../common/validation/plugin-body';
import { isJsonObject } from '../../common/validation/json-object';
import { IsText } from '../../common/validation/is-text';

/** The last millisecond of the year 9999: larger "epoch milliseconds" are not a time. */
export const MAX_EPOCH_MS = 253_402_300_799_999;
export const MAX_INT32 = 2_147_483_647;

/** One constraint, one message: an integer (JSON number) from `min` to `max`. */
const IsIntegerFrom = (min: number, max: number, what = 'an integer') =>
  ValidateBy({
    name: 'isIntegerFrom',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max,
      defaultMessage: () => `$property must be ${what} from ${min} to ${max}`,
    },
  });

/** A time: a positive integer of epoch milliseconds. */
const IsEpochMs = () => IsIntegerFrom(1, MAX_EPOCH_MS, 'an integer of epoch milliseconds');

/** A counter: an integer from 0 (int32). */
const IsCounter = () => IsIntegerFrom(0, MAX_INT32);

/** An accuracy in percent: a finite number from 0 to 100. */
const IsPercent = () =>
  ValidateBy({
    name: 'isPercent',
    validator: {
      validate: (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 100,
      defaultMessage: () => '$property must be a number from 0 to 100',
    },
  });

/**
 * A required nested object validated as `type`. Anything else (missing, null, an array, a string)
 * becomes undefined first, so the answer is the one message "<path> must be an object" rather than
 * class-validator's per-element "nested property … must be either object or array".
 */
const IsNested = (type: () => new () => object) =>
  applyDecorators(
    Type(type),
    Transform(({ obj, key, value }: { obj: Record<string, unknown>; key: string; value: unknown }) =>
      isJsonObject(obj[key]) ? value : undefined,
    ),
    IsObject(),
    ValidateNested(),
  );

const EPOCH_MS = { type: 'integer', format: 'int64', minimum: 1, maximum: MAX_EPOCH_MS } as const;
const COUNTER = { type: 'integer', minimum: 0, maximum: MAX_INT32 } as const;
const PERCENT = { type: 'number', minimum: 0, maximum: 100 } as const;

export class UploadPlayerDto {
  @ApiProperty({ ...UID_REQUEST_SCHEMA, description: 'Player uid; must own accessToken', example: 1001 })
  @IsUid()
  playerUID!: string;

  @ApiProperty({
    type: String,
    minLength: 1,
    maxLength: 512,
    description:
      'Player access token; an expired one is accepted while its session is still open under the calling server session',
    example: 'pl4yerAcc3ssT0kenExample0123456789abcdefABCD',
  })
  @IsString()
  @IsNotEmpty()
  @IsText(512)
  accessToken!: string;

  @ApiProperty({ ...EPOCH_MS, description: 'Client time of sending, epoch milliseconds', example: 1774000000000 })
  @IsEpochMs()
  timestamp!: number;
}

export class UploadServerDto {
  @ApiProperty({
    type: 'integer',
    minimum: 1,
    maximum: MAX_INT32,
    description: "Must be the calling session's serverID",
    example: 1,
  })
  @IsIntegerFrom(1, MAX_INT32)
  serverID!: number;

  @ApiProperty({ type: String, maxLength: 64, example: 'lobby-1' })
  @IsString()
  @IsText(64)
  serverName!: string;

  @ApiProperty({ type: String, maxLength: 64, example: 'DE' })
  @IsString()
  @IsText(64)
  country!: string;
}

/** Perfect / great / miss counts of one judgement kind. */
export class JudgementStatsDto {
  @ApiProperty({ ...COUNTER, example: 120 })
  @IsCounter()
  perfect!: number;

  @ApiProperty({ ...COUNTER, example: 4 })
  @IsCounter()
  great!: number;

  @ApiProperty({ ...COUNTER, example: 1 })
  @IsCounter()
  miss!: number;
}

export class GameplayPayloadDto {
  /** The only payload type the interface shows. */
  @ApiProperty({ type: String, enum: ['gameplay'], description: 'The only payload type', example: 'gameplay' })
  @Equals('gameplay', { message: "$property must be 'gameplay'" })
  type!: 'gameplay';

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    maximum: MAX_INT32,
    description:
      'Chart level id (0 to 2^31-1, as in the catalog); an unknown one creates an inactive placeholder chart',
    example: 12,
  })
  @IsIntegerFrom(0, MAX_INT32)
  levelID!: number;

  @ApiProperty({ ...PERCENT, description: 'Accuracy in percent', example: 98.75 })
  @IsPercent()
  acc!: number;

  @ApiProperty({ type: Boolean, example: false })
  @IsBoolean()
  isRival!: boolean;

  @ApiProperty({ type: Boolean, example: false })
  @IsBoolean()
  isWin!: boolean;

  /** The rival's uid; 0 or below (the plugin may send -1) when there is none: stored as 0. */
  @ApiProperty({
    type: 'integer',
    format: 'int64',
    minimum: Number.MIN_SAFE_INTEGER,
    maximum: Number.MAX_SAFE_INTEGER,
    description: 'The rival uid; 0 or below (e.g. -1) when there is none (stored as 0)',
    example: 0,
  })
  @IsIntegerFrom(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)
  rivalUID!: number;

  @ApiProperty({ ...PERCENT, example: 0 })
  @IsPercent()
  rivalAcc!: number;

  @ApiProperty({ type: JudgementStatsDto })
  @IsNested(() => JudgementStatsDto)
  tapStats!: JudgementStatsDto;

  @ApiProperty({ type: JudgementStatsDto })
  @IsNested(() => JudgementStatsDto)
  holdStats!: JudgementStatsDto;

  @ApiProperty({ type: JudgementStatsDto })
  @IsNested(() => JudgementStatsDto)
  dodgeStats!: JudgementStatsDto;

  @ApiProperty({ type: JudgementStatsDto })
  @IsNested(() => JudgementStatsDto)
  lookStats!: JudgementStatsDto;

  @ApiProperty({ ...COUNTER, example: 310 })
  @IsCounter()
  maxCombo!: number;

  @ApiProperty({ type: Boolean, description: 'Only passed plays count for ratings', example: true })
  @IsBoolean()
  pass!: boolean;

  @ApiProperty({ type: Boolean, example: false })
  @IsBoolean()
  fullCombo!: boolean;

  @ApiProperty({ type: Boolean, example: false })
  @IsBoolean()
  allPerfect!: boolean;

  /** Stored, never trusted: the service decides personal bests itself. */
  @ApiProperty({
    type: Boolean,
    description: 'Stored, never trusted: the service decides personal bests itself',
    example: true,
  })
  @IsBoolean()
  isNewRecord!: boolean;

  @ApiPropertyOptional({
    type: String,
    maxLength: 64,
    nullable: true,
    description: 'Absent or null: stored as ""',
    example: 'arena-3',
  })
  @NullAsAbsent()
  @IsOptional()
  @IsString()
  @IsText(64)
  player_arena?: string;

  @ApiProperty({
    ...EPOCH_MS,
    description:
      'When the play ended, epoch milliseconds; with the player and levelID it identifies the record (a resend is stored once)',
    example: 1773999990000,
  })
  @IsEpochMs()
  time!: number;
}

/** POST /player/upload: one record (interface.md "Upload record"). */
@PluginBody()
export class UploadRecordDto {
  @ApiProperty({ type: UploadPlayerDto })
  @IsNested(() => UploadPlayerDto)
  player!: UploadPlayerDto;

  @ApiProperty({ type: UploadServerDto })
  @IsNested(() => UploadServerDto)
  server!: UploadServerDto;

  @ApiProperty({ type: GameplayPayloadDto })
  @IsNested(() => GameplayPayloadDto)
  payload!: GameplayPayloadDto;
}
