import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsInt, IsObject, IsOptional, Max, Min, ValidateIf, ValidateNested } from 'class-validator';
import { AbsentOr } from '../../common/validation/absent-or';
import { COLLECTION_KEY_MAX_LENGTH, isCollectionKey } from '../../catalog/catalog.rules';
import { parseLocalDateTime } from '../../common/time';
import { Check } from '../../common/validation/check';
import { IsLabel } from '../../common/validation/is-text';
import { isJsonObject } from '../../common/validation/json-object';

/** The most players a close rule may grant to (docs/decisions.md "Seasons: staff and the close rule"). */
export const SEASON_GRANT_TOP_MAX = 1000;
/**
 * A season's slug: lower-case letters, digits and inner hyphens, 1 to 64 characters, with at least
 * one letter (`period=season:42` names the period with id 42, so an all-digit slug could not be read).
 */
export const SEASON_SLUG_MAX = 64;
/** The slug rule without anchors, with its length: the seasons' DTO and the boards' `period=season:<slug>` both use it. */
export const SEASON_SLUG_SOURCE = `(?=[a-z0-9-]{1,${SEASON_SLUG_MAX}}$)(?=[a-z0-9-]*[a-z])[a-z0-9]+(?:-[a-z0-9]+)*`;
export const SEASON_SLUG_PATTERN = new RegExp(`^${SEASON_SLUG_SOURCE}$`);
export const SEASON_NAME_MAX = 128;

export const isSeasonSlug = (value: unknown): value is string =>
  typeof value === 'string' && value.length <= SEASON_SLUG_MAX && SEASON_SLUG_PATTERN.test(value);

const LOCAL = (name: string) => `${name} must be an ISO local date-time YYYY-MM-DDTHH:mm:ss`;
const LocalDateTime = (name: string) =>
  Check('isLocalDateTime', (value) => typeof value === 'string' && parseLocalDateTime(value) !== null, LOCAL(name));

const SLUG_MESSAGE = `slug must be 1 to ${SEASON_SLUG_MAX} lower-case letters, digits and inner hyphens, with at least one letter`;
const TOP_MESSAGE = `closeRule.top must be an integer from 1 to ${SEASON_GRANT_TOP_MAX}`;
const COLLECTION_MESSAGE = 'closeRule.collection must be a collection key (namespace:path.name)';

/** What a season grants when it closes: `collection` to the first `top` players of its ATP board. */
export class SeasonCloseRuleDto {
  @ApiProperty({
    type: String,
    maxLength: COLLECTION_KEY_MAX_LENGTH,
    description: 'A collection of the catalog (e.g. a title)',
    example: 'rhythmc:titles.spring-champion',
  })
  @Check('isCollectionKey', (value) => isCollectionKey(value), COLLECTION_MESSAGE)
  collection!: string;

  @ApiProperty({ type: 'integer', minimum: 1, maximum: SEASON_GRANT_TOP_MAX, example: 10 })
  @IsInt({ message: TOP_MESSAGE })
  @Min(1, { message: TOP_MESSAGE })
  @Max(SEASON_GRANT_TOP_MAX, { message: TOP_MESSAGE })
  top!: number;
}

const CLOSE_RULE_DOC = {
  type: SeasonCloseRuleDto,
  nullable: true,
  description:
    'Granted in the transaction that freezes the season: the collection to its first `top` players of the season ATP board (banned players are not on it; equal ATP: lower uid first). null: nothing.',
} as const;

/** An optional close rule: absent, null, or an object validated as SeasonCloseRuleDto (one message for anything else). */
const CloseRule = () =>
  applyDecorators(
    IsOptional(),
    Type(() => SeasonCloseRuleDto),
    Transform(({ obj, key, value }: { obj: Record<string, unknown>; key: string; value: unknown }) =>
      obj[key] === null || isJsonObject(obj[key]) ? value : 'not an object',
    ),
    ValidateIf((_object, value) => value !== null),
    IsObject({ message: 'closeRule must be an object {collection, top} or null' }),
    ValidateNested(),
  );

const NAME_DOC = { type: String, minLength: 1, maxLength: SEASON_NAME_MAX, example: 'Spring 2027' } as const;
const Name = () => IsLabel(SEASON_NAME_MAX);

/** POST /admin/seasons. */
export class CreateSeasonDto {
  @ApiProperty({
    type: String,
    pattern: SEASON_SLUG_PATTERN.source,
    maxLength: SEASON_SLUG_MAX,
    description: 'The name boards use: `period=season:<slug>`. Unique; never changes.',
    example: 'spring-2027',
  })
  @Check('isSeasonSlug', isSeasonSlug, SLUG_MESSAGE)
  slug!: string;

