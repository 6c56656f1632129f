import { Inject, Injectable } from '@nestjs/common';
import { AuditService } from '../audit/audit.service';
import { ANONYMOUS_ACTOR, STAFF_NAME_PATTERN, type AdminCaller } from '../auth/auth.types';
import { permissionsOf } from '../auth/permissions';
import { csrfTokenOf } from '../auth/staff-credentials';
import { AppError, BadRequestError, UnauthorizedError } from '../common/errors/app-error';
import { formatLocalDateTime } from '../common/time';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { TransactionService } from '../database/transaction.service';
import { issueDeviceCookie, trustedDevice } from './device-cookie';
import { MeResponse, SignInDto, SignInResponse } from './dto/staff.dto';
import type { StaffAccountEntity } from './entities/staff-account.entity';
import { PasswordHasher } from './password-hasher';
import { SignInLimiter, SignInTarget } from './sign-in.limiter';
import { roleOf, serviceTimeZone } from './staff.mapper';
import { StaffRepository } from './staff.repository';
import { StaffAuthService } from './staff-auth.service';
import { newSessionSecret, secretHash } from './staff-secrets';
import { matchTotp } from './totp';

/** Live sessions kept per account: an older one ends when a newer sign-in would pass this. */
export const MAX_SESSIONS_PER_ACCOUNT = 20;

/** Where a sign-in comes from. */
export interface SignInClient {
  address: string | null;
  /** The rhythmc_device cookie, when the browser sent one. */
  deviceCookie: string | null;
  requestId: string | null;
}

/** A new session: the answer, and the cookies the controller sets. */
export interface SignedIn {
  response: SignInResponse;
  sessionSecret: string;
  /** A new device cookie for a browser this account had not signed in on; null when it had. */
  deviceCookie: string | null;
}

/**
 * Console sign-in and sign-out (docs/decisions.md "Staff accounts"). A sign-in checks the limits
 * (SignInLimiter) before the password, compares the password with scrypt (a name nobody has costs
 * the same), and writes the session and its audit row in one transaction; a failed one writes an
 * audit row naming the account it tried (never the password or an unknown name).
 */
