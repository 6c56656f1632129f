import { Injectable } from '@nestjs/common';
import { InjectThrottlerStorage, ThrottlerStorage } from '@nestjs/throttler';

/** Where a caller stands after one counted call. */
export interface WindowState {
  limit: number;
  /** Calls left in the window (0 once over). */
  remaining: number;
  /** Seconds until the window (or, once over the limit, the block) ends. */
  resetSeconds: number;
  /** Set when the call is refused: seconds to wait (Retry-After). */
  retryAfterSeconds: number | null;
}

/**
 * A per-key call budget of `limit` calls a window, counted in the throttler's storage (Redis when
 * REDIS_URL is set, so every instance shares one count; this process while Redis is down), for
 * callers that are not a route's @RateLimit (the public API's keys and addresses). The call over
 * the limit starts a block of one window (the storage's block), answered by the caller with 429 and
 * Retry-After; with Redis the calls made while blocked keep counting in the window that follows.
 */
@Injectable()
export class WindowLimiter {
  constructor(@InjectThrottlerStorage() private readonly storage: ThrottlerStorage) {}

  async hit(name: string, key: string, limit: number, windowSeconds: number): Promise<WindowState> {
    const windowMs = windowSeconds * 1_000;
    const record = await this.storage.increment(`${name}:${key}`, windowMs, limit, windowMs, name);
    if (record.isBlocked) {
      const wait = Math.max(1, record.timeToBlockExpire);
      return { limit, remaining: 0, resetSeconds: wait, retryAfterSeconds: wait };
    }
    return {
      limit,
      remaining: Math.max(0, limit - record.totalHits),
      resetSeconds: Math.max(0, record.timeToExpire),
      retryAfterSeconds: null,
    };
  }
}