  @ApiProperty(NAME_DOC)
  @Name()
  name!: string;

  @ApiProperty({
    type: String,
    description: 'Start (local date-time, decisions.md §8); not in the past',
    example: '2027-03-01T00:00:00',
  })
  @LocalDateTime('startsAt')
  startsAt!: string;

  @ApiProperty({
    type: String,
    description: 'End, exclusive (local date-time); after startsAt',
    example: '2027-06-01T00:00:00',
  })
  @LocalDateTime('endsAt')
  endsAt!: string;

  @ApiPropertyOptional(CLOSE_RULE_DOC)
  @CloseRule()
  closeRule?: SeasonCloseRuleDto | null;
}

/** PATCH /admin/seasons/{id}: the fields given change, the others stay; only while the season is open. */
export class UpdateSeasonDto {
  @ApiPropertyOptional(NAME_DOC)
  @AbsentOr()
  @Name()
  name?: string;

  @ApiPropertyOptional({
    type: String,
    description: 'Only before the season starts, and not in the past',
    example: '2027-03-01T00:00:00',
  })
  @AbsentOr()
  @LocalDateTime('startsAt')
  startsAt?: string;

  @ApiPropertyOptional({
    type: String,
    description: 'Not in the past, after startsAt',
    example: '2027-06-01T00:00:00',
  })
  @AbsentOr()
  @LocalDateTime('endsAt')
  endsAt?: string;

  @ApiPropertyOptional(CLOSE_RULE_DOC)
  @CloseRule()
  closeRule?: SeasonCloseRuleDto | null;
}

/** A close rule as stored: the board is the season's ATP board. */
export class SeasonCloseRuleView {
  @ApiProperty({ type: String, example: 'rhythmc:titles.spring-champion' })
  collection!: string;

  @ApiProperty({ type: 'integer', example: 10 })
  top!: number;

  @ApiProperty({ type: String, enum: ['atp'], description: 'The board ranked: the season ATP board', example: 'atp' })
  board!: 'atp';
}

export class SeasonResponse {
  @ApiProperty({ type: 'integer', format: 'int64', description: 'Its period id', example: 12 })
  id!: number;

  @ApiProperty({ type: String, example: 'spring-2027' })
  slug!: string;

  @ApiProperty({ type: String, example: 'Spring 2027' })
  name!: string;

  @ApiProperty({ type: String, example: '2027-03-01T00:00:00' })
  startsAt!: string;

  @ApiProperty({
    type: String,
    description: 'End, exclusive; an early close moves it to the close',
    example: '2027-06-01T00:00:00',
  })
  endsAt!: string;

  @ApiProperty({ type: SeasonCloseRuleView, nullable: true })
  closeRule!: SeasonCloseRuleView | null;

  @ApiProperty({
    type: String,
    enum: ['scheduled', 'open', 'closed', 'archived'],
    description:
      'scheduled: not started; open: plays count; closed: no play counts any more, its boards are being frozen; archived: its boards are read from the archive',
    example: 'open',
  })
  state!: 'scheduled' | 'open' | 'closed' | 'archived';

  @ApiProperty({ type: String, nullable: true, example: null })
  closedAt!: string | null;

  @ApiProperty({ type: String, example: '2027-02-20T10:00:00' })
  createdAt!: string;
}

export class SeasonPage {
  @ApiProperty({ type: [SeasonResponse] })
  items!: SeasonResponse[];

  @ApiProperty({ type: String, nullable: true, description: 'Cursor of the next page; null on the last' })
  nextCursor!: string | null;
}

export class SeasonGrantView {
  @ApiProperty({ type: String, example: 'rhythmc:titles.spring-champion' })
  collection!: string;

  @ApiProperty({
    type: 'integer',
    format: 'int64',
    isArray: true,
    description: 'The players granted it now, ascending (players of the top who owned it already are not listed)',
    example: [1001, 1004],
  })
  uids!: number[];
}

/** POST /admin/seasons/{id}/close. */
export class ClosedSeasonResponse {
  @ApiProperty({ type: SeasonResponse })
  season!: SeasonResponse;

  @ApiProperty({ type: SeasonGrantView, nullable: true, description: 'What the close rule granted; null without one' })
  granted!: SeasonGrantView | null;
}
