import { ApiProperty } from '@nestjs/swagger';

/** 200 of POST /player/upload (decisions.md §5). */
export class UploadResponse {
  /** The player's ATP after this upload, 4 decimals; 0 without any counted play. */
  @ApiProperty({
    type: Number,
    description:
      "The player's ATP after this upload (mean of the 30 best chart ratings), 4 decimals; 0 without a counted play",
    example: 12.3456,
  })
  atp!: number;

  /** Position by ATP desc, uid asc among unbanned players with a counted play; null without one (or while banned). */
  @ApiProperty({
    type: 'integer',
    nullable: true,
    description:
      'Position by ATP descending, then uid ascending, among unbanned players with a counted play; null without one (or while banned)',
    example: 42,
  })
  siteRank!: number | null;

  /** Position of the player's best on this chart (acc desc, first reached asc, uid asc); null without one. */
  @ApiProperty({
    type: 'integer',
    nullable: true,
    description:
      "Position of the player's best on this chart (acc descending, first reached ascending, uid ascending); null without a counted play on it",
    example: 3,
  })
  trackRank!: number | null;

  /** Rating of this play at the chart's current constant, 4 decimals; 0 for a play that does not count (pass: false). */
  @ApiProperty({
    type: Number,
    description:
      "Rating of this play at the chart's current constant, 4 decimals; 0 when it does not count (pass: false)",
    example: 15.075,
  })
  playRating!: number;

  /** Whether this play is the player's best on the chart now (decided by the service, never by isNewRecord). */
  @ApiProperty({
    type: Boolean,
    description:
      "Whether this play is now the player's best on the chart (decided by the service, never by isNewRecord)",
    example: true,
  })
  personalBest!: boolean;
}

/** 200 of POST /admin/ratings/recompute. */
export class RecomputeResponse {
  /** Players whose bests and ATP were recomputed (every player with a stored record). */
  @ApiProperty({
    type: 'integer',
    description: 'Players whose bests and ATP were recomputed (every player with a stored record)',
    example: 1500,
  })
  players!: number;

  /** Per-chart bests after the recompute. */
  @ApiProperty({ type: 'integer', description: 'Per-chart bests after the recompute', example: 42000 })
  bests!: number;

  /** Players whose ATP changed. */
  @ApiProperty({ type: 'integer', description: 'Players whose ATP changed', example: 310 })
  atpChanged!: number;

  /** Transactions (batches) it took. */
  @ApiProperty({ type: 'integer', description: 'Transactions (batches) it took', example: 3 })
  batches!: number;
}
