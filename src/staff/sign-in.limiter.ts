import { Inject, Injectable } from '@nestjs/common';
import { AdminAuthLimiter } from '../common/throttle/admin-auth.limiter';
import { LoginLockout } from '../common/throttle/login-lockout';
import { APP_CONFIG, AppConfig } from '../config/app-config';

/**
 * Whose wrong passwords count against what (docs/decisions.md "Staff accounts"):
 * - `account`: the account named, from browsers it has not signed in on before;
 * - `device`: the account named, from one browser that holds its device cookie.
 */
export type SignInTarget =
  { kind: 'account'; accountId: number } | { kind: 'device'; accountId: number; device: string };

/**
 * Failed sign-ins. Per source address (the `sign-in` realm of AdminAuthLimiter: its numbers and
 * lock-out, a count apart from wrong tokens), and per target: THROTTLE_SIGN_IN_ACCOUNT_MAX_FAILURES
 * in a row lock that target out for THROTTLE_ADMIN_AUTH_LOCKOUT_SECONDS, the right password
 * included. A guesser naming an account reaches only the `account` target, so the browsers its
 * owner signed in on before (`device` targets) are never locked out by someone else. Counted in
 * Redis when set (LoginLockout), so every instance sees the same counts.
 */
@Injectable()
export class SignInLimiter {
  constructor(
    private readonly addresses: AdminAuthLimiter,
    private readonly lockout: LoginLockout,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** 429 RATE_LIMITED with Retry-After while the address is locked out of sign-in. */
  assertAddressOpen(address: string | null): Promise<void> {
    return this.addresses.assertOpen('sign-in', address);
  }

  /** 429 RATE_LIMITED with Retry-After while the target is locked out. */
  assertTargetOpen(target: SignInTarget): Promise<void> {
    return this.lockout.assertOpen(keyOf(target));
  }

  /** A wrong password (or an unknown name: `target` null) from the address. */
  async failed(address: string | null, target: SignInTarget | null): Promise<void> {
    await this.addresses.failed('sign-in', address);
    if (target !== null)
      await this.lockout.recordFailureUnder(
        keyOf(target),
        this.config.throttleSignInAccountMaxFailures,
        this.config.throttleAdminAuthLockoutSeconds,
      );
  }

  /**
   * The right password: the target's failures in a row start again. The address's do not: a staff
   * member's own sign-ins must not reset the count of their guesses at another account.
   */
  succeeded(target: SignInTarget): Promise<void> {
    return this.lockout.recordSuccess(keyOf(target));
  }
}

function keyOf(target: SignInTarget): string {
  return target.kind === 'account'
    ? `sign-in:account:${target.accountId}`
    : `sign-in:device:${target.accountId}:${target.device}`;
}
