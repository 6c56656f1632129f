import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches } from 'class-validator';
import { QueryIntRange } from '../../common/validation/strict-integer';
import { MemoizedQuery } from '../../common/validation/memoized-query';
import { DISPLAY_NAME, RequiresOther, UID, USERNAME } from '../../ranking';

export const FIRST_PLACES_DEFAULT_LIMIT = 10;
export const FIRST_PLACES_MAX_LIMIT = 100;
export const SEARCH_DEFAULT_LIMIT = 10;
export const SEARCH_MAX_LIMIT = 25;
export const PROFILE_DEFAULT_BESTS = 30;
export const PROFILE_MAX_BESTS = 100;
export const PROFILE_DEFAULT_RECENT = 10;
export const PROFILE_MAX_RECENT = 50;

/** GET /public/v1/first-places. */
@MemoizedQuery()
export class FirstPlacesQueryDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: FIRST_PLACES_MAX_LIMIT,
    default: FIRST_PLACES_DEFAULT_LIMIT,
  })
  @QueryIntRange('limit', 1, FIRST_PLACES_MAX_LIMIT)
  limit?: number;
}

const NAME_MESSAGE = (name: string) => `${name} must be 1-32 characters of A-Z, a-z, 0-9 and _`;
const NAME_PATTERN = /^[A-Za-z0-9_]{1,32}$/;

export const ONE_NAME_FILTER =
  'name and prefix: give exactly one (name: the exact name, ignoring case; prefix: the names starting with it)';

/**
 * GET /public/v1/players: `name` (the exact name, ignoring case) or `prefix` (every name starting
 * with it, ignoring case). Only the characters a username holds are accepted: `%`, `*`, spaces or
 * any other character is 400, never a pattern.
 */
export class PlayerSearchQueryDto {
  @ApiPropertyOptional({
    type: String,
    pattern: NAME_PATTERN.source,
    description: 'The exact name, ignoring case (several accounts may have held it). Not with `prefix`.',
    example: 'Notch',
  })
  @IsOptional()
  // `name` and `prefix` exclude each other (neither: PublicService says so).
  @RequiresOther('prefix', false, ONE_NAME_FILTER)
  @IsString({ message: NAME_MESSAGE('name') })
  @Matches(NAME_PATTERN, { message: NAME_MESSAGE('name') })
  name?: string;

  @ApiPropertyOptional({
    type: String,
    pattern: NAME_PATTERN.source,
    description: 'Names starting with this, ignoring case (`_` is a character like any other). Not with `name`.',
    example: 'Not',
  })
  @IsOptional()
  @IsString({ message: NAME_MESSAGE('prefix') })
  @Matches(NAME_PATTERN, { message: NAME_MESSAGE('prefix') })
  prefix?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: SEARCH_MAX_LIMIT, default: SEARCH_DEFAULT_LIMIT })
  @QueryIntRange('limit', 1, SEARCH_MAX_LIMIT)
  limit?: number;
}

/** GET /public/v1/players/{uid} and …/uuid/{uuid}: how many bests and recent plays. */
@MemoizedQuery()
export class PlayerProfileQueryDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: PROFILE_MAX_BESTS,
    default: PROFILE_DEFAULT_BESTS,
    description: 'Best charts to list, by rating',
  })
  @QueryIntRange('bests', 1, PROFILE_MAX_BESTS)
  bests?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: PROFILE_MAX_RECENT,
    default: PROFILE_DEFAULT_RECENT,
    description: 'Recent plays to list, newest first',
  })
  @QueryIntRange('recent', 0, PROFILE_MAX_RECENT)
  recent?: number;
}

const UUID = {
  type: String,
  nullable: true,
  format: 'uuid',
  description: 'Mojang account uuid; null for an account without one',
  example: '069a79f4-44e9-4726-a5be-fca90e38aaf5',
} as const;
const LOCAL_TIME = { type: String, description: 'ISO 8601 local date-time, no zone', example: '2026-11-28T10:00:00' };
const CHART_NAME = { type: String, description: 'Chart name from the catalog', example: 'Freedom Dive' } as const;
const ACC = { type: Number, description: 'Accuracy, 0–100', example: 99.5 } as const;

/** A player found by name. */
export class PublicPlayerSummary {
  @ApiProperty(UID)
  uid!: number;

