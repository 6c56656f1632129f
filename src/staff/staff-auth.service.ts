import { Inject, Injectable } from '@nestjs/common';
import type { AdminCaller } from '../auth/auth.types';
import { lowerRole } from '../auth/permissions';
import type { StaffCredentials } from '../auth/staff-credentials';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { roleOf } from './staff.mapper';
import { StaffRepository } from './staff.repository';
import { secretHash } from './staff-secrets';

/** Last-seen and last-used times move at most this often: a write per minute, not per request. */
export const TOUCH_INTERVAL_MS = 60_000;

/**
 * Who a console session or a personal API token is, for the AuthGuard (the StaffCredentials port).
 * One indexed read per request, joined with the account: a disabled or deleted account, a revoked
 * token, an ended session and a changed role count from the next request on, on every instance.
 */
@Injectable()
export class StaffAuthService implements StaffCredentials {
  constructor(
    private readonly staff: StaffRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async resolveSession(secret: string): Promise<AdminCaller | null> {
    const session = await this.staff.findSession(secretHash(secret));
    if (session === null || session.disabledAt !== null) return null;
    const now = Date.now();
    if (this.sessionEnded(session.createdAt, session.lastSeenAt, now)) {
      await this.staff.deleteSession(session.sessionId);
      return null;
    }
    if (now - session.lastSeenAt.getTime() >= TOUCH_INTERVAL_MS)
      await this.staff.touchSession(session.sessionId, new Date(now));
    return {
      accountId: session.accountId,
      name: session.name,
      role: roleOf(session.role),
      credentialId: `session:${session.sessionId}`,
      sessionId: session.sessionId,
    };
  }

  async resolveToken(token: string): Promise<AdminCaller | null> {
    const found = await this.staff.findToken(secretHash(token));
    if (found === null || found.disabledAt !== null) return null;
    const now = Date.now();
    if (found.lastUsedAt === null || now - found.lastUsedAt.getTime() >= TOUCH_INTERVAL_MS)
      await this.staff.touchToken(found.tokenId, new Date(now));
    return {
      accountId: found.accountId,
      name: found.name,
      role: lowerRole(roleOf(found.tokenRole), roleOf(found.accountRole)),
      credentialId: `token:${found.tokenId}`,
      sessionId: null,
    };
  }

  /** Idle for STAFF_SESSION_IDLE_SECONDS, or STAFF_SESSION_MAX_SECONDS since the sign-in. */
  sessionEnded(createdAt: Date, lastSeenAt: Date, now: number): boolean {
    return (
      now >= createdAt.getTime() + this.config.staffSessionMaxSeconds * 1_000 ||
      now >= lastSeenAt.getTime() + this.config.staffSessionIdleSeconds * 1_000
    );
  }

  /** When a session signed in at `createdAt` ends whatever happens. */
  sessionExpiresAt(createdAt: Date): Date {
    return new Date(createdAt.getTime() + this.config.staffSessionMaxSeconds * 1_000);
  }
}
