import { Logger } from '@nestjs/common';
import { ThrottlerStorage, ThrottlerStorageService } from '@nestjs/throttler';
import { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis';
import type Redis from 'ioredis';

type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/**
 * The login rate-limit counters: in Redis (shared by every instance) while Redis answers, in this
 * process's memory while it does not. A Redis outage then neither blocks logins nor lifts the
 * limit; each instance counts on its own until Redis is back (the counts then start again there).
 */
export class FailoverThrottlerStorage implements ThrottlerStorage {
  private readonly logger = new Logger('RateLimit');
  private readonly shared: ThrottlerStorageRedisService;
  private readonly local = new ThrottlerStorageService();
  private degraded = false;

  constructor(private readonly redis: Redis) {
    this.shared = new ThrottlerStorageRedisService(redis);
  }

  async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    if (this.redis.status === 'ready') {
      try {
        const record = await this.shared.increment(key, ttl, limit, blockDuration, throttlerName);
        if (this.degraded) {
          this.degraded = false;
          this.logger.log('Login rate limits are counted in Redis again');
        }
        return record;
      } catch (error) {
        this.degrade(error instanceof Error ? error.message : String(error));
      }
    } else {
      this.degrade(`Redis is ${this.redis.status}`);
    }
    return this.local.increment(key, ttl, limit, blockDuration, throttlerName);
  }

  private degrade(reason: string): void {
    if (this.degraded) return;
    this.degraded = true;
    this.logger.warn(`Login rate limits are counted in this process only (${reason})`);
  }
}
