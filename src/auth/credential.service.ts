import { Inject, Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import { EntityManager } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { NotFoundError, UnauthorizedError } from '../common/errors/app-error';
import { isForeignKeyViolation } from '../database/pg-errors';
import { CredentialRepository } from './credential.repository';
import { TokenService } from './token.service';

export interface IssuedExpiringToken {
  token: string;
  expiresIn: number;
}

/** Long-lived credentials: the admin token, server bootstrap tokens, player Net Tokens and resume tokens. */
@Injectable()
export class CredentialService {
  private readonly adminTokenHash: Buffer | null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly tokens: TokenService,
    private readonly credentials: CredentialRepository,
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

  /** SHA-256 of a presented resume token (a statement looks it up: PlayerRepository.loginInOneRoundTrip). */
  resumeTokenHash(token: string): string {
    return this.tokens.hash(token);
  }

  /** A new resume token and its expiry, for a statement that stores it only when the player has continueEnabled on. */
  newResumeToken(now: Date): { token: string; hash: string; expiresAt: Date; expiresIn: number } {
    const { token, hash } = this.tokens.issue();
    const ttl = this.config.resumeTokenTtlSeconds;
    return { token, hash, expiresAt: new Date(now.getTime() + ttl * 1000), expiresIn: ttl };
  }

  /**
   * Issues the player's one live resume token (the previous one stops working, decisions.md §4,
   * whatever proof it carried). `proven`: the session it is issued to was opened with proof of
   * ownership, so a login with it proves too (docs/decisions.md "Squatting").
   */
  async issueResumeToken(uid: string, proven: boolean, manager: EntityManager): Promise<IssuedExpiringToken> {
    const { token, hash } = this.tokens.issue();
    const ttl = this.config.resumeTokenTtlSeconds;
    await this.credentials.putResumeTokenHash(
      uid,
      { hash, expiresAt: new Date(Date.now() + ttl * 1000), proven },
      manager,
    );
    return { token, expiresIn: ttl };
  }

  /** Whether an OFFLINE_REFRESH login with this resume token (its hash) proves ownership. */
  /** The player's resume token of this hash, still valid (null: rotated, revoked or expired), and whether it is proven. */
  currentResumeToken(tokenHash: string, uid: string, manager: EntityManager): Promise<{ proven: boolean } | null> {
    return this.credentials.currentResumeToken(tokenHash, uid, manager);
  }

  revokeResumeToken(uid: string, manager: EntityManager): Promise<void> {
    return this.credentials.deleteResumeToken(uid, manager);
  }
}
