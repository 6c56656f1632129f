import { ApiProperty } from '@nestjs/swagger';
import { BooleanFilter, ListQueryDto } from '../../common/pagination/list-query';

/** GET /admin/servers. */
export class AdminServersQueryDto extends ListQueryDto {
  @BooleanFilter('Only servers online (true) or offline (false)')
  online?: boolean;
}

export class RealtimeConnectionSummary {
  @ApiProperty({ type: String, description: 'The service instance holding the WebSocket', example: 'b7e1c0d2' })
  instanceId!: string;

  @ApiProperty({ type: String, description: 'Local date-time', example: '2026-03-20T18:04:11' })
  connectedAt!: string;
}

/** Signs of a server claiming players it does not have, over the last 24 hours (docs/decisions.md "Server switching"). */
export class SessionConflictCounts {
  @ApiProperty({
    type: 'integer',
    description: 'Its sessions opened without proof (ONLINE) that a login with proof through another server took over',
    example: 0,
  })
  takenOver!: number;

  @ApiProperty({
    type: 'integer',
    description: 'Its ONLINE logins answered 409 because another server held the player',
    example: 0,
  })
  onlineRefused!: number;

  @ApiProperty({
    type: 'integer',
    description: 'Logins through other servers answered 409 because it held the player in a session without proof',
    example: 0,
  })
  keptOut!: number;
}

export class AdminServerResponse {
  @ApiProperty({ type: 'integer', example: 1 })
  serverID!: number;

  @ApiProperty({ type: String, example: 'lobby-1' })
  serverName!: string;

  @ApiProperty({ type: String, example: 'DE' })
  country!: string;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The registered public IP; null: the login address is used',
    example: null,
  })
  ip!: string | null;

  @ApiProperty({ type: Boolean, description: 'Has a live server session (open, token not expired)' })
  online!: boolean;

  @ApiProperty({ type: 'integer', description: 'Live player sessions under its open server session', example: 12 })
  playersOnline!: number;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'Plugin version of the latest login; null without one',
    example: 5,
  })
  pluginVersion!: number | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Source address of the latest login',
    example: '203.0.113.7',
  })
  address!: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Local date-time of the latest login; null: never logged in',
    example: '2026-03-20T18:04:11',
  })
  lastLogin!: string | null;

  @ApiProperty({
    type: RealtimeConnectionSummary,
    nullable: true,
    description: 'Its open WebSocket (seen in the last 90 s); null when none',
  })
  realtime!: RealtimeConnectionSummary | null;

  @ApiProperty({
    type: SessionConflictCounts,
    description:
      'Player-session conflicts with other servers in the last 24 hours; high takenOver or keptOut: the server holds players it does not have',
  })
  sessionConflicts24h!: SessionConflictCounts;

  @ApiProperty({ type: String, description: 'Registration time (local date-time)', example: '2026-03-01T10:00:00' })
  createdAt!: string;
}

export class AdminServerPage {
  @ApiProperty({ type: [AdminServerResponse], description: 'By serverID ascending' })
  items!: AdminServerResponse[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as cursor for the next page; null on the last page' })
  nextCursor!: string | null;
}

/** 200 of POST /admin/servers/{serverID}/logout. */
export class AdminServerLogoutResponse {
  @ApiProperty({ type: 'integer', example: 7 })
  serverID!: number;

  @ApiProperty({
    type: 'integer',
    description: 'Open sessions ended: 1 when the server was logged in, 0 when it was not (nothing to do)',
    example: 1,
  })
  endedSessions!: number;
}
