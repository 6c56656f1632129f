import { Inject, Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import { EntityManager } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { NotFoundError, UnauthorizedError } from '../common/errors/app-error';
import { isForeignKeyViolation } from '../database/pg-errors';
import { EVENT_BUS, EventBus } from '../common/events/events';
import { LivePlayerSession, PlayerSessionContext, ServerSessionContext, UploadSessionClock, UploadSessionRow } from './auth.types';
import { CredentialRepository } from './credential.repository';
import { PlayerLoginMode, PlayerLogoutReason } from './entities/player-session.entity';
import { ServerSessionEndReason } from './entities/server-session.entity';
import { ServerSessionCache } from './server-session.cache';
import { SessionRepository } from './session.repository';
import { TokenService } from './token.service';
import { AdminPlayerSessionResponse } from './dto/player-session.response';
import { formatLocalDateTime } from '../common/time';

export interface OpenedServerSession {
  sessionId: string;
  accessToken: string;
  expiresIn: number;
}

export interface IssuedExpiringToken {
  token: string;
  expiresIn: number;
}

export interface ServerSessionMeta {
  pluginVersion: number;
  pluginSha: string;
  clientIp: string | null;
}

/** Issues and verifies every credential and session token; ends sessions. */
@Injectable()
export class AuthService {
  private readonly adminTokenHash: Buffer | null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(EVENT_BUS) private readonly events: EventBus,
    private readonly tokens: TokenService,
    private readonly credentials: CredentialRepository,
    private readonly sessions: SessionRepository,
    private readonly sessionCache: ServerSessionCache,
  ) {
    this.adminTokenHash = config.adminToken === null ? null : createHash('sha256').update(config.adminToken).digest();
  }

  get adminApiEnabled(): boolean {
    return this.adminTokenHash !== null;
  }

  verifyAdminToken(token: string): boolean {
    if (this.adminTokenHash === null) return false;
    const presented = createHash('sha256').update(token).digest();
    return timingSafeEqual(presented, this.adminTokenHash);
  }

  /** SHA-256 of a presented credential, as stored and as the login limits key it. */
  credentialHash(token: string): string {
    return this.tokens.hash(token);
  }

  async resolveBootstrapToken(credentialHash: string): Promise<number> {
    const serverId = await this.credentials.findServerIdByBootstrapHash(credentialHash);
    if (serverId === null) throw new UnauthorizedError('Invalid bootstrap token');
    return serverId;
  }

  /** Issues a new bootstrap token for the server; the previous one stops working. */
  async issueBootstrapToken(serverId: number, manager?: EntityManager): Promise<string> {
    const { token, hash } = this.tokens.issue();
    try {
      await this.credentials.putBootstrapHash(serverId, hash, manager);
    } catch (error) {
      if (isForeignKeyViolation(error)) throw new NotFoundError(`No server with serverID ${serverId}`);
      throw error;
    }
    return token;
  }

  /**
   * Resolves a server access token. With `allowGrace` (refresh only) a token that expired at
   * most SERVER_TOKEN_REFRESH_GRACE_SECONDS ago is accepted while its session is live. Live
   * sessions are memoised per instance for a second (ServerSessionCache says what that may miss).
   */
  async resolveServerToken(token: string, allowGrace = false): Promise<ServerSessionContext> {
    const tokenHash = this.tokens.hash(token);
    let session = this.sessionCache.get(tokenHash);
    if (!session) {
      const ticket = this.sessionCache.ticket();
      session = await this.sessions.findServerSessionByTokenHash(tokenHash);
      if (session) this.sessionCache.remember(tokenHash, session, ticket);
    }
    if (!session || session.endedAt !== null) throw new UnauthorizedError('Invalid or expired server access token');
    const graceMs = allowGrace ? this.config.serverTokenRefreshGraceSeconds * 1000 : 0;
    if (session.tokenExpiresAt.getTime() + graceMs <= Date.now()) {
      throw new UnauthorizedError('Invalid or expired server access token');
    }
    return { sessionId: session.id, serverId: session.serverId, tokenExpiresAt: session.tokenExpiresAt, tokenHash };
  }

  /**
   * Opens a session for the server inside the caller's transaction, ending the open one
   * (decisions.md §3). Returns the ids of the sessions it ended so the caller can announce
   * them after commit.
   */
  async openServerSession(
    serverId: number,
    meta: ServerSessionMeta,
    manager: EntityManager,
  ): Promise<OpenedServerSession & { replacedSessionIds: string[] }> {
    if (!(await this.credentials.lockServer(serverId, manager))) {
      throw new UnauthorizedError('Invalid bootstrap token');
    }
    const replacedSessionIds = await this.sessions.endOpenServerSessions(serverId, 'replaced', manager);
    await this.sessions.logoutPlayersOfServerSessions(replacedSessionIds, manager);
    const { token, hash } = this.tokens.issue();
    const session = await this.sessions.createServerSession(
      { serverId, tokenHash: hash, tokenExpiresAt: this.expiry(), ...meta },
      manager,
    );
    return { sessionId: session.id, accessToken: token, expiresIn: this.config.serverTokenTtlSeconds, replacedSessionIds };
  }

  async refreshServerSession(session: ServerSessionContext): Promise<{ accessToken: string; expiresIn: number }> {
    const { token, hash } = this.tokens.issue();
    const rotated = await this.sessions.rotateServerToken(session.sessionId, session.tokenHash, hash, this.expiry());
    this.sessionCache.forgetToken(session.tokenHash);
    if (!rotated) throw new UnauthorizedError('Invalid or expired server access token');
    return { accessToken: token, expiresIn: this.config.serverTokenTtlSeconds };
  }

  /** Ends one session (server logout) and logs out its players, inside the caller's transaction. */
  async endServerSession(session: ServerSessionContext, reason: ServerSessionEndReason, manager: EntityManager): Promise<boolean> {
    const ended = await this.sessions.endServerSession(session.sessionId, reason, manager);
    if (ended) await this.sessions.logoutPlayersOfServerSessions([session.sessionId], manager);
    return ended;
  }

  /** Ends the server's open session (an admin's logout) and logs out its players, inside the caller's transaction; the ids it ended. */
  async endOpenServerSessions(serverId: number, reason: ServerSessionEndReason, manager: EntityManager): Promise<string[]> {
    const ended = await this.sessions.endOpenServerSessions(serverId, reason, manager);
    await this.sessions.logoutPlayersOfServerSessions(ended, manager);
    return ended;
  }

  /** Tells the realtime layer (every instance) that these sessions are over. Call after commit. */
  async announceEndedSessions(serverId: number, sessionIds: string[], reason: ServerSessionEndReason): Promise<void> {
    if (sessionIds.length === 0) return;
    // This instance forgets them now; the others when the event arrives.
    this.sessionCache.forgetSessions(sessionIds);
    await this.events.publish({ type: 'server_session.ended', serverId, sessionIds, reason });
  }

  /** Issues a new Net Token for the player; the previous one stops working. */
  async issueNetToken(uid: string): Promise<string> {
    const { token, hash } = this.tokens.issue();
    try {
      await this.credentials.putNetTokenHash(uid, hash);
    } catch (error) {
      if (isForeignKeyViolation(error)) throw new NotFoundError(`No player with uid ${uid}`);
      throw error;
    }
    return token;
  }

  findUidByNetToken(token: string): Promise<string | null> {
    return this.credentials.findUidByNetTokenHash(this.tokens.hash(token));
  }

  /** The uid owning an unexpired resume token, or null. */
  async findUidByResumeToken(token: string): Promise<string | null> {
    const row = await this.credentials.findResumeTokenByHash(this.tokens.hash(token));
    if (!row || row.expiresAt.getTime() <= Date.now()) return null;
    return row.uid;
  }

  /** Issues the player's one live resume token (the previous one stops working). */
  async issueResumeToken(uid: string, manager: EntityManager): Promise<IssuedExpiringToken> {
    const { token, hash } = this.tokens.issue();
    const ttl = this.config.resumeTokenTtlSeconds;
    await this.credentials.putResumeTokenHash(uid, hash, new Date(Date.now() + ttl * 1000), manager);
    return { token, expiresIn: ttl };
  }

  revokeResumeToken(uid: string, manager: EntityManager): Promise<void> {
    return this.credentials.deleteResumeToken(uid, manager);
  }

  /**
   * The player's session that is neither logged out nor expired, with the game server it is bound
   * to; null when there is none. An open but expired session is closed on the way (reason
   * `expired`) so a new one can be opened. Call with the player row locked.
   */
  async livePlayerSession(uid: string, manager: EntityManager): Promise<LivePlayerSession | null> {
    const open = await this.sessions.findOpenPlayerSessionWithServer(uid, manager);
    if (!open) return null;
    if (open.session.tokenExpiresAt.getTime() > Date.now()) {
      return { sessionId: open.session.id, serverSessionId: open.session.serverSessionId, serverId: open.serverId };
    }
    await this.sessions.logoutPlayerSession(open.session.id, 'expired', manager);
    return null;
  }

  /** Ends a live player session inside the caller's transaction (a handover to another server). */
  async endPlayerSession(sessionId: string, reason: PlayerLogoutReason, manager: EntityManager): Promise<void> {
    await this.sessions.logoutPlayerSession(sessionId, reason, manager);
  }

  /** Opens a player session bound to the server session. Call when livePlayerSession() found none (or it was ended). */
  async openPlayerSession(uid: string, serverSessionId: string, mode: PlayerLoginMode, manager: EntityManager): Promise<IssuedExpiringToken> {
    const { token, hash } = this.tokens.issue();
    const ttl = this.config.playerTokenTtlSeconds;
    await this.sessions.createPlayerSession({ uid, serverSessionId, tokenHash: hash, tokenExpiresAt: new Date(Date.now() + ttl * 1000), mode }, manager);
    return { token, expiresIn: ttl };
  }

  /**
   * Resolves a player access token to its live session (401 when unknown, logged out or expired).
   * Whether it must belong to the calling server session is the caller's rule (401 or 403).
   */
  async resolvePlayerToken(token: string): Promise<PlayerSessionContext> {
    const session = await this.sessions.findPlayerSessionByTokenHash(this.tokens.hash(token));
    if (!session || session.loggedOutAt !== null || session.tokenExpiresAt.getTime() <= Date.now()) {
      throw new UnauthorizedError('Invalid or expired player access token');
    }
    return { sessionId: session.id, uid: session.uid, serverSessionId: session.serverSessionId, tokenExpiresAt: session.tokenExpiresAt };
  }

  /**
   * The live session of a player token that belongs to `uid` and to the calling server session;
   * 401 otherwise (interface.md: collections and economy sync).
   */
  async resolveBoundPlayerToken(token: string, uid: string, server: ServerSessionContext): Promise<PlayerSessionContext> {
    const session = await this.resolvePlayerToken(token);
    if (session.uid !== uid) throw new UnauthorizedError('The access token does not belong to this uid');
    if (session.serverSessionId !== server.sessionId) throw new UnauthorizedError('The player session belongs to another server session');
    return session;
  }

  /** The stored form of a player access token, for lookups folded into another module's statement. */
  playerTokenHash(token: string): string {
    return this.tokens.hash(token);
  }

  /**
   * The instant an upload is judged at: now, and the oldest renewal that still counts as a live
   * player (two resync intervals back). Taken once and given to both the upload statement and
   * checkUploadSession, so the two judge the same instant.
   */
  uploadSessionClock(): UploadSessionClock {
    const now = Date.now();
    return { now: new Date(now), liveSince: new Date(now - 2 * this.config.playerResyncIntervalSeconds * 1000) };
  }

  /**
   * The player session an upload runs under (interface.md POST /player/upload), judged from the
   * session row its token hash found (null: none). The upload reads that row inside its own first
   * statement, saving a round trip; the rule stays here. The player token must belong to `uid`. A
   * live token must be of the calling server session. An expired token is still accepted while its
   * session is a *valid online session*: the very session the token was issued for, not logged out
   * (logout, ban, the end of its server session and the player's next login all close it), bound to
   * the calling server session (live: its bearer token was just accepted), and renewed (login,
   * resume_session, options sync) within two resync intervals — a player whose plugin stopped
   * syncing is gone even if its logout was lost. 401 otherwise. The upload statement stores a
   * record only under the same conditions (uploadSessionAccepted in session.repository.ts), so a
   * refused upload stores nothing even before its rollback.
   */
  checkUploadSession(
    session: UploadSessionRow | null,
    uid: string,
    server: ServerSessionContext,
    clock: UploadSessionClock,
  ): PlayerSessionContext & { tokenExpired: boolean } {
    if (!session || session.loggedOutAt !== null) throw new UnauthorizedError('Invalid or expired player access token');
    if (session.uid !== uid) throw new UnauthorizedError('The access token does not belong to this uid');
    const tokenExpired = session.tokenExpiresAt.getTime() <= clock.now.getTime();
    if (session.serverSessionId !== server.sessionId) {
      throw new UnauthorizedError(
        tokenExpired
          ? 'The player access token has expired and the player has no online session under this server session'
          : 'The player session belongs to another server session',
      );
    }
    if (tokenExpired && session.renewedAt.getTime() <= clock.liveSince.getTime()) {
      throw new UnauthorizedError('The player access token has expired and the player session was not renewed within two resync intervals');
    }
    return { sessionId: session.id, uid: session.uid, serverSessionId: session.serverSessionId, tokenExpiresAt: session.tokenExpiresAt, tokenExpired };
  }

  /** Seconds left on a player session's token (for profile responses). */
  secondsLeft(session: PlayerSessionContext): number {
    return Math.max(0, Math.floor((session.tokenExpiresAt.getTime() - Date.now()) / 1000));
  }

  async logoutPlayerSession(session: PlayerSessionContext, reason: PlayerLogoutReason): Promise<boolean> {
    return this.sessions.logoutPlayerSession(session.sessionId, reason);
  }

  /**
   * Logs out every session of the player and revokes the resume token (ban), inside the caller's
   * transaction; returns the server sessions the player was bound to.
   */
  async revokePlayerAccess(uid: string, reason: PlayerLogoutReason, manager: EntityManager): Promise<string[]> {
    const serverSessionIds = await this.sessions.logoutPlayer(uid, reason, manager);
    await this.credentials.deleteResumeToken(uid, manager);
    return serverSessionIds;
  }

  /**
   * `resume_session` (decisions.md §7): binds the player's live session to this server session
   * and renews its token for PLAYER_TOKEN_TTL_SECONDS; returns that lifetime. 401 for a dead token
   * or one of another uid.
   */
  /** An options sync counts as a sign of the player's liveness (expired-token uploads). */
  markPlayerSessionRenewed(session: PlayerSessionContext, manager: EntityManager): Promise<void> {
    return this.sessions.markPlayerSessionRenewed(session.sessionId, manager);
  }

  async renewPlayerSession(token: string, uid: string, server: ServerSessionContext): Promise<number> {
    const session = await this.resolvePlayerToken(token);
    if (session.uid !== uid) throw new UnauthorizedError('The access token does not belong to this uid');
    const ttl = this.config.playerTokenTtlSeconds;
    const renewed = await this.sessions.renewPlayerSession(session.sessionId, server.sessionId, new Date(Date.now() + ttl * 1000));
    if (!renewed) throw new UnauthorizedError('Invalid or expired player access token');
    return ttl;
  }

  /** True when the player has a live (open, unexpired) session bound to this server session. */
  async isPlayerBoundTo(uid: string, serverSessionId: string): Promise<boolean> {
    const open = await this.sessions.findOpenPlayerSession(uid);
    return open !== null && open.serverSessionId === serverSessionId && open.tokenExpiresAt.getTime() > Date.now();
  }

  /** How many server and player sessions are live now (the rules of resolveServerToken / resolvePlayerToken). */
  /** GET /admin/players/{uid}: the player's latest `limit` sessions, live or not, newest first. */
  async playerSessions(uid: string, limit: number): Promise<AdminPlayerSessionResponse[]> {
    const now = Date.now();
    const rows = await this.sessions.listPlayerSessions(uid, limit);
    return rows.map((row) => ({
      sessionId: row.id,
      mode: row.mode,
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

  countLiveSessions(): Promise<{ servers: number; players: number }> {
    return this.sessions.countLiveSessions(new Date());
  }

  private expiry(): Date {
    return new Date(Date.now() + this.config.serverTokenTtlSeconds * 1000);
  }
}