  @ApiProperty(USERNAME)
  username!: string;

  @ApiProperty(DISPLAY_NAME)
  displayName!: string;

  @ApiProperty(UUID)
  uuid!: string | null;
}

export class PlayerSearchResponse {
  @ApiProperty({
    type: [PublicPlayerSummary],
    description: 'By name (lowercase, byte order), then uid; players under an active ban are left out',
  })
  players!: PublicPlayerSummary[];
}

/** A play or a best on one chart. */
class PublicChartAcc {
  @ApiProperty({ type: 'integer', example: 101 })
  levelId!: number;

  @ApiProperty(CHART_NAME)
  chartName!: string;

  @ApiProperty(ACC)
  acc!: number;
}

export class PublicBest extends PublicChartAcc {
  @ApiProperty({
    type: Number,
    description: 'Rating of the best at the chart constant of the last computation',
    example: 15.75,
  })
  rating!: number;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    minimum: 1,
    description: "Rank on the chart's board: the trackRank the player's next upload would answer",
    example: 12,
  })
  trackRank!: number | null;
}

export class PublicRecentPlay extends PublicChartAcc {
  @ApiProperty({
    type: Number,
    description: "The play's rating at the chart's constant now, 4 decimals",
    example: 15.25,
  })
  rating!: number;

  @ApiProperty({ type: Boolean })
  fullCombo!: boolean;

  @ApiProperty({ type: Boolean })
  allPerfect!: boolean;

  @ApiProperty({ type: 'integer', example: 812 })
  maxCombo!: number;

  @ApiProperty({ ...LOCAL_TIME, description: 'When the service received the play (ISO 8601 local date-time, no zone)' })
  playedAt!: string;
}

export class PublicTitle {
  @ApiProperty({ type: String, example: 'rhythmc:titles.champion' })
  key!: string;

  @ApiProperty({ type: String, description: 'Rendered text (may contain colour codes)', example: '§6Champion' })
  title!: string;

  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
    example: 'Won the spring cup',
  })
  description!: string | string[];

  @ApiProperty({ type: String, example: 'LEGENDARY' })
  rarity!: string;

  @ApiProperty({ type: Boolean, description: 'true: shown before the name; false: after it' })
  position!: boolean;
}

/** 200 of the public profile. */
export class PublicPlayerProfile extends PublicPlayerSummary {
  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'ATP, 4 decimals; null without a counted play',
    example: 12.3456,
  })
  atp!: number | null;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    minimum: 1,
    description:
      "Rank on the ATP board: the siteRank the player's next upload would answer; null without a counted play",
    example: 42,
  })
  siteRank!: number | null;

  @ApiProperty({ type: 'integer', description: 'How many charts the player has a best on', example: 57 })
  bestCount!: number;

  @ApiProperty({ type: [PublicBest], description: 'By rating descending, then level id' })
  bests!: PublicBest[];

  @ApiProperty({
    type: [PublicRecentPlay],
    description: 'Plays that count (passed, not flagged or approved, not voided, on a defined chart), newest first',
  })
  recentPlays!: PublicRecentPlay[];

  @ApiProperty({ type: [PublicTitle], description: 'Unlocked title collections, by key' })
  titles!: PublicTitle[];

  @ApiPropertyOptional({
    type: 'integer',
    description: 'The wattHour balance: only where the operator lists `balance` in PUBLIC_API_FIELDS',
    example: 12500,
  })
  wattHour?: number;
}

export class PublicFirstPlace {
  @ApiProperty({ type: 'integer', example: 101 })
  levelId!: number;

  @ApiProperty(CHART_NAME)
  chartName!: string;

  @ApiProperty(UID)
  uid!: number;

  @ApiProperty(USERNAME)
  username!: string;

  @ApiProperty(DISPLAY_NAME)
  displayName!: string;

  @ApiProperty(ACC)
  acc!: number;

  @ApiProperty({ type: Number, example: 16 })
  rating!: number;

  @ApiProperty({ ...LOCAL_TIME, description: 'When the service first accepted a play reaching this best' })
  reachedAt!: string;
}

export class FirstPlacesResponse {
  @ApiProperty({
    type: [PublicFirstPlace],
    description:
      "Rank 1 of each chart's board (players under an active ban take none), the most recently reached first",
  })
  entries!: PublicFirstPlace[];
}
