import { ApiProperty } from '@nestjs/swagger';
import { BigIdFilter, ListQueryDto, TextFilter } from '../../common/pagination/list-query';
import { UUID_PATTERN } from './player-login.dto';

/** GET /admin/players: filters combine (all must match). */
export class AdminPlayersQueryDto extends ListQueryDto {
  @TextFilter(/^[A-Za-z0-9_]{1,32}$/, '1-32 characters of A-Z, a-z, 0-9 and _', 'Username prefix, case-insensitive')
  username?: string;

  @TextFilter(UUID_PATTERN, 'a UUID in 8-4-4-4-12 hexadecimal form', 'Exact account UUID')
  uuid?: string;

  @BigIdFilter('Exact uid')
  uid?: string;
}

/** GET /admin/bans. */
export class AdminBansQueryDto extends ListQueryDto {
  @BigIdFilter("Only this player's")
  uid?: string;
}

export class OnlineServerResponse {
  @ApiProperty({ type: 'integer', example: 1 })
  serverID!: number;

  @ApiProperty({ type: String, example: 'lobby-1' })
  serverName!: string;
}

/** The ban in force, as the player lists show it. */
export class ActiveBanSummary {
  @ApiProperty({ type: 'integer', format: 'int64', example: 17 })
  banId!: number;

  @ApiProperty({ type: String, example: 'cheating' })
  reason!: string;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'End of the ban (local date-time); null: permanent',
    example: '2026-04-01T12:00:00',
  })
  until!: string | null;

  @ApiProperty({ type: String, description: 'When the ban was made (local date-time)', example: '2026-03-20T18:04:11' })
  createdAt!: string;
}

export class AdminPlayerSummary {
  @ApiProperty({ type: 'integer', format: 'int64', example: 1002 })
  uid!: number;

  @ApiProperty({ type: String, example: 'Steve' })
  username!: string;

  @ApiProperty({ type: String, description: 'Display name; equals username when empty', example: 'Steve' })
  displayName!: string;

  @ApiProperty({ type: String, nullable: true, example: '8667ba71-b85a-4004-af54-457a9734eed7' })
  uuid!: string | null;

  @ApiProperty({ type: 'integer', description: 'Warning level', example: 0 })
  banstate!: number;

  @ApiProperty({ type: ActiveBanSummary, nullable: true, description: 'The ban in force; null when none' })
  ban!: ActiveBanSummary | null;

  @ApiProperty({
    type: OnlineServerResponse,
    nullable: true,
    description: 'The server of the live session; null when offline',
  })
  online!: OnlineServerResponse | null;

  @ApiProperty({ type: String, description: 'Local date-time', example: '2026-03-01T10:00:00' })
  createdAt!: string;
}

export class AdminPlayerPage {
  @ApiProperty({ type: [AdminPlayerSummary], description: 'By uid ascending' })
  items!: AdminPlayerSummary[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as cursor for the next page; null on the last page' })
  nextCursor!: string | null;
}

export class AdminBanResponse {
  @ApiProperty({ type: 'integer', format: 'int64', example: 17 })
  banId!: number;

  @ApiProperty({ type: 'integer', format: 'int64', example: 1002 })
  uid!: number;

  @ApiProperty({ type: String, example: 'Steve' })
  username!: string;

  @ApiProperty({ type: String, example: 'cheating' })
  reason!: string;

  @ApiProperty({ type: String, description: 'Kick message shown in game', example: 'You are banned: cheating' })
  message!: string;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'End of the ban (local date-time); null: permanent',
    example: '2026-04-01T12:00:00',
  })
  until!: string | null;

  @ApiProperty({ type: String, description: 'Local date-time', example: '2026-03-20T18:04:11' })
  createdAt!: string;
}

export class AdminBanPage {
  @ApiProperty({ type: [AdminBanResponse], description: 'Active bans, newest first' })
  items!: AdminBanResponse[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as cursor for the next page; null on the last page' })
  nextCursor!: string | null;
}

/** A ban of the player's history. */
export class PlayerBanHistoryEntry {
  @ApiProperty({ type: 'integer', format: 'int64', example: 17 })
  banId!: number;

  @ApiProperty({ type: String, example: 'cheating' })
  reason!: string;

  @ApiProperty({ type: String, example: 'You are banned: cheating' })
  message!: string;

  @ApiProperty({ type: String, nullable: true, description: 'null: permanent', example: '2026-04-01T12:00:00' })
  until!: string | null;

  @ApiProperty({ type: String, example: '2026-03-20T18:04:11' })
  createdAt!: string;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'When it was lifted (or replaced by a new ban); null when never',
    example: null,
  })
  liftedAt!: string | null;

  @ApiProperty({ type: Boolean, description: 'In force now' })
  active!: boolean;
}

export class PlayerOptionsResponse {
  @ApiProperty({ type: Boolean })
  continueEnabled!: boolean;

  @ApiProperty({ type: 'object', nullable: true, additionalProperties: true })
  sound!: Record<string, unknown> | null;

  @ApiProperty({ type: 'object', nullable: true, additionalProperties: true })
  songSelectionState!: Record<string, unknown> | null;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'Other option keys, as sent' })
  extraOptions!: Record<string, unknown>;

  @ApiProperty({ type: String, nullable: true, description: 'Selected prefix title (collection key)' })
  prefixKey!: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'Selected suffix title (collection key)' })
  suffixKey!: string | null;
}

/** What the player module knows of one player, for the admin profile. */
export class AdminPlayerAccount {
  @ApiProperty({ type: 'integer', format: 'int64', example: 1002 })
  uid!: number;

  @ApiProperty({ type: String, example: 'Steve' })
  username!: string;

  @ApiProperty({ type: String, example: 'Steve' })
  displayName!: string;

  @ApiProperty({ type: String, nullable: true, example: '8667ba71-b85a-4004-af54-457a9734eed7' })
  uuid!: string | null;

  @ApiProperty({ type: 'integer', example: 0 })
  banstate!: number;

  @ApiProperty({ type: 'integer', description: 'Player data version of the last login', example: 3 })
  dataVersion!: number;

  @ApiProperty({ type: String, example: '2026-03-01T10:00:00' })
  createdAt!: string;

  @ApiProperty({ type: String, example: '2026-03-20T18:04:11' })
  updatedAt!: string;

  @ApiProperty({ type: PlayerOptionsResponse })
  options!: PlayerOptionsResponse;

  @ApiProperty({ type: [PlayerBanHistoryEntry], description: 'Every ban, newest first' })
  bans!: PlayerBanHistoryEntry[];
}
