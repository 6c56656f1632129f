import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { UnauthorizedError } from '../common/errors/app-error';
import type {
  LivePlayerSession,
  PlayerSessionContext,
  ResolvedPlayerSession,
  ServerSessionContext,
} from './auth.types';
import { boundTokenError, boundTokenStatus } from './bound-token.rule';
import { CredentialRepository } from './credential.repository';
import type { IssuedExpiringToken } from './credential.service';
import { PlayerLoginMode, PlayerLogoutReason } from './entities/player-session.entity';
import { NewTakeover, SessionRepository } from './session.repository';
import { TokenService } from './token.service';

/** The inputs of `rhythmc_bound_player_session` (PlayerSessionService.boundTokenCheck). */
export interface BoundTokenCheck {
  tokenHash: string;
  serverSessionId: string;
  now: Date;
}

/** What a `resume_session` renewal did: renewed for `expiresIn` seconds, or found the session bound to another server. */
export type RenewalOutcome = { renewed: true; expiresIn: number } | { renewed: false; boundServerId: number };

/** Player sessions: open, resolve a player access token, renew, log out, revoke. */
/** What a resolved player token answers of its session. */
function resolvedSession(session: {
  id: string;
  uid: string;
  serverSessionId: string;
  tokenExpiresAt: Date;
  proven: boolean;
}): ResolvedPlayerSession {
  return {
    sessionId: session.id,
    uid: session.uid,
    serverSessionId: session.serverSessionId,
    tokenExpiresAt: session.tokenExpiresAt,
    proven: session.proven,
  };
}

