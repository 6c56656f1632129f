import { Inject, Injectable } from '@nestjs/common';
import { InjectThrottlerStorage, ThrottlerStorage } from '@nestjs/throttler';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { RateLimitedError } from '../errors/app-error';
import { addressBucket } from '../http/client-ip';

/**
 * Failed server logins (missing or unknown bootstrap credential), counted per source address and
 * per presented credential in the throttler's store (Redis when set). A caller over either budget
 * gets 429 instead of 401 until the window ends. Successful logins are never refused here: the
 * credential is checked first, so a flood of bad tokens from one address (or from behind the same
 * proxy) cannot keep a valid game server out; they are limited per credential by CallerThrottlerGuard.
 */
@Injectable()
export class LoginFailureLimiter {
  constructor(
    @InjectThrottlerStorage() private readonly storage: ThrottlerStorage,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Counts one failed server login; returns the error to answer with (429 over a budget, else the given one). */
  async serverLoginFailed(address: string | null, credentialHash: string | null, failure: Error): Promise<Error> {
    const keys = [`server-login-failure:address:${addressBucket(address)}`];
    if (credentialHash !== null) keys.push(`server-login-failure:credential:${credentialHash}`);
    const limit = this.config.throttleLoginLimit;
    const ttl = this.config.throttleLoginTtlSeconds * 1_000;
    const records = await Promise.all(
      keys.map((key) => this.storage.increment(key, ttl, limit, ttl, 'server-login-failure')),
    );
    const blocked = records.filter((record) => record.isBlocked);
    if (blocked.length === 0) return failure;
    return new RateLimitedError(Math.max(1, ...blocked.map((record) => Math.ceil(record.timeToBlockExpire))));
  }
}
