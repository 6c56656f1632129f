import { ApiProperty } from '@nestjs/swagger';

/** One login of a player, for the admin profile (no token or hash). */
export class AdminPlayerSessionResponse {
  @ApiProperty({ type: String, format: 'uuid' })
  sessionId!: string;

  @ApiProperty({ type: String, enum: ['ONLINE', 'TOKEN', 'OFFLINE_REFRESH'] })
  mode!: string;

  @ApiProperty({
    type: Boolean,
    description:
      'Opened with proof of ownership (a Net Token, or a resume token issued to a proven session). A live session without it gives way to a login with proof through another server',
  })
  proven!: boolean;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'The game server the session is bound to (null if it was removed)',
    example: 1,
  })
  serverID!: number | null;

  @ApiProperty({ type: String, nullable: true, example: 'lobby-1' })
  serverName!: string | null;

  @ApiProperty({ type: Boolean, description: 'Live: not logged out, token not expired, its server session open' })
  live!: boolean;

  @ApiProperty({ type: String, description: 'Login time (local date-time)', example: '2026-03-20T18:04:11' })
  createdAt!: string;

  @ApiProperty({
    type: String,
    description: 'Last sign of liveness: login, resume_session or options sync',
    example: '2026-03-20T18:10:00',
  })
  renewedAt!: string;

  @ApiProperty({ type: String, example: '2026-03-20T19:04:11' })
  tokenExpiresAt!: string;

  @ApiProperty({ type: String, nullable: true, example: null })
  loggedOutAt!: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    enum: ['logout', 'server_session_ended', 'banned', 'expired', 'handover', 'takeover'],
    example: null,
  })
  logoutReason!: string | null;
}

/** A session without proof that a login with proof took over (admin profile). */
export class AdminPlayerTakeoverResponse {
  @ApiProperty({ type: String, description: 'When (local date-time)', example: '2026-03-20T18:04:11' })
  takenAt!: string;

  @ApiProperty({ type: String, enum: ['TOKEN', 'OFFLINE_REFRESH'], description: "The login's proof" })
  proof!: string;

  @ApiProperty({ type: 'integer', description: 'The server that held the session', example: 7 })
  fromServerID!: number;

  @ApiProperty({ type: String, nullable: true, example: 'lobby-2' })
  fromServerName!: string | null;

  @ApiProperty({ type: 'integer', description: 'The server the login came through', example: 1 })
  toServerID!: number;

  @ApiProperty({ type: String, nullable: true, example: 'lobby-1' })
  toServerName!: string | null;
}
