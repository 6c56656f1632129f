import { ApiProperty } from '@nestjs/swagger';
import { AdminPlayerSessionResponse, AdminPlayerTakeoverResponse } from '../../auth/dto/player-session.response';
import { AdminEconomyResponse } from '../../economy/dto/economy.dto';
import { AdminPlayerAccount } from '../../player/dto/admin-player-read.dto';

export class PlayerBestResponse {
  @ApiProperty({ type: 'integer', example: 1201 })
  levelId!: number;

  @ApiProperty({ type: Number, description: 'Best accuracy on the chart', example: 98.52 })
  acc!: number;

  @ApiProperty({ type: Number, description: "That play's rating at the chart's current constant", example: 12.4 })
  rating!: number;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: "The player's position on the chart's board (the upload's trackRank); null while banned",
    example: 3,
  })
  trackRank!: number | null;
}

/** GET /admin/players/{uid}: everything the service holds about one player, tokens excepted. */
export class AdminPlayerProfileResponse extends AdminPlayerAccount {
  @ApiProperty({
    type: [AdminPlayerSessionResponse],
    description: 'The latest 20 sessions, newest first (live and recent)',
  })
  sessions!: AdminPlayerSessionResponse[];

  @ApiProperty({
    type: [AdminPlayerTakeoverResponse],
    description:
      'The latest 20 takeovers, newest first: sessions opened without proof (ONLINE) that a login with proof (Net Token, proven resume token) took over; the holding server was sent kick_player',
  })
  takeovers!: AdminPlayerTakeoverResponse[];

  @ApiProperty({
    type: AdminEconomyResponse,
    description: 'The balance and its latest 20 changes (GET /admin/players/{uid}/economy pages further)',
  })
  balance!: AdminEconomyResponse;

  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'ATP; null while the player has no counted play',
    example: 152.3312,
  })
  atp!: number | null;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'Position on the ATP board (the upload siteRank); null without a counted play or while banned',
    example: 17,
  })
  siteRank!: number | null;

  @ApiProperty({
    type: [PlayerBestResponse],
    description: 'The best play per chart, by rating descending, at most 200',
  })
  bests!: PlayerBestResponse[];

  @ApiProperty({ type: 'integer', description: 'How many charts the player has a best on', example: 42 })
  bestCount!: number;

  @ApiProperty({
    type: [String],
    description: 'Keys of the collections the player unlocked',
    example: ['rhythmc:title.first_clear'],
  })
  collections!: string[];
}
