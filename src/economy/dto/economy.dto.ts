import { IsInt, Max, Min } from 'class-validator';
import { PlayerCredentialsDto } from '../../common/validation/player-credentials.dto';

/** The largest balance: a "long" that a JSON number still carries exactly (2^53 - 1). */
export const MAX_WATT_HOUR = Number.MAX_SAFE_INTEGER;

/** POST /player/economy: the complete new balance, not a delta. */
export class SyncEconomyDto extends PlayerCredentialsDto {
  @IsInt({ message: 'wattHour must be an integer' })
  @Min(0, { message: 'wattHour must not be below 0' })
  @Max(MAX_WATT_HOUR, { message: `wattHour must not be above ${MAX_WATT_HOUR}` })
  wattHour!: number;
}

export class EconomyResponse {
  uid!: number;
  wattHour!: number;
}

/** interface.md "Ranking entry". */
export class RankingEntryResponse {
  rank!: number;
  uid!: number;
  username!: string;
  displayName!: string;
  wattHour!: number;
}

export class BalanceChangeResponse {
  id!: number;
  /** Null for the first synchronised balance. */
  previousWattHour!: number | null;
  wattHour!: number;
  /** The game server that sent it (null if that server was removed). */
  serverID!: number | null;
  /** ISO local date-time. */
  time!: string;
}

/** GET /admin/players/{uid}/economy. */
export class AdminEconomyResponse {
  uid!: number;
  /** Null while the player never synced a balance. */
  wattHour!: number | null;
  updatedAt!: string | null;
  /** Newest first. */
  history!: BalanceChangeResponse[];
  /** Pass as `before` for the next (older) page; null on the last page. */
  nextBefore!: number | null;
}
