import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { MemoizedQuery } from '../../common/validation/memoized-query';
import { PluginBody } from '../../common/validation/plugin-body';
import { UID_REQUEST_SCHEMA } from '../../common/validation/is-uid';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  registerDecorator,
  ValidationArguments,
} from 'class-validator';
import { StrictInt } from '../../common/validation/strict-integer';
import { NETWORK_NAME_PATTERN } from '../../common/validation/network-name';
import { BoardScopeView, COUNTRY_PATTERN } from './board-scope.dto';
import { SEASON_SLUG_SOURCE } from './season.dto';

export { BoardScopeView } from './board-scope.dto';

export const BOARD_DEFAULT_LIMIT = 10;
export const BOARD_MAX_LIMIT = 100;
export const BOARD_DEFAULT_K = 5;
export const BOARD_MAX_K = 25;

/** A query parameter that may only be given when `other` is given (`present`) or is not (`!present`). */
export function RequiresOther(other: string, present: boolean, message: string): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: present ? 'requiresOther' : 'excludesOther',
      target: target.constructor,
      propertyName: String(propertyName),
      constraints: [other],
      options: { message },
      validator: {
        validate: (_value: unknown, args: ValidationArguments) =>
          ((args.object as Record<string, unknown>)[other] !== undefined) === present,
      },
    });
}

const limitMessage = `limit must be an integer from 1 to ${BOARD_MAX_LIMIT}`;
const kMessage = `k must be an integer from 0 to ${BOARD_MAX_K}`;
const aroundMessage = 'around must be a positive integer';
/** `all`, a calendar period now, a season by id or slug, or any period (a closed one: its archive) by id. */
export const PERIOD_PATTERN = new RegExp(
  `^(all|day|week|month|season:([1-9]\\d{0,17}|${SEASON_SLUG_SOURCE})|[1-9]\\d{0,17})$`,
);
const groupMessage = 'group must be 1-64 characters of A-Z, a-z, 0-9, _, . and -';
const countryMessage =
  'country must be 1-64 characters of A-Z, a-z, 0-9, space, _, . and -, starting with a letter or digit';
const SCOPE_PERIOD_MESSAGE = 'group and country read the all-time boards: not with period';
const periodMessage =
  'period must be all, day, week, month, season:<id or slug> or a period id (a slug is 1 to 64 of a-z, 0-9 and inner -, with at least one letter)';

/**
 * GET /server/leaderboards/…: either the top `limit` (the default, 10) or the window `around` a
 * player with `k` neighbours on each side. Unknown parameters are 400 (the strict ValidationPipe).
 */
@MemoizedQuery()
export class LeaderboardQueryDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: BOARD_MAX_LIMIT,
    default: BOARD_DEFAULT_LIMIT,
    description: 'Top N: the first `limit` entries. Not with `around`.',
  })
  @IsOptional()
  @StrictInt()
  @IsInt({ message: limitMessage })
  @Min(1, { message: limitMessage })
  @Max(BOARD_MAX_LIMIT, { message: limitMessage })
  @RequiresOther('around', false, 'limit cannot be combined with around: give limit (top N) or around (a window)')
  limit?: number;

  @ApiPropertyOptional({
    type: 'integer',
    format: 'int64',
    minimum: 1,
    description: "The window around this player's uid: its rank and `k` neighbours on each side. Not with `limit`.",
    example: 1001,
  })
  @IsOptional()
  @IsString({ message: aroundMessage })
  @Matches(/^[1-9]\d{0,17}$/, { message: aroundMessage })
  around?: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: BOARD_MAX_K,
    default: BOARD_DEFAULT_K,
    description: 'With `around`: neighbours on each side (fewer at either end of the board).',
  })
  @IsOptional()
  @StrictInt()
  @IsInt({ message: kMessage })
  @Min(0, { message: kMessage })
  @Max(BOARD_MAX_K, { message: kMessage })
  @RequiresOther('around', true, 'k needs around')
  k?: number;

  @ApiPropertyOptional({
    type: String,
    default: 'all',
    pattern: PERIOD_PATTERN.source,
    description:
      'The period of the board: `all` (all time, the default; the answer has no `period`), `day`, `week` (from Monday) or ' +
      '`month` now (boundaries in PERIOD_TIME_ZONE), `season:<id or slug>`, or a period id (a closed period answers its archive).',
    example: 'week',
  })
  @IsOptional()
  @IsString({ message: periodMessage })
  @Matches(PERIOD_PATTERN, { message: periodMessage })
  @RequiresOther('group', false, SCOPE_PERIOD_MESSAGE)
  @RequiresOther('country', false, SCOPE_PERIOD_MESSAGE)
  period?: string;

  @ApiPropertyOptional({
    type: String,
    maxLength: 64,
    pattern: NETWORK_NAME_PATTERN.source,
    description:
      'The board of a session-handover group (the `session_handover` setting): the all-time board of the players whose ' +
      'home server (the server of their latest login) is in the group, ranked by their global values. Not with `country` nor `period`.',
    example: 'eu-lobby',
  })
  @IsOptional()
  @IsString({ message: groupMessage })
  @Matches(NETWORK_NAME_PATTERN, { message: groupMessage })
  @RequiresOther('country', false, 'group cannot be combined with country: give one scope')
  group?: string;

  @ApiPropertyOptional({
    type: String,
    maxLength: 64,
    pattern: COUNTRY_PATTERN.source,
    description:
      "The board of a country: as `group`, for the players whose home server's registered `country` is exactly this. Not with `group` nor `period`.",
    example: 'DE',
  })
  @IsOptional()
  @IsString({ message: countryMessage })
  @Matches(COUNTRY_PATTERN, { message: countryMessage })
  country?: string;
}

