import { ApiProperty, ApiPropertyOptions } from '@nestjs/swagger';

/** OpenAPI schema of `unlockMethod`: a generic rule object that always has `type`. */
export const UNLOCK_METHOD_SCHEMA: ApiPropertyOptions = {
  type: 'object',
  description:
    'Unlock rule, kept as given: always has `type` (ACHIEVEMENT, MANUAL, …); may carry name, description, mode, events, info, ' +
    'values, player, conditions, methods, grants, defaultUnlocked, hideCondition',
  properties: { type: { type: 'string', example: 'ACHIEVEMENT' } },
  required: ['type'],
  // `required` above lists the inner keys; the property itself is required too.
  selfRequired: true,
  additionalProperties: true,
  example: { type: 'ACHIEVEMENT', mode: 'ALL', events: ['FULL_COMBO'] },
};

/** OpenAPI schema of `properties`: type-specific; for title and tag the fields below. */
export const COLLECTION_PROPERTIES_SCHEMA: ApiPropertyOptions = {
  type: 'object',
  description: 'Type-specific, kept as given. For `title` and `tag`: title (required), description, rarity, position',
  properties: {
    title: { type: 'string', description: 'Rendered text (may contain colour codes)' },
    description: {
      oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
      description: 'Hover description in chat',
    },
    rarity: { type: 'string', description: 'Hover rarity label' },
    position: { type: 'boolean', description: 'true: prefix; false: suffix' },
  },
  additionalProperties: true,
  example: { title: '§6Champion', description: ['Won the spring cup'], rarity: 'LEGENDARY', position: true },
};

/** interface.md "Collection". */
export class CollectionResponse {
  @ApiProperty({
    type: String,
    description: 'Unique key of the form namespace:category.id',
    example: 'rhythmc:titles.champion',
  })
  key!: string;

  @ApiProperty({ type: String, description: 'Collection type; the client uses title and tag', example: 'title' })
  type!: string;

  @ApiProperty(UNLOCK_METHOD_SCHEMA)
  unlockMethod!: Record<string, unknown>;

  @ApiProperty(COLLECTION_PROPERTIES_SCHEMA)
  properties!: Record<string, unknown>;
}

/** interface.md "Chart catalog entry"; createdAt is an ISO local date-time without zone. */
export class ChartResponse {
  @ApiProperty({ type: 'integer', description: 'Chart level id', example: 12 })
  levelId!: number;

  @ApiProperty({ type: String, example: 'Freedom Dive' })
  name!: string;

  @ApiProperty({ type: Number, description: 'Chart constant', example: 14.2 })
  difficultyConstant!: number;

  @ApiProperty({ type: String, description: 'Chart or song version string', example: '1.0' })
  version!: string;

  @ApiProperty({ type: String, description: 'ISO 8601 local date-time, no zone', example: '2026-03-16T10:00:00' })
  createdAt!: string;
}
