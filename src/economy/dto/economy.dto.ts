import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { PlayerCredentialsDto } from '../../common/validation/player-credentials.dto';
import { NullAsAbsent, PluginBody } from '../../common/validation/plugin-body';

/** The largest balance: a "long" that a JSON number still carries exactly (2^53 - 1). */
export const MAX_WATT_HOUR = Number.MAX_SAFE_INTEGER;

/** POST /player/economy: the complete new balance, not a delta. */
@PluginBody()
export class SyncEconomyDto extends PlayerCredentialsDto {
  @ApiProperty({
    type: 'integer',
    format: 'int64',
    minimum: 0,
    maximum: MAX_WATT_HOUR,
    description: 'The complete new balance (KWh), not a delta; stored as sent',
    example: 12500,
  })
  @IsInt({ message: 'wattHour must be an integer' })
  @Min(0, { message: 'wattHour must not be below 0' })
  @Max(MAX_WATT_HOUR, { message: `wattHour must not be above ${MAX_WATT_HOUR}` })
  wattHour!: number;

  @ApiPropertyOptional({
    type: 'integer',
    format: 'int64',
    minimum: 0,
    maximum: MAX_WATT_HOUR,
    nullable: true,
    description:
      'Optional compare-and-set: the balance the plugin last saw. When given and different from the stored balance (0 when none was ' +
      'ever stored), the answer is 409 CONFLICT with the stored `wattHour` and nothing changes. Absent or null: the overwrite.',
    example: 12000,
  })
  @NullAsAbsent()
  @IsOptional()
  @IsInt({ message: 'expectedWattHour must be an integer' })
  @Min(0, { message: 'expectedWattHour must not be below 0' })
  @Max(MAX_WATT_HOUR, { message: `expectedWattHour must not be above ${MAX_WATT_HOUR}` })
  expectedWattHour?: number;
}

export class EconomyResponse {
  @ApiProperty({ type: 'integer', format: 'int64', example: 1001 })
  uid!: number;

  @ApiProperty({ type: 'integer', format: 'int64', description: 'The stored balance', example: 12500 })
  wattHour!: number;
}

/** interface.md "Ranking entry". */
export class RankingEntryResponse {
  @ApiProperty({ type: 'integer', description: 'Position: wattHour descending, then uid ascending', example: 1 })
  rank!: number;

  @ApiProperty({ type: 'integer', format: 'int64', description: 'Platform player id', example: 1001 })
  uid!: number;

  @ApiProperty({ type: String, description: 'Stored account name', example: 'Notch' })
  username!: string;

  @ApiProperty({ type: String, description: 'Display name; equals username when empty', example: 'Notch' })
  displayName!: string;

  @ApiProperty({ type: 'integer', format: 'int64', description: 'Current energy balance (KWh)', example: 12500 })
  wattHour!: number;
}

export class BalanceChangeResponse {
  @ApiProperty({
    type: 'integer',
    format: 'int64',
    description: 'Id of the change; pass as `before` to page',
    example: 31,
  })
  id!: number;

  /** Null for the first synchronised balance. */
  @ApiProperty({
    type: 'integer',
    format: 'int64',
    nullable: true,
    description: 'The balance it replaced; null for the first sync',
    example: 12000,
  })
  previousWattHour!: number | null;

  @ApiProperty({ type: 'integer', format: 'int64', example: 12500 })
  wattHour!: number;

  /** The game server that sent it (null if that server was removed). */
  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'The game server that sent it; null when that server was removed',
    example: 1,
  })
  serverID!: number | null;

  /** ISO local date-time. */
  @ApiProperty({ type: String, description: 'Local date-time of the sync', example: '2026-03-20T18:04:11' })
  time!: string;
}

/** GET /admin/players/{uid}/economy. */
export class AdminEconomyResponse {
  @ApiProperty({ type: 'integer', format: 'int64', example: 1001 })
  uid!: number;

  /** Null while the player never synced a balance. */
  @ApiProperty({
    type: 'integer',
    format: 'int64',
    nullable: true,
    description: 'null while the player never synced a balance',
    example: 12500,
  })
  wattHour!: number | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'Local date-time of the last change of the balance (a sync of the stored value changes nothing); null without one',
    example: '2026-03-20T18:04:11',
  })
  updatedAt!: string | null;

  /** Newest first. */
  @ApiProperty({ type: [BalanceChangeResponse], description: 'Newest first, at most `limit`' })
  history!: BalanceChangeResponse[];

  /** Pass as `before` for the next (older) page; null on the last page. */
  @ApiProperty({
    type: 'integer',
    format: 'int64',
    nullable: true,
    description: 'Pass as `before` for the next (older) page; null on the last page',
    example: 7,
  })
  nextBefore!: number | null;
}
