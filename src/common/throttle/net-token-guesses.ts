import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { RateLimitedError } from '../errors/app-error';
import { REDIS } from '../redis/redis.module';
import { SharedOrLocal } from './shared-or-local';

/** A budget of attempts in a fixed window that starts with the first attempt. */
interface Budget {
  key: string;
  limit: number;
  windowMs: number;
}

interface WindowStore {
  /**
   * Takes one attempt from every budget, all or none: 0 when taken; otherwise nothing is taken and
   * the answer is the milliseconds until every spent budget's window has ended.
   */
  take(budgets: Budget[]): Promise<number>;
  /** Gives one attempt back to each budget still in its window (the attempt was no failure). */
  giveBack(keys: string[]): Promise<void>;
}

/** One process: a map swept of ended windows every minute. */
class LocalWindows implements WindowStore {
  private readonly windows = new Map<string, { used: number; endsAt: number }>();
  private readonly sweep: NodeJS.Timeout;

  constructor() {
    this.sweep = setInterval(() => {
      const now = Date.now();
      for (const [key, window] of this.windows) if (window.endsAt <= now) this.windows.delete(key);
    }, 60_000);
    this.sweep.unref();
  }

  take(budgets: Budget[]): Promise<number> {
    const now = Date.now();
    let wait = 0;
    for (const budget of budgets) {
      const window = this.current(budget.key, now);
      if (window && window.used >= budget.limit) wait = Math.max(wait, window.endsAt - now);
    }
    if (wait > 0) return Promise.resolve(wait);
    for (const budget of budgets) {
      const window = this.current(budget.key, now) ?? { used: 0, endsAt: now + budget.windowMs };
      window.used += 1;
      this.windows.set(budget.key, window);
    }
    return Promise.resolve(0);
  }

  giveBack(keys: string[]): Promise<void> {
    const now = Date.now();
    for (const key of keys) {
      const window = this.current(key, now);
      if (window && window.used > 0) window.used -= 1;
    }
    return Promise.resolve();
  }

  private current(key: string, now: number) {
    const window = this.windows.get(key);
    return window && window.endsAt > now ? window : undefined;
  }
}

/** KEYS: the budgets' counters; ARGV: limit and window (ms) of each, in the order of KEYS. */
const TAKE_SCRIPT = `
local wait = 0
for i, key in ipairs(KEYS) do
  local used = tonumber(redis.call('GET', key) or '0')
  if used >= tonumber(ARGV[2 * i - 1]) then
    local left = redis.call('PTTL', key)
    if left < 0 then
      redis.call('PEXPIRE', key, ARGV[2 * i])
      left = tonumber(ARGV[2 * i])
    end
    if left > wait then wait = left end
  end
end
if wait > 0 then return wait end
for i, key in ipairs(KEYS) do
  redis.call('INCR', key)
  if redis.call('PTTL', key) < 0 then redis.call('PEXPIRE', key, ARGV[2 * i]) end
end
return 0`;

/** KEYS: the counters to give one attempt back to (a counter whose window ended is left alone). */
const GIVE_BACK_SCRIPT = `
for _, key in ipairs(KEYS) do
  if tonumber(redis.call('GET', key) or '0') > 0 then redis.call('DECR', key) end
end
return 0`;

/** Every instance: one counter per budget in Redis (REDIS_KEY_PREFIX applies). */
class RedisWindows implements WindowStore {
  constructor(private readonly redis: Redis) {}

  async take(budgets: Budget[]): Promise<number> {
    const args = budgets.flatMap((budget) => [budget.limit, budget.windowMs]);
    const wait = await this.redis.eval(TAKE_SCRIPT, budgets.length, ...budgets.map((b) => b.key), ...args);
    return Number(wait);
  }

  async giveBack(keys: string[]): Promise<void> {
    await this.redis.eval(GIVE_BACK_SCRIPT, keys.length, ...keys);
  }
}

/**
 * How many Net Tokens a game server may try (decisions.md "Rate limits"): a budget per calling
 * server session (THROTTLE_TOKEN_SESSION_FAILURES per THROTTLE_TOKEN_SESSION_WINDOW_SECONDS) and
 * one per server across its sessions (THROTTLE_TOKEN_SERVER_FAILURES per
 * THROTTLE_TOKEN_SERVER_WINDOW_SECONDS), never per player named: only the server's own wrong
 * tokens spend them, so no caller can keep another server's players out. An attempt is taken
 * before the token is looked up (concurrent guesses cannot overshoot) and given back when the
 * token was right. Counted in Redis while it answers, in this process while it does not.
 */
@Injectable()
export class NetTokenGuesses {
  private readonly store: SharedOrLocal<WindowStore>;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(REDIS) redis: Redis | null,
  ) {
    this.store = new SharedOrLocal<WindowStore>(
      'Net Token guesses',
      redis,
      redis ? new RedisWindows(redis) : null,
      new LocalWindows(),
    );
  }

  /** Takes one attempt from the caller's budgets; 429 RATE_LIMITED with Retry-After when one is spent. */
  async take(serverId: number, serverSessionId: string): Promise<void> {
    const waitMs = await this.store.run((store) => store.take(this.budgets(serverId, serverSessionId)));
    if (waitMs > 0) throw new RateLimitedError(Math.max(1, Math.ceil(waitMs / 1_000)));
  }

  /** The attempt found its player (or could not be judged): it is not a wrong token. */
  giveBack(serverId: number, serverSessionId: string): Promise<void> {
    const keys = this.budgets(serverId, serverSessionId).map((budget) => budget.key);
    return this.store.run((store) => store.giveBack(keys));
  }

  private budgets(serverId: number, serverSessionId: string): Budget[] {
    // One hash tag for both keys: a Redis Cluster keeps them in one slot, so one script sees both.
    const tag = `net-token-guesses:{server:${serverId}}`;
    return [
      {
        key: `${tag}:session:${serverSessionId}`,
        limit: this.config.throttleTokenSessionFailures,
        windowMs: this.config.throttleTokenSessionWindowSeconds * 1_000,
      },
      {
        key: `${tag}:server`,
        limit: this.config.throttleTokenServerFailures,
        windowMs: this.config.throttleTokenServerWindowSeconds * 1_000,
      },
    ];
  }
}
