import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { RateLimitedError } from '../errors/app-error';
import { REDIS } from '../redis/redis.module';
import { SharedOrLocal } from './shared-or-local';

/**
 * Consecutive failures per key with a lock-out: `maxFailures` failures in a row (none further apart
 * than the lock-out time, no success between them) lock the key for the lock-out time. The
 * throttler's storage counts hits in a window and cannot be read or reset; a lock-out needs both.
 */
interface LockoutStore {
  /** Milliseconds left of the key's lock-out; 0 when it is not locked. */
  lockedForMs(key: string): Promise<number>;
  /** Counts one failure; locks the key when it is the `maxFailures`-th in a row. */
  fail(key: string, maxFailures: number, lockoutMs: number): Promise<void>;
  /** A success: the failures in a row start again from zero. */
  reset(key: string): Promise<void>;
}

interface LocalRecord {
  failures: number;
  /** Failures older than this are forgotten. */
  failuresExpireAt: number;
  lockedUntil: number;
}

/** One process: a map swept of idle records every minute. */
class LocalLockoutStore implements LockoutStore {
  private readonly records = new Map<string, LocalRecord>();
  private readonly sweep: NodeJS.Timeout;

  constructor() {
    this.sweep = setInterval(() => {
      const now = Date.now();
      for (const [key, record] of this.records) {
        if (record.failuresExpireAt <= now && record.lockedUntil <= now) this.records.delete(key);
      }
    }, 60_000);
    this.sweep.unref();
  }

  lockedForMs(key: string): Promise<number> {
    const record = this.records.get(key);
    return Promise.resolve(record ? Math.max(0, record.lockedUntil - Date.now()) : 0);
  }

  fail(key: string, maxFailures: number, lockoutMs: number): Promise<void> {
    const now = Date.now();
    const record = this.records.get(key) ?? { failures: 0, failuresExpireAt: 0, lockedUntil: 0 };
    record.failures = record.failuresExpireAt > now ? record.failures + 1 : 1;
    record.failuresExpireAt = now + lockoutMs;
    if (record.failures >= maxFailures) {
      record.failures = 0;
      record.lockedUntil = now + lockoutMs;
    }
    this.records.set(key, record);
    return Promise.resolve();
  }

  reset(key: string): Promise<void> {
    const record = this.records.get(key);
    if (record) record.failures = 0;
    return Promise.resolve();
  }
}

/** KEYS: failures, lock; ARGV: maxFailures, lockoutMs. */
const FAIL_SCRIPT = `
local failures = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if failures >= tonumber(ARGV[1]) then
  redis.call('DEL', KEYS[1])
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[2])
end
return failures`;

/** Every instance: two keys per target in Redis (REDIS_KEY_PREFIX applies). */
class RedisLockoutStore implements LockoutStore {
  constructor(private readonly redis: Redis) {}

  async lockedForMs(key: string): Promise<number> {
    return Math.max(0, await this.redis.pttl(`lockout:{${key}}:locked`));
  }

  async fail(key: string, maxFailures: number, lockoutMs: number): Promise<void> {
    await this.redis.eval(
      FAIL_SCRIPT,
      2,
      `lockout:{${key}}:failures`,
      `lockout:{${key}}:locked`,
      maxFailures,
      lockoutMs,
    );
  }

  async reset(key: string): Promise<void> {
    await this.redis.del(`lockout:{${key}}:failures`);
  }
}

/**
 * Consecutive-failure lock-outs of the operator's tokens (AdminAuthLimiter: ADMIN_TOKEN and
 * METRICS_TOKEN per source address) and of staff sign-ins (SignInLimiter in src/staff: per
 * address, per account, per known browser). Counted in Redis while it answers, in this process while it
 * does not (as the rate limits: an outage neither blocks callers nor lifts the lock-outs counted here).
 */
@Injectable()
export class LoginLockout {
  private readonly stores: SharedOrLocal<LockoutStore>;

  constructor(@Inject(REDIS) redis: Redis | null) {
    this.stores = new SharedOrLocal<LockoutStore>(
      'Token lock-outs',
      redis,
      redis ? new RedisLockoutStore(redis) : null,
      new LocalLockoutStore(),
    );
  }

  /** 429 RATE_LIMITED with Retry-After while the key is locked out. */
  async assertOpen(key: string): Promise<void> {
    const ms = await this.stores.run((store) => store.lockedForMs(key));
    if (ms > 0) throw new RateLimitedError(Math.max(1, Math.ceil(ms / 1_000)));
  }

  /** One failure; the `maxFailures`-th in a row locks the key for `lockoutSeconds`. */
  recordFailureUnder(key: string, maxFailures: number, lockoutSeconds: number): Promise<void> {
    return this.stores.run((store) => store.fail(key, maxFailures, lockoutSeconds * 1_000));
  }

  recordSuccess(key: string): Promise<void> {
    return this.stores.run((store) => store.reset(key));
  }
}
