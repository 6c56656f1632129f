import { ApiProperty } from '@nestjs/swagger';
import { BooleanFilter, ListQueryDto, TextFilter } from '../../common/pagination/list-query';

/** GET /admin/charts. */
export class AdminChartsQueryDto extends ListQueryDto {
  @BooleanFilter('Only active (true) or inactive (false) charts')
  active?: boolean;
}

/** GET /admin/collections. */
export class AdminCollectionsQueryDto extends ListQueryDto {
  @TextFilter(
    /^[A-Za-z0-9_.:-]{1,32}$/,
    '1-32 characters of A-Z, a-z, 0-9, _, ., : and -',
    'Only this type (title, tag, assets, …)',
  )
  type?: string;
}

export class AdminChartResponse {
  @ApiProperty({ type: 'integer', example: 1201 })
  levelId!: number;

  @ApiProperty({ type: String, example: 'Freedom Dive [ANOTHER]' })
  name!: string;

  @ApiProperty({ type: Number, example: 12.8 })
  difficultyConstant!: number;

  @ApiProperty({ type: String, example: '1.2.0' })
  version!: string;

  @ApiProperty({
    type: Boolean,
    description: 'Listed to game servers; uploads of unknown levels add inactive placeholders',
  })
  active!: boolean;

  @ApiProperty({
    type: Boolean,
    description:
      'Created by an upload of an unknown level: its plays are stored but unranked until the chart is defined (PUT /admin/charts) and ratings recomputed',
    example: false,
  })
  placeholder!: boolean;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'Note count the noteCount check compares plays with; null: not checked',
    example: 812,
  })
  notes!: number | null;

  @ApiProperty({ type: String, example: '2026-03-01T10:00:00' })
  createdAt!: string;

  @ApiProperty({ type: String, example: '2026-03-20T18:04:11' })
  updatedAt!: string;
}

export class AdminChartPage {
  @ApiProperty({ type: [AdminChartResponse], description: 'By levelId ascending' })
  items!: AdminChartResponse[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as cursor for the next page; null on the last page' })
  nextCursor!: string | null;
}

export class AdminCollectionResponse {
  @ApiProperty({ type: String, example: 'rhythmc:title.first_clear' })
  key!: string;

  @ApiProperty({ type: String, example: 'title' })
  type!: string;

  @ApiProperty({ type: 'object', additionalProperties: true })
  unlockMethod!: Record<string, unknown>;

  @ApiProperty({ type: 'object', additionalProperties: true })
  properties!: Record<string, unknown>;

  @ApiProperty({ type: String, example: '2026-03-01T10:00:00' })
  createdAt!: string;

  @ApiProperty({ type: String, example: '2026-03-20T18:04:11' })
  updatedAt!: string;
}

export class AdminCollectionPage {
  @ApiProperty({
    type: [AdminCollectionResponse],
    description: 'By key ascending (byte order), asset collections included',
  })
  items!: AdminCollectionResponse[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as cursor for the next page; null on the last page' })
  nextCursor!: string | null;
}