@Injectable()
export class StaffSessionService {
  constructor(
    private readonly staff: StaffRepository,
    private readonly auth: StaffAuthService,
    private readonly hasher: PasswordHasher,
    private readonly limiter: SignInLimiter,
    private readonly audit: AuditService,
    private readonly transactions: TransactionService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async signIn(body: SignInDto, client: SignInClient): Promise<SignedIn> {
    await this.limiter.assertAddressOpen(client.address);
    const name = body.name.toLowerCase();
    const account = STAFF_NAME_PATTERN.test(name) ? await this.staff.findAccountByName(name) : null;
    const device = account === null ? null : trustedDevice(client.deviceCookie, account.id, account.deviceKey);
    const target: SignInTarget | null =
      account === null
        ? null
        : device === null
          ? { kind: 'account', accountId: account.id }
          : { kind: 'device', accountId: account.id, device };
    if (target !== null) await this.limiter.assertTargetOpen(target);

    if (!(await this.hasher.verify(body.password, account?.passwordHash ?? null)) || account === null) {
      await this.limiter.failed(client.address, target);
      await this.recordFailure(account, client, 'wrong name or password');
      throw new UnauthorizedError('Wrong name or password');
    }
    if (account.totpSecret !== null) await this.checkSecondFactor(account, body.code, client, target as SignInTarget);
    await this.limiter.succeeded(target as SignInTarget);
    if (account.disabledAt !== null) {
      await this.recordFailure(account, client, 'account disabled');
      throw new UnauthorizedError('This account is disabled');
    }
    return this.openSession(account, client, device === null);
  }

  /**
   * The authenticator code of an account with a second factor, after its password was right. No
   * code: 401 asking for one, not counted (the console asks for passwords and codes one after the
   * other). A wrong, stale or already used code counts as a failed sign-in, like a wrong password.
   */
  private async checkSecondFactor(
    account: StaffAccountEntity,
    code: string | undefined,
    client: SignInClient,
    target: SignInTarget,
  ): Promise<void> {
    if (code === undefined || code === '') throw secondFactorError('Enter the code of your authenticator app');
    const step = matchTotp(account.totpSecret as string, code, Date.now(), account.totpLastStep);
    if (step === null || !(await this.staff.useTotpStep(account.id, step))) {
      await this.limiter.failed(client.address, target);
      await this.recordFailure(account, client, 'wrong authenticator code');
      throw secondFactorError('Wrong or already used authenticator code');
    }
  }

  /** Ends the caller's console session on the service (its cookie then authorizes nothing). */
  async signOut(caller: AdminCaller): Promise<void> {
    if (caller.sessionId === null)
      throw new BadRequestError(
        'Sign-out ends a console session; a personal API token is revoked at DELETE /admin/me/tokens/{id}',
      );
    await this.staff.deleteSession(caller.sessionId);
  }

  /** Who the caller is and what it may do (GET /admin/me; the console's first call). */
  async me(caller: AdminCaller): Promise<MeResponse> {
    let session: MeResponse['session'] = null;
    const account = caller.accountId === null ? null : await this.staff.findAccount(caller.accountId);
    if (caller.sessionId !== null) {
      const created = (await this.staff.sessionCreatedAt(caller.sessionId)) ?? new Date();
      session = {
        expiresAt: formatLocalDateTime(this.auth.sessionExpiresAt(created)),
        idleTimeoutSeconds: this.config.staffSessionIdleSeconds,
      };
    }
    return {
      name: caller.name,
      accountId: caller.accountId,
      role: caller.role,
      permissions: permissionsOf(caller.role),
      credential: caller.accountId === null ? 'ADMIN_TOKEN' : caller.sessionId !== null ? 'session' : 'token',
      session,
      timeZone: serviceTimeZone(),
      secondFactor: account?.totpSecret != null,
    };
  }

  private async openSession(account: StaffAccountEntity, client: SignInClient, newDevice: boolean): Promise<SignedIn> {
    const secret = newSessionSecret();
    const now = new Date();
    const session = await this.transactions.run(async (manager) => {
      await this.staff.pruneSessionsOf(
        account.id,
        new Date(now.getTime() - this.config.staffSessionIdleSeconds * 1_000),
        new Date(now.getTime() - this.config.staffSessionMaxSeconds * 1_000),
        MAX_SESSIONS_PER_ACCOUNT - 1,
        manager,
      );
      const created = await this.staff.insertSession(
        { accountId: account.id, tokenHash: secretHash(secret), lastSeenAt: now, sourceAddress: client.address },
        manager,
      );
      await this.staff.setLastSignIn(account.id, now, manager);
      await this.audit.append(
        {
          action: 'staff.sign-in',
          target: `staff:${account.id}`,
          summary: account.totpSecret === null ? {} : { secondFactor: 'totp' },
          requestId: client.requestId,
          sourceAddress: client.address,
          credential: `session:${created.id}`,
          actor: account.name,
          actorId: account.id,
        },
        manager,
      );
      return created;
    });
    const role = roleOf(account.role);
    return {
      sessionSecret: secret,
      deviceCookie: newDevice ? issueDeviceCookie(account.id, account.deviceKey) : null,
      response: {
        name: account.name,
        accountId: account.id,
        role,
        permissions: permissionsOf(role),
        credential: 'session',
        session: {
          expiresAt: formatLocalDateTime(this.auth.sessionExpiresAt(session.createdAt)),
          idleTimeoutSeconds: this.config.staffSessionIdleSeconds,
        },
        timeZone: serviceTimeZone(),
        secondFactor: account.totpSecret !== null,
        csrfToken: csrfTokenOf(secret),
      },
    };
  }

  /** The audit row of a refused sign-in: the account it named, if any (an unknown name is left out: it may be a password typed in the wrong box). */
  private recordFailure(account: StaffAccountEntity | null, client: SignInClient, reason: string): Promise<void> {
    return this.audit.append({
      action: 'staff.sign-in-failed',
      target: account === null ? 'staff:unknown' : `staff:${account.id}`,
      summary: account === null ? { reason } : { name: account.name, reason },
      requestId: client.requestId,
      sourceAddress: client.address,
      credential: 'none',
      actor: ANONYMOUS_ACTOR,
      actorId: null,
    });
  }
}

/** 401 for a sign-in that needs (another) authenticator code: `secondFactor` tells the console to ask for it. */
function secondFactorError(message: string): AppError {
  return new AppError(401, 'UNAUTHORIZED', message, { secondFactor: 'totp' });
}
