import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { COLLECTION_KEY_MAX_LENGTH, COLLECTION_KEY_PATTERN, LEVEL_ID_MAX } from '../catalog.rules';
import { COLLECTION_PROPERTIES_SCHEMA, UNLOCK_METHOD_SCHEMA } from './catalog.response';

/**
 * One entry of PUT /admin/collections. Documentation only: the batch is validated as a whole by
 * catalog.rules (parseCollectionBatch), which reports every bad entry by index.
 */
export class CollectionDefinitionDto {
  @ApiProperty({
    type: String,
    pattern: COLLECTION_KEY_PATTERN.source,
    maxLength: COLLECTION_KEY_MAX_LENGTH,
    description: 'Unique key of the form namespace:category.id (unique within the batch too)',
    example: 'rhythmc:titles.champion',
  })
  key!: string;

  @ApiProperty({ type: String, pattern: '^[a-z][a-z0-9_]{0,31}$', description: 'Lower-case type word; title and tag properties are checked', example: 'title' })
  type!: string;

  @ApiProperty(UNLOCK_METHOD_SCHEMA)
  unlockMethod!: Record<string, unknown>;

  @ApiProperty(COLLECTION_PROPERTIES_SCHEMA)
  properties!: Record<string, unknown>;
}

/** One entry of PUT /admin/charts. Documentation only: validated as a whole by catalog.rules (parseChartBatch). */
export class ChartDefinitionDto {
  @ApiProperty({ type: 'integer', minimum: 0, maximum: LEVEL_ID_MAX, description: 'Chart level id (unique within the batch)', example: 12 })
  levelId!: number;

  @ApiProperty({ type: String, minLength: 1, maxLength: 128, example: 'Freedom Dive' })
  name!: string;

  @ApiProperty({ type: Number, minimum: 0, description: 'Chart constant (ratings use it)', example: 14.2 })
  difficultyConstant!: number;

  @ApiProperty({ type: String, minLength: 1, maxLength: 64, example: '1.0' })
  version!: string;

  @ApiProperty({ type: Boolean, description: 'Only active charts are listed to game servers', example: true })
  active!: boolean;

  @ApiPropertyOptional({
    type: String,
    pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}$',
    description: 'Local date-time; absent: a new chart gets the current time, an existing one keeps its own',
    example: '2026-03-16T10:00:00',
  })
  createdAt?: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: 1_000_000,
    nullable: true,
    description: "The chart's note count: when set, a play whose judged notes (perfect + great + miss over every group) differ is flagged (noteCount check). Absent or null: not checked",
    example: 812,
  })
  notes?: number | null;
}
