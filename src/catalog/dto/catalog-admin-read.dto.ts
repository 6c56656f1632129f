import { ApiProperty } from '@nestjs/swagger';

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
