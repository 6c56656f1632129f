import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import type Redis from 'ioredis';
import { REDIS } from '../redis/redis.module';
import { LeasedWindows } from './leased-windows';
import { SharedOrLocal } from './shared-or-local';
import type { WindowState } from './window-state';

export type { WindowState } from './window-state';

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
 * (the public API's keys and addresses). With REDIS_URL it is counted in Redis, so every instance
 * shares one count (LeasedWindows: leases of calls, so most calls need no round trip); without
 * Redis, and while Redis is down, in this process (LocalWindows). The call over the limit starts a
 * block of one window, answered by the caller with 429 and Retry-After; the calls made while
 * blocked keep counting in the window that follows.
 */
@Injectable()
export class WindowLimiter implements OnModuleDestroy {
  private readonly local = new LocalWindows();
  private readonly leased: LeasedWindows | null;
  private readonly store: SharedOrLocal<Store>;

  constructor(@Inject(REDIS) redis: Redis | null) {
    this.leased = redis ? new LeasedWindows(redis) : null;
    const local: Store = { hit: (key, limit, windowMs) => Promise.resolve(this.local.hit(key, limit, windowMs)) };
    this.store = new SharedOrLocal<Store>('Public API limits', redis, this.leased, local);
  }

  async onModuleDestroy(): Promise<void> {
    this.local.close();
    await this.leased?.close();
  }

  hit(name: string, key: string, limit: number, windowSeconds: number): Promise<WindowState> {
    return this.store.run((store) => store.hit(`${name}:${key}`, limit, windowSeconds * 1_000));
  }
}

interface Store {
  hit(key: string, limit: number, windowMs: number): Promise<WindowState>;
}
