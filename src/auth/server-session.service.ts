import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { UnauthorizedError } from '../common/errors/app-error';
import { EVENT_BUS, EventBus } from '../common/events/events';
import type { ServerSessionContext } from './auth.types';
import { CredentialRepository } from './credential.repository';
import { ServerSessionEndReason } from './entities/server-session.entity';
import { ServerSessionCache } from './server-session.cache';
import { SessionRepository } from './session.repository';
import { TokenService } from './token.service';

export interface OpenedServerSession {
  sessionId: string;
  accessToken: string;
  expiresIn: number;
}

export interface ServerSessionMeta {
  pluginVersion: number;
  pluginSha: string;
  clientIp: string | null;
}

/** Server sessions: resolve an access token, open (login), refresh, end, and announce the end. */
@Injectable()
export class ServerSessionService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(EVENT_BUS) private readonly events: EventBus,
    private readonly tokens: TokenService,
    private readonly credentials: CredentialRepository,
    private readonly sessions: SessionRepository,
    private readonly sessionCache: ServerSessionCache,
  ) {}

  /**
   * Resolves a server access token. With `allowGrace` (refresh only) a token that expired at
   * most SERVER_TOKEN_REFRESH_GRACE_SECONDS ago is accepted while its session is live. Live
   * sessions are memoised per instance for a second, and concurrent lookups of one token share a
   * query (ServerSessionCache says what that may miss).
   */
  async resolveServerToken(token: string, allowGrace = false): Promise<ServerSessionContext> {
    const tokenHash = this.tokens.hash(token);
    const session = await this.sessionCache.lookup(tokenHash, () =>
      this.sessions.findServerSessionByTokenHash(tokenHash),
    );
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
   * them after commit. `credentialHash` is the bootstrap token the guard checked: the server's
   * credential is locked only while it is still that one, so a token rotated after the guard's
   * check (and before this lock) opens nothing (401).
   */
  async openServerSession(
    serverId: number,
    credentialHash: string,
    meta: ServerSessionMeta,
    manager: EntityManager,
  ): Promise<OpenedServerSession & { replacedSessionIds: string[] }> {
    if (!(await this.credentials.lockServer(serverId, credentialHash, manager))) {
      throw new UnauthorizedError('Invalid bootstrap token');
    }
    const replacedSessionIds = await this.sessions.endOpenServerSessions(serverId, 'replaced', manager);
    await this.sessions.logoutPlayersOfServerSessions(replacedSessionIds, manager);
    const { token, hash } = this.tokens.issue();
    const session = await this.sessions.createServerSession(
      { serverId, tokenHash: hash, tokenExpiresAt: this.expiry(), ...meta },
      manager,
    );
    return {
      sessionId: session.id,
      accessToken: token,
      expiresIn: this.config.serverTokenTtlSeconds,
      replacedSessionIds,
    };
  }

  async refreshServerSession(session: ServerSessionContext): Promise<{ accessToken: string; expiresIn: number }> {
    const { token, hash } = this.tokens.issue();
    const rotated = await this.sessions.rotateServerToken(session.sessionId, session.tokenHash, hash, this.expiry());
    this.sessionCache.forgetToken(session.tokenHash);
    if (!rotated) throw new UnauthorizedError('Invalid or expired server access token');
    return { accessToken: token, expiresIn: this.config.serverTokenTtlSeconds };
  }

  /** Ends one session (server logout) and logs out its players, inside the caller's transaction. */
  async endServerSession(
    session: ServerSessionContext,
    reason: ServerSessionEndReason,
    manager: EntityManager,
  ): Promise<boolean> {
    const ended = await this.sessions.endServerSession(session.sessionId, reason, manager);
    if (ended) await this.sessions.logoutPlayersOfServerSessions([session.sessionId], manager);
    return ended;
  }

  /** Ends the server's open session (an admin's logout) and logs out its players, inside the caller's transaction; the ids it ended. */
  async endOpenServerSessions(
    serverId: number,
    reason: ServerSessionEndReason,
    manager: EntityManager,
  ): Promise<string[]> {
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

  /** Which of these sessions are over (ended or purged), with why when known: the sockets still open for them must close. */
  endedAmong(sessionIds: string[]): Promise<Array<{ id: string; reason: ServerSessionEndReason | null }>> {
    return this.sessions.findEndedServerSessions(sessionIds);
  }

  private expiry(): Date {
    return new Date(Date.now() + this.config.serverTokenTtlSeconds * 1000);
  }
}
