import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { addressBucket } from '../http/client-ip';
import { LoginLockout } from './login-lockout';

/**
 * The credentials of the operator's own routes: bearer tokens of the admin API (ADMIN_TOKEN and
 * personal API tokens), METRICS_TOKEN, and staff passwords at the console's sign-in. Each realm
 * has a count of its own.
 */
export type OperatorRealm = 'admin' | 'metrics' | 'sign-in';

/**
 * Wrong admin or metrics tokens, counted per source address and per realm
 * (THROTTLE_ADMIN_AUTH_MAX_FAILURES in a row lock that address out of that realm for
 * THROTTLE_ADMIN_AUTH_LOCKOUT_SECONDS; decisions.md "Rate limits"). While locked out, every request
 * of the realm from the address answers 429, the right token included: a lock-out that let the
 * right guess through would still tell a guesser when it was right. Other addresses are never
 * concerned. Counted in Redis when set (LoginLockout).
 */
@Injectable()
export class AdminAuthLimiter {
  constructor(
    private readonly lockout: LoginLockout,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** 429 RATE_LIMITED with Retry-After while the address is locked out of the realm. */
  assertOpen(realm: OperatorRealm, address: string | null): Promise<void> {
    return this.lockout.assertOpen(keyOf(realm, address));
  }

  /** A presented token that is not the realm's. */
  failed(realm: OperatorRealm, address: string | null): Promise<void> {
    return this.lockout.recordFailureUnder(
      keyOf(realm, address),
      this.config.throttleAdminAuthMaxFailures,
      this.config.throttleAdminAuthLockoutSeconds,
    );
  }

  /** The right token: the failures in a row start again from zero. */
  succeeded(realm: OperatorRealm, address: string | null): Promise<void> {
    return this.lockout.recordSuccess(keyOf(realm, address));
  }
}

function keyOf(realm: OperatorRealm, address: string | null): string {
  return `${realm}-auth:address:${addressBucket(address)}`;
}