@Injectable()
export class PlayerSessionService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly tokens: TokenService,
    private readonly credentials: CredentialRepository,
    private readonly sessions: SessionRepository,
  ) {}

  /**
   * The player's session that is neither logged out nor expired, with the game server it is bound
   * to; null when there is none. An open but expired session is closed on the way (reason
   * `expired`) so a new one can be opened. Call with the player row locked.
   */
  async livePlayerSession(uid: string, manager: EntityManager): Promise<LivePlayerSession | null> {
    const open = await this.sessions.findOpenPlayerSessionWithServer(uid, manager);
    if (!open) return null;
    if (open.session.tokenExpiresAt.getTime() > Date.now()) {
      return {
        sessionId: open.session.id,
        serverSessionId: open.session.serverSessionId,
        serverId: open.serverId,
        proven: open.session.proven,
      };
    }
    await this.sessions.logoutPlayerSession({ id: open.session.id, uid }, 'expired', manager);
    return null;
  }

  /** Ends a live player session inside the caller's transaction (a handover to another server). */
  async endPlayerSession(
    uid: string,
    sessionId: string,
    reason: PlayerLogoutReason,
    manager: EntityManager,
  ): Promise<void> {
    await this.sessions.logoutPlayerSession({ id: sessionId, uid }, reason, manager);
  }

  /**
   * Share-locks the server session for a login's transaction when it is still open (false when it
   * ended): ending it then waits for the login, and logs out the player session the login opens.
   */
  shareOpenServerSession(serverSessionId: string, manager: EntityManager): Promise<boolean> {
    return this.sessions.shareOpenServerSession(serverSessionId, manager);
  }

  /**
   * Opens a player session bound to the server session (`proven`: the login proved ownership).
   * Call when livePlayerSession() found none (or it was ended).
   */
  async openPlayerSession(
    uid: string,
    serverSessionId: string,
    login: { mode: PlayerLoginMode; proven: boolean },
    manager: EntityManager,
  ): Promise<IssuedExpiringToken & { sessionId: string }> {
    const { token, hash } = this.tokens.issue();
    const ttl = this.config.playerTokenTtlSeconds;
    const session = await this.sessions.createPlayerSession(
      {
        uid,
        serverSessionId,
        tokenHash: hash,
        tokenExpiresAt: new Date(Date.now() + ttl * 1000),
        mode: login.mode,
        proven: login.proven,
      },
      manager,
    );
    return { token, expiresIn: ttl, sessionId: session.id };
  }

  /** Records that a login with proof took over a session without it, inside the login's transaction. */
  recordTakeover(takeover: NewTakeover, manager: EntityManager): Promise<void> {
    return this.sessions.recordTakeover(takeover, manager);
  }

  /** Counts a login refused 409 because another server held the player (the admin server list shows it). */
  countConflict(counts: { onlineRefusedBy: number | null; keptOutBy: number | null }): Promise<void> {
    return this.sessions.countConflict(counts);
  }

  /**
   * A new player access token and its expiry, for a session that a single statement opens
   * (PlayerRepository.loginInOneRoundTrip); the token itself never reaches the database.
   */
  newSessionToken(now: Date): { token: string; hash: string; expiresAt: Date; expiresIn: number } {
    const { token, hash } = this.tokens.issue();
    const ttl = this.config.playerTokenTtlSeconds;
    return { token, hash, expiresAt: new Date(now.getTime() + ttl * 1000), expiresIn: ttl };
  }

  /**
   * What a statement needs to judge a player token the way resolveBoundPlayerToken does
   * (`rhythmc_bound_player_session`, sql/rhythmc_bound_player_session.sql): its hash, the
   * calling server session and this instance's clock. assertBoundTokenStatus reads the answer.
   */
  boundTokenCheck(token: string, server: ServerSessionContext): BoundTokenCheck {
    return { tokenHash: this.tokens.hash(token), serverSessionId: server.sessionId, now: new Date() };
  }

  /** Throws the 401 of a status of `rhythmc_bound_player_session` (bound-token.rule.ts); 'ok' passes. */
  assertBoundTokenStatus(status: string): void {
    const error = boundTokenError(status);
    if (error) throw error;
  }

  /**
   * Resolves a player access token to its live session (401 when unknown, logged out or expired).
   * Whether it must belong to the calling server session is the caller's rule (401 or 403).
   */
  async resolvePlayerToken(token: string): Promise<ResolvedPlayerSession> {
    const session = await this.sessions.findPlayerSessionByTokenHash(this.tokens.hash(token));
    if (!session || session.loggedOutAt !== null || session.tokenExpiresAt.getTime() <= Date.now()) {
      throw new UnauthorizedError('Invalid or expired player access token');
    }
    return resolvedSession(session);
  }

  /**
   * The live session of a player token that belongs to `uid` and to the calling server session;
   * 401 otherwise (the options sync; bound-token.rule.ts, the rule the collection and economy
   * syncs' statements run in SQL).
   */
  async resolveBoundPlayerToken(
    token: string,
    uid: string,
    server: ServerSessionContext,
  ): Promise<ResolvedPlayerSession> {
    const session = await this.sessions.findPlayerSessionByTokenHash(this.tokens.hash(token));
    const status = boundTokenStatus(session, uid, server.sessionId, Date.now());
    // No session is 'invalid_token': its error is never null here.
    if (session === null || status !== 'ok') throw boundTokenError(status) as UnauthorizedError;
    return resolvedSession(session);
  }

  /** Seconds left on a player session's token (for profile responses). */
  secondsLeft(session: PlayerSessionContext): number {
    return Math.max(0, Math.floor((session.tokenExpiresAt.getTime() - Date.now()) / 1000));
  }

  async logoutPlayerSession(session: PlayerSessionContext, reason: PlayerLogoutReason): Promise<boolean> {
    return this.sessions.logoutPlayerSession({ id: session.sessionId, uid: session.uid }, reason);
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
   * An options sync counts as a sign of the player's liveness (expired-token uploads). False when
   * the session is no longer open or no longer bound to the calling server session: a ban, a
   * takeover, a logout or a resume_session move to another server committed after the token check.
   */
  markPlayerSessionRenewed(session: PlayerSessionContext, manager: EntityManager): Promise<boolean> {
    return this.sessions.markPlayerSessionRenewed(
      { id: session.sessionId, uid: session.uid, serverSessionId: session.serverSessionId },
      manager,
    );
  }

  /**
   * `resume_session` (decisions.md §7): binds the player's live session to this server session
   * and renews its token for PLAYER_TOKEN_TTL_SECONDS. A session bound to another server is moved
   * only from `moveFrom` (the caller decided it is one network with this server); otherwise nothing
   * is written and the outcome names the holding server. 401 for a dead token or one of another uid.
   */
  async renewPlayerSession(
    token: string,
    uid: string,
    server: ServerSessionContext,
    moveFrom: number | null,
  ): Promise<RenewalOutcome> {
    const ttl = this.config.playerTokenTtlSeconds;
    const now = new Date();
    const result = await this.sessions.renewPlayerSessionByToken({
      tokenHash: this.tokens.hash(token),
      uid,
      serverSessionId: server.sessionId,
      now,
      expiresAt: new Date(now.getTime() + ttl * 1000),
      moveFrom,
    });
    // The checks of resolvePlayerToken, then the uid, then the renewal itself (the session or the server session ended meanwhile).
    if (result === null || !result.live) throw new UnauthorizedError('Invalid or expired player access token');
    if (result.uid !== uid) throw new UnauthorizedError('The access token does not belong to this uid');
    if (result.boundServerId !== null) return { renewed: false, boundServerId: result.boundServerId };
    if (!result.renewed) throw new UnauthorizedError('Invalid or expired player access token');
    return { renewed: true, expiresIn: ttl };
  }

  /** True when the player has a live (open, unexpired) session bound to this server session. */
  async isPlayerBoundTo(uid: string, serverSessionId: string): Promise<boolean> {
    const open = await this.sessions.findOpenPlayerSession(uid);
    return open !== null && open.serverSessionId === serverSessionId && open.tokenExpiresAt.getTime() > Date.now();
  }
}
