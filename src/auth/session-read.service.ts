import { Injectable } from '@nestjs/common';
import { formatLocalDateTime } from '../common/time';
import { AdminPlayerSessionResponse, AdminPlayerTakeoverResponse } from './dto/player-session.response';
import { SessionRepository } from './session.repository';

/** Read-only views of sessions for the admin API and the metrics. */
@Injectable()
export class SessionReadService {
  constructor(private readonly sessions: SessionRepository) {}

  /** GET /admin/players/{uid}: the player's latest `limit` sessions, live or not, newest first. */
  async playerSessions(uid: string, limit: number): Promise<AdminPlayerSessionResponse[]> {
    const now = Date.now();
    const rows = await this.sessions.listPlayerSessions(uid, limit);
    return rows.map((row) => ({
      sessionId: row.id,
      mode: row.mode,
      proven: row.proven,
      serverID: row.server_id,
      serverName: row.server_name,
      live: row.logged_out_at === null && row.server_session_ended_at === null && row.token_expires_at.getTime() > now,
      createdAt: formatLocalDateTime(row.created_at),
      renewedAt: formatLocalDateTime(row.renewed_at),
      tokenExpiresAt: formatLocalDateTime(row.token_expires_at),
      loggedOutAt: row.logged_out_at ? formatLocalDateTime(row.logged_out_at) : null,
      logoutReason: row.logout_reason,
    }));
  }

  /** GET /admin/players/{uid}: the player's latest `limit` takeovers, newest first. */
  async playerTakeovers(uid: string, limit: number): Promise<AdminPlayerTakeoverResponse[]> {
    const rows = await this.sessions.listPlayerTakeovers(uid, limit);
    return rows.map((row) => ({
      takenAt: formatLocalDateTime(row.taken_at),
      proof: row.proof,
      fromServerID: row.from_server_id,
      fromServerName: row.from_server_name,
      toServerID: row.to_server_id,
      toServerName: row.to_server_name,
    }));
  }

  /** How many server and player sessions are live now (the rules of resolveServerToken / resolvePlayerToken). */
  countLiveSessions(): Promise<{ servers: number; players: number }> {
    return this.sessions.countLiveSessions(new Date());
  }
}
