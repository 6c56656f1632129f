import { Inject, Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import { EntityManager } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { NotFoundError, UnauthorizedError } from '../common/errors/app-error';
import { isForeignKeyViolation } from '../database/pg-errors';
import { EVENT_BUS, EventBus } from '../realtime/events';
import { ServerSessionContext } from './auth.types';
import { CredentialRepository } from './credential.repository';
import { ServerSessionEndReason } from './entities/server-session.entity';
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

  async resolveBootstrapToken(token: string): Promise<number> {
    const serverId = await this.credentials.findServerIdByBootstrapHash(this.tokens.hash(token));
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
   * most SERVER_TOKEN_REFRESH_GRACE_SECONDS ago is accepted while its session is live.
   */
  async resolveServerToken(token: string, allowGrace = false): Promise<ServerSessionContext> {
    const tokenHash = this.tokens.hash(token);
    const session = await this.sessions.findServerSessionByTokenHash(tokenHash);
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
    const replacedSessionIds = await this.endSessions(serverId, 'replaced', manager);
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
    if (!rotated) throw new UnauthorizedError('Invalid or expired server access token');
    return { accessToken: token, expiresIn: this.config.serverTokenTtlSeconds };
  }

  /** Ends one session (server logout) inside the caller's transaction. */
  async endServerSession(session: ServerSessionContext, reason: ServerSessionEndReason, manager: EntityManager): Promise<boolean> {
    return this.sessions.endServerSession(session.sessionId, reason, manager);
  }

  /** Tells the realtime layer (every instance) that these sessions are over. Call after commit. */
  async announceEndedSessions(serverId: number, sessionIds: string[], reason: ServerSessionEndReason): Promise<void> {
    if (sessionIds.length === 0) return;
    await this.events.publish({ type: 'server_session.ended', serverId, sessionIds, reason });
  }

  private async endSessions(serverId: number, reason: ServerSessionEndReason, manager: EntityManager): Promise<string[]> {
    return this.sessions.endOpenServerSessions(serverId, reason, manager);
  }

  private expiry(): Date {
    return new Date(Date.now() + this.config.serverTokenTtlSeconds * 1000);
  }
}
