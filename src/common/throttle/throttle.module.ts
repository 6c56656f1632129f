import { Global, Module } from '@nestjs/common';
import { ThrottlerModule } from '@nestjs/throttler';
import type Redis from 'ioredis';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { REDIS } from '../redis/redis.module';
import { FailoverThrottlerStorage } from './failover-throttler-storage';
import { AdminAuthLimiter } from './admin-auth.limiter';
import { LoginFailureLimiter } from './login-failure.limiter';
import { LoginLockout } from './login-lockout';
import { NetTokenGuesses } from './net-token-guesses';
import { WindowLimiter } from './window-limiter';

/**
 * The login limits (decisions.md "Rate limits"): @nestjs/throttler's storage (Redis when set, in
 * memory while Redis is down) behind the named per-caller throttlers of CallerThrottlerGuard, the
 * failed-server-login counter, the budgets of wrong Net Tokens, the admin and metrics token
 * lock-out, and the per-key budgets of WindowLimiter (the public API).
 */
@Global()
@Module({
  imports: [
    ThrottlerModule.forRootAsync({
      inject: [APP_CONFIG, REDIS],
      useFactory: (config: AppConfig, redis: Redis | null) => ({
        throttlers: [
          { name: 'server-login', limit: config.throttleLoginLimit, ttl: config.throttleLoginTtlSeconds * 1_000 },
          {
            name: 'player-login',
            limit: config.throttlePlayerLoginLimit,
            ttl: config.throttlePlayerLoginTtlSeconds * 1_000,
          },
        ],
        // Retry-After comes with the 429 itself (RateLimitedError); no X-RateLimit-* per throttler.
        setHeaders: false,
        storage: redis ? new FailoverThrottlerStorage(redis) : undefined,
      }),
    }),
  ],
  providers: [LoginFailureLimiter, NetTokenGuesses, LoginLockout, AdminAuthLimiter, WindowLimiter],
  exports: [LoginFailureLimiter, NetTokenGuesses, LoginLockout, AdminAuthLimiter, WindowLimiter],
})
export class ThrottleModule {}
