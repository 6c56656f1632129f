import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { InjectThrottlerStorage, ThrottlerStorage } from '@nestjs/throttler';
import type Redis from 'ioredis';
import { REDIS } from '../redis/redis.module';

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

interface LocalWindow {
  startedAt: number;
  hits: number;
  blockedUntil: number;
}

/**
 * This process's count while there is no Redis to share one: the throttler storage's semantics
 * (a window from the first call; the call over the limit blocks for a window; calls keep counting
 * meanwhile) in O(1) a call. @nestjs/throttler's own in-memory storage keeps a timestamp per hit
 * and filters them at every call: at the public API's 1,200 a minute that was 12–15 % of the
 * service's CPU per call (docs/benchmarks-archive.md "Public API").
 */
export class LocalWindows {
  private readonly windows = new Map<string, LocalWindow>();
  private readonly sweep: NodeJS.Timeout;
  /** Idle windows older than the longest window seen are swept. */
  private longestWindowMs = 0;

  constructor() {
    this.sweep = setInterval(() => {
      const now = Date.now();
      for (const [key, window] of this.windows)
        if (window.blockedUntil <= now && now - window.startedAt >= this.longestWindowMs) this.windows.delete(key);
    }, 60_000);
    this.sweep.unref();
  }

  hit(key: string, limit: number, windowMs: number, now = Date.now()): WindowState {
    this.longestWindowMs = Math.max(this.longestWindowMs, windowMs);
    let window = this.windows.get(key);
    if (window === undefined || now - window.startedAt >= windowMs) {
      window = { startedAt: now, hits: 0, blockedUntil: window?.blockedUntil ?? 0 };
      this.windows.set(key, window);
    }
    window.hits++;
    if (window.blockedUntil <= now && window.hits > limit) window.blockedUntil = now + windowMs;
    if (window.blockedUntil > now) {
      const wait = Math.max(1, Math.ceil((window.blockedUntil - now) / 1_000));
      return { limit, remaining: 0, resetSeconds: wait, retryAfterSeconds: wait };
    }
    return {
      limit,
      remaining: Math.max(0, limit - window.hits),
      resetSeconds: Math.max(0, Math.ceil((window.startedAt + windowMs - now) / 1_000)),
      retryAfterSeconds: null,
    };
  }

  close(): void {
    clearInterval(this.sweep);
    this.windows.clear();
  }
}

/**
 * A per-key call budget of `limit` calls a window, for callers that are not a route's @RateLimit
 * (the public API's keys and addresses). With REDIS_URL it is counted in the throttler's storage,
 * in Redis, so every instance shares one count (one Lua call); without Redis, and while Redis is
 * down, in this process (LocalWindows). The call over the limit starts a block of one window (the
 * storage's block), answered by the caller with 429 and Retry-After; the calls made while blocked
 * keep counting in the window that follows.
 */
@Injectable()
export class WindowLimiter implements OnModuleDestroy {
  private readonly local = new LocalWindows();

  constructor(
    @InjectThrottlerStorage() private readonly storage: ThrottlerStorage,
    @Inject(REDIS) private readonly redis: Redis | null,
  ) {}

  onModuleDestroy(): void {
    this.local.close();
  }

  async hit(name: string, key: string, limit: number, windowSeconds: number): Promise<WindowState> {
    const windowMs = windowSeconds * 1_000;
    if (this.redis?.status !== 'ready') return this.local.hit(`${name}:${key}`, limit, windowMs);
    // FailoverThrottlerStorage: Redis, or its own process count should Redis fail under this call.
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
