import { ApiProperty } from '@nestjs/swagger';

/** How many closed days a history answer covers. */
export const HISTORY_DAYS = 90;

export class RatingHistoryDay {
  @ApiProperty({ example: '2026-11-27', description: "The day, in the service's time zone (YYYY-MM-DD)" })
  date!: string;

  @ApiProperty({ example: 12.3456, description: 'ATP when the day was taken (4 decimals)' })
  atp!: number;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: 42,
    description: 'Site rank when the day was taken; null while the player was under an active ban',
  })
  siteRank!: number | null;

  @ApiProperty({ type: 'integer', example: 7, description: 'Counted plays received that day' })
  plays!: number;
}

export class RatingHistoryResponse {
  @ApiProperty({ type: 'integer', example: 1001 })
  uid!: number;

  @ApiProperty({
    type: [RatingHistoryDay],
    description: `The days of the last ${HISTORY_DAYS} closed days on which the player had a counted play, oldest first`,
  })
  days!: RatingHistoryDay[];
}