/** The period a board answer is for (every answer but `period=all`'s carries it). */
export class BoardPeriodView {
  @ApiProperty({
    type: 'integer',
    format: 'int64',
    description: 'Period id (`period=<id>` reads it again, closed or not)',
    example: 12,
  })
  id!: number;

  @ApiProperty({ type: String, enum: ['day', 'week', 'month', 'season'], example: 'week' })
  kind!: 'day' | 'week' | 'month' | 'season';

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Seasons: the slug; null otherwise',
    example: 'spring-2027',
  })
  slug!: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Seasons: the name staff gave it; null otherwise',
    example: 'Spring 2027',
  })
  name!: string | null;

  @ApiProperty({
    type: String,
    description: 'Start, a local date-time (decisions.md §8)',
    example: '2027-03-01T00:00:00',
  })
  startsAt!: string;

  @ApiProperty({ type: String, description: 'End (exclusive), a local date-time', example: '2027-06-01T00:00:00' })
  endsAt!: string;

  @ApiProperty({ type: Boolean, description: 'Closed: the board is frozen (as read at the close)', example: false })
  closed!: boolean;
}

const RANK = {
  type: 'integer',
  minimum: 1,
  description: 'Position on the board, from 1; banned players take none (decisions.md §5)',
  example: 1,
} as const;
export const UID = { type: 'integer', format: 'int64', description: 'Platform player id', example: 1001 } as const;
export const USERNAME = { type: String, description: 'Stored account name', example: 'Notch' } as const;
export const DISPLAY_NAME = {
  type: String,
  description: 'Display name; the username when it is empty',
  example: 'Notch',
} as const;
const WINDOW_RANK = {
  type: 'integer',
  nullable: true,
  description:
    "Only with `around`: the player's rank (equal to the upload's siteRank / trackRank); null when the player has none " +
    '(no counted play, on this chart for a chart board, or under an active ban), and then `entries` is empty',
  example: 42,
} as const;

/** One entry of the ATP board. */
export class AtpBoardEntry {
  @ApiProperty(RANK)
  rank!: number;

  @ApiProperty(UID)
  uid!: number;

  @ApiProperty(USERNAME)
  username!: string;

  @ApiProperty(DISPLAY_NAME)
  displayName!: string;

  @ApiProperty({ type: Number, description: 'ATP, 4 decimals', example: 12.3456 })
  atp!: number;
}

/** One entry of a chart board: the player's best counted play on the chart. */
export class ChartBoardEntry {
  @ApiProperty(RANK)
  rank!: number;

  @ApiProperty(UID)
  uid!: number;

  @ApiProperty(USERNAME)
  username!: string;

  @ApiProperty(DISPLAY_NAME)
  displayName!: string;

  @ApiProperty({ type: Number, description: 'Accuracy of the best play, 0–100', example: 99.5 })
  acc!: number;

  @ApiProperty({
    type: Number,
    description: "That play's rating at the chart's constant of the last computation, 4 decimals",
    example: 11.75,
  })
  rating!: number;
}

/** 200 of GET /server/leaderboards/atp. */
export class AtpBoardResponse {
  @ApiProperty({ type: String, enum: ['atp'], example: 'atp' })
  board!: 'atp';

  @ApiPropertyOptional({ type: BoardPeriodView, description: 'The period (absent for `period=all`)' })
  period?: BoardPeriodView;

  @ApiPropertyOptional({
    type: BoardScopeView,
    description: 'With `group` or `country`: the scope (ranks are places within it)',
  })
  scope?: BoardScopeView;

  @ApiPropertyOptional(WINDOW_RANK)
  rank?: number | null;

  @ApiProperty({ type: [AtpBoardEntry], description: 'In board order (ATP descending, then uid ascending)' })
  entries!: AtpBoardEntry[];
}

