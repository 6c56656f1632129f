import { applyDecorators } from '@nestjs/common';
import { Transform, Type } from 'class-transformer';
import { Equals, IsBoolean, IsNotEmpty, IsObject, IsString, MaxLength, ValidateBy, ValidateNested } from 'class-validator';
import { IsUid } from '../../common/validation/is-uid';

/** The last millisecond of the year 9999: larger "epoch milliseconds" are not a time. */
export const MAX_EPOCH_MS = 253_402_300_799_999;
export const MAX_INT32 = 2_147_483_647;

/** One constraint, one message: an integer (JSON number) from `min` to `max`. */
const IsIntegerFrom = (min: number, max: number, what = 'an integer') =>
  ValidateBy({
    name: 'isIntegerFrom',
    validator: {
      validate: (value: unknown) => typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max,
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

const isPlainObject = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A required nested object validated as `type`. Anything else (missing, null, an array, a string)
 * becomes undefined first, so the answer is the one message "<path> must be an object" rather than
 * class-validator's per-element "nested property … must be either object or array".
 */
const IsNested = (type: () => new () => object) =>
  applyDecorators(
    Type(type),
    Transform(({ obj, key, value }: { obj: Record<string, unknown>; key: string; value: unknown }) => (isPlainObject(obj[key]) ? value : undefined)),
    IsObject(),
    ValidateNested(),
  );

export class UploadPlayerDto {
  @IsUid()
  playerUID!: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(512)
  accessToken!: string;

  @IsEpochMs()
  timestamp!: number;
}

export class UploadServerDto {
  @IsIntegerFrom(1, MAX_INT32)
  serverID!: number;

  @IsString()
  @MaxLength(64)
  serverName!: string;

  @IsString()
  @MaxLength(64)
  country!: string;
}

/** Perfect / great / miss counts of one judgement kind. */
export class JudgementStatsDto {
  @IsCounter()
  perfect!: number;

  @IsCounter()
  great!: number;

  @IsCounter()
  miss!: number;
}

export class GameplayPayloadDto {
  /** The only payload type the interface shows. */
  @Equals('gameplay', { message: "$property must be 'gameplay'" })
  type!: 'gameplay';

  @IsIntegerFrom(1, MAX_INT32)
  levelID!: number;

  @IsPercent()
  acc!: number;

  @IsBoolean()
  isRival!: boolean;

  @IsBoolean()
  isWin!: boolean;

  /** The rival's uid; 0 when there is none. */
  @IsIntegerFrom(0, Number.MAX_SAFE_INTEGER)
  rivalUID!: number;

  @IsPercent()
  rivalAcc!: number;

  @IsNested(() => JudgementStatsDto)
  tapStats!: JudgementStatsDto;

  @IsNested(() => JudgementStatsDto)
  holdStats!: JudgementStatsDto;

  @IsNested(() => JudgementStatsDto)
  dodgeStats!: JudgementStatsDto;

  @IsNested(() => JudgementStatsDto)
  lookStats!: JudgementStatsDto;

  @IsCounter()
  maxCombo!: number;

  @IsBoolean()
  pass!: boolean;

  @IsBoolean()
  fullCombo!: boolean;

  @IsBoolean()
  allPerfect!: boolean;

  /** Stored, never trusted: the service decides personal bests itself. */
  @IsBoolean()
  isNewRecord!: boolean;

  @IsString()
  @MaxLength(64)
  player_arena!: string;

  @IsEpochMs()
  time!: number;
}

/** POST /player/upload: one record (interface.md "Upload record"). */
export class UploadRecordDto {
  @IsNested(() => UploadPlayerDto)
  player!: UploadPlayerDto;

  @IsNested(() => UploadServerDto)
  server!: UploadServerDto;

  @IsNested(() => GameplayPayloadDto)
  payload!: GameplayPayloadDto;
}
