import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { parseLocalDateTime } from '../../common/time';
import { Check } from '../../common/validation/check';
import { textLength } from '../../common/validation/is-text';
import { isJsonObject } from '../../common/validation/json-object';
import { RawJson } from '../../common/validation/raw-json';
import {
  CHART_NOTES_MAX,
  COLLECTION_KEY_MAX_LENGTH,
  COLLECTION_KEY_PATTERN,
  COLLECTION_TYPE_PATTERN,
  DIFFICULTY_CONSTANT_MAX,
  isCollectionKey,
  isDecorationType,
  LEVEL_ID_MAX,
} from '../catalog.rules';
import { COLLECTION_PROPERTIES_SCHEMA, UNLOCK_METHOD_SCHEMA } from './catalog.response';

/*
 * The entries of the catalog batches, validated by DtoArrayPipe with the `label` wording
 * (`[3] name: must be …`). One Check per rule keeps each problem's text as the API documents it.
 */

function isNonEmptyText(value: unknown, max: number): value is string {
  return typeof value === 'string' && value.length > 0 && textLength(value) <= max;
}

/** A rule on the properties of title and tag collections (the ones the client renders). */
function decorationRule(field: string, test: (value: unknown) => boolean, problem: string): PropertyDecorator {
  return Check(
    `decoration.${field}`,
    (properties, entry) =>
      !isJsonObject(properties) ||
      typeof entry.type !== 'string' ||
      !isDecorationType(entry.type) ||
      test(properties[field]),
    `properties.${field}: ${problem}`,
  );
}

/** One entry of PUT /admin/collections. */
export class CollectionDefinitionDto {
  @ApiProperty({
    type: String,
    pattern: COLLECTION_KEY_PATTERN.source,
    maxLength: COLLECTION_KEY_MAX_LENGTH,
    description: 'Unique key of the form namespace:category.id (unique within the batch too)',
    example: 'rhythmc:titles.champion',
  })
  @Check(
    'isCollectionKey',
    isCollectionKey,
    `must look like namespace:category.id (at most ${COLLECTION_KEY_MAX_LENGTH} characters)`,
  )
  key!: string;

  @ApiProperty({
    type: String,
    pattern: COLLECTION_TYPE_PATTERN.source,
    description: 'Lower-case type word; title and tag properties are checked',
    example: 'title',
  })
  @Check(
    'isCollectionType',
    (value) => typeof value === 'string' && COLLECTION_TYPE_PATTERN.test(value),
    'must be a lower-case word of at most 32 characters (title, tag, …)',
  )
  type!: string;

  @ApiProperty(UNLOCK_METHOD_SCHEMA)
  @RawJson()
  @Check(
    'isUnlockMethod',
    (value) => isJsonObject(value) && isNonEmptyText(value.type, 64),
    (value) => (isJsonObject(value) ? 'unlockMethod.type: must be a non-empty string' : 'must be an object'),
  )
  unlockMethod!: Record<string, unknown>;

  // Decorators apply bottom-up: the last one listed here is checked (and reported) first.
  @ApiProperty(COLLECTION_PROPERTIES_SCHEMA)
  @decorationRule('position', (value) => value === undefined || typeof value === 'boolean', 'must be a boolean')
  @decorationRule('rarity', (value) => value === undefined || typeof value === 'string', 'must be a string')
  @decorationRule(
    'description',
    (value) =>
      value === undefined ||
      typeof value === 'string' ||
      (Array.isArray(value) && value.every((line) => typeof line === 'string')),
    'must be a string or an array of strings',
  )
  @decorationRule('title', (value) => typeof value === 'string', 'must be a string')
  @Check('isObject', isJsonObject, 'must be an object')
  @RawJson()
  properties!: Record<string, unknown>;
}

/** One entry of PUT /admin/charts. */
export class ChartDefinitionDto {
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    maximum: LEVEL_ID_MAX,
    description: 'Chart level id (unique within the batch)',
    example: 12,
  })
  @Check(
    'isLevelId',
    (value) => typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= LEVEL_ID_MAX,
    `must be an integer from 0 to ${LEVEL_ID_MAX}`,
  )
  levelId!: number;

  @ApiProperty({ type: String, minLength: 1, maxLength: 128, example: 'Freedom Dive' })
  @Check('isName', (value) => isNonEmptyText(value, 128), 'must be a non-empty string of at most 128 characters')
  name!: string;

  @ApiProperty({
    type: Number,
    minimum: 0,
    maximum: DIFFICULTY_CONSTANT_MAX,
    description: 'Chart constant (ratings use it)',
    example: 14.2,
  })
  @Check(
    'isConstant',
    (value) => typeof value === 'number' && value >= 0 && value <= DIFFICULTY_CONSTANT_MAX,
    `must be a number from 0 to ${DIFFICULTY_CONSTANT_MAX}`,
  )
  difficultyConstant!: number;

  @ApiProperty({ type: String, minLength: 1, maxLength: 64, example: '1.0' })
  @Check('isVersion', (value) => isNonEmptyText(value, 64), 'must be a non-empty string of at most 64 characters')
  version!: string;

  @ApiProperty({ type: Boolean, description: 'Only active charts are listed to game servers', example: true })
  @Check('isBoolean', (value) => typeof value === 'boolean', 'must be a boolean')
  active!: boolean;

  @ApiPropertyOptional({
    type: String,
    pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}$',
    description: 'Local date-time; absent: a new chart gets the current time, an existing one keeps its own',
    example: '2026-03-16T10:00:00',
  })
  // Absent is fine; null is not (it is not a date-time).
  @Check(
    'isLocalDateTime',
    (value) => value === undefined || (typeof value === 'string' && parseLocalDateTime(value) !== null),
    'must be an ISO local date-time YYYY-MM-DDTHH:mm:ss',
  )
  createdAt?: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: CHART_NOTES_MAX,
    nullable: true,
    description:
      "The chart's note count: when set, a play whose judged notes (perfect + great + miss over every group) differ is flagged (noteCount check). Absent or null: not checked",
    example: 812,
  })
  @Check(
    'isNoteCount',
    (value) =>
      value === undefined ||
      value === null ||
      (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= CHART_NOTES_MAX),
    `must be an integer from 1 to ${CHART_NOTES_MAX}, or null`,
  )
  notes?: number | null;
}