/** 200 of GET /server/leaderboards/charts/{levelId}. */
export class ChartBoardResponse {
  @ApiProperty({ type: String, enum: ['chart'], example: 'chart' })
  board!: 'chart';

  @ApiProperty({ type: 'integer', minimum: 0, example: 101 })
  levelId!: number;

  @ApiPropertyOptional({ type: BoardPeriodView, description: 'The period (absent for `period=all`)' })
  period?: BoardPeriodView;

  @ApiPropertyOptional({
    type: BoardScopeView,
    description: 'With `group` or `country`: the scope (ranks are places within it)',
  })
  scope?: BoardScopeView;

  @ApiPropertyOptional(WINDOW_RANK)
  rank?: number | null;

  @ApiProperty({
    type: [ChartBoardEntry],
    description: 'In board order (acc descending, then first reached ascending, then uid ascending)',
  })
  entries!: ChartBoardEntry[];
}

/** The most uids a scoped board may name (a party or a friends list). */
export const SCOPED_MAX_UIDS = 100;
const uidsMessage = `uids must be 1 to ${SCOPED_MAX_UIDS} distinct positive integers`;

/**
 * The rule of a scoped board's set, wherever it is read from (a body's list, a query's comma-separated
 * value): 1 to SCOPED_MAX_UIDS distinct uids, each a string of digits as IsUid keeps it.
 */
function ScopedUids(): PropertyDecorator {
  return applyDecorators(
    IsArray({ message: uidsMessage }),
    ArrayMinSize(1, { message: uidsMessage }),
    ArrayMaxSize(SCOPED_MAX_UIDS, { message: uidsMessage }),
    IsString({ each: true, message: uidsMessage }),
    Matches(/^[1-9]\d{0,17}$/, { each: true, message: uidsMessage }),
    ArrayUnique({ message: uidsMessage }),
  );
}

/** POST /server/leaderboards/…/among: the players whose board is asked (a party, a friends list). */
@PluginBody()
export class ScopedBoardDto {
  @ApiProperty({
    type: 'array',
    items: UID_REQUEST_SCHEMA,
    minItems: 1,
    maxItems: SCOPED_MAX_UIDS,
    uniqueItems: true,
    example: [1001, 1002, 1003],
    description: `1 to ${SCOPED_MAX_UIDS} distinct player uids; unknown, unranked and banned players are left out of the answer`,
  })
  // Each uid as IsUid carries it (a JSON number up to 2^53 or a string of digits, kept as a string), so 1 and "1" are one uid.
  @Transform(({ value }: { value: unknown }) =>
    Array.isArray(value)
      ? value.map((uid: unknown) => (typeof uid === 'number' && Number.isSafeInteger(uid) ? String(uid) : uid))
      : value,
  )
  @ScopedUids()
  uids!: string[];
}

/** The longest `uids` query value read: 100 uids of 18 digits and their commas. */
const SCOPED_QUERY_MAX_CHARS = SCOPED_MAX_UIDS * 19;

/**
 * GET /public/v1/boards/…/among and /admin/boards/…/among: the same set as ScopedBoardDto, in one
 * query parameter, `uids=1001,1002,1003` (a GET, so a web page reads it without a CORS preflight
 * and a cache can keep it). One parameter only: a repeated `uids`, a value over
 * SCOPED_QUERY_MAX_CHARS characters or an empty element is 400; unknown parameters are 400 (strict).
 */
export class ScopedBoardQueryDto {
  @ApiProperty({
    type: 'string',
    pattern: '^[1-9][0-9]{0,17}(,[1-9][0-9]{0,17}){0,99}$',
    maxLength: SCOPED_QUERY_MAX_CHARS,
    example: '1001,1002,1003',
    description: `1 to ${SCOPED_MAX_UIDS} distinct player uids, separated by commas; unknown, unranked and banned players are left out of the answer`,
  })
  // Split here, validated as the body's list is; anything else (a repeated parameter: an array) fails IsArray.
  @Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && value.length <= SCOPED_QUERY_MAX_CHARS ? value.split(',') : null,
  )
  @ScopedUids()
  uids!: string[];
}

/** A scoped board: the players of the set that the board ranks, in board order, ranked among themselves. */
export class ScopedAtpBoardResponse {
  @ApiProperty({ enum: ['atp'] })
  board!: 'atp';

  @ApiProperty({ type: [AtpBoardEntry], description: 'rank: the place among the set (1 = first of the set)' })
  entries!: AtpBoardEntry[];
}

export class ScopedChartBoardResponse {
  @ApiProperty({ enum: ['chart'] })
  board!: 'chart';

  @ApiProperty({ type: 'integer' })
  levelId!: number;

  @ApiProperty({ type: [ChartBoardEntry], description: 'rank: the place among the set (1 = first of the set)' })
  entries!: ChartBoardEntry[];
}
