import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { RateLimitedError } from '../common/errors/app-error';
import { REDIS } from '../common/redis/redis.module';
import { SharedOrLocal } from '../common/throttle/shared-or-local';
import { APP_CONFIG, AppConfig } from '../config/app-config';

/**
 * A token bucket for `chat` lines: `burst` lines at once, then `perSecond` lines a second. Over it
 * a line is refused before any lookup or fan-out, so a flooding game server costs the others nothing.
 */
export class ChatBudget {
  private tokens: number;
  private refilledAt: number;

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    now: number = Date.now(),
  ) {
    this.tokens = burst;
    this.refilledAt = now;
  }

  /** Takes one line from the budget: 0 when taken, else the milliseconds until the next line is allowed. */
  take(now: number = Date.now()): number {
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.refilledAt) * this.perSecond) / 1_000);
    this.refilledAt = now;
    if (this.tokens < 1) return Math.ceil(((1 - this.tokens) * 1_000) / this.perSecond);
    this.tokens -= 1;
    return 0;
  }

  /** Full again: the bucket is the same as a new one and can be forgotten. */
  isFull(now: number = Date.now()): boolean {
    return this.tokens + ((now - this.refilledAt) * this.perSecond) / 1_000 >= this.burst;
  }
}

interface ChatBudgetStore {
  /** One line of the server session: 0 when taken, else milliseconds until the next one is allowed. */
  take(serverSessionId: string, perSecond: number, burst: number): Promise<number>;
}

/** One process: a bucket per server session, forgotten once full again (swept every minute). */
class LocalChatBudgets implements ChatBudgetStore {
  private readonly budgets = new Map<string, ChatBudget>();
  private readonly sweep: NodeJS.Timeout;

  constructor() {
    this.sweep = setInterval(() => {
      for (const [key, budget] of this.budgets) if (budget.isFull()) this.budgets.delete(key);
    }, 60_000);
    this.sweep.unref();
  }

  take(serverSessionId: string, perSecond: number, burst: number): Promise<number> {
    let budget = this.budgets.get(serverSessionId);
    if (!budget) {
      budget = new ChatBudget(perSecond, burst);
      this.budgets.set(serverSessionId, budget);
    }
    return Promise.resolve(budget.take());
  }
}

/**
 * The same bucket in Redis, on Redis's clock (instances' clocks differ). KEYS: the bucket; ARGV:
 * perSecond, burst. The key expires once the bucket would be full again.
 */
const TAKE_SCRIPT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local perSecond = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * perSecond / 1000)
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
else
  wait = math.ceil((1 - tokens) * 1000 / perSecond)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) * 1000 / perSecond) + 1000)
return wait`;

class RedisChatBudgets implements ChatBudgetStore {
  constructor(private readonly redis: Redis) {}

  async take(serverSessionId: string, perSecond: number, burst: number): Promise<number> {
    return Number(await this.redis.eval(TAKE_SCRIPT, 1, `chat-budget:{${serverSessionId}}`, perSecond, burst));
  }
}

/**
 * Chat lines per server session (CHAT_LINES_PER_SECOND, bursts of CHAT_BURST; decisions.md
 * "Realtime"), whatever the number of its sockets and on every instance: in Redis while it
 * answers, in this process while it does not.
 */
@Injectable()
export class ChatBudgets {
  private readonly store: SharedOrLocal<ChatBudgetStore>;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(REDIS) redis: Redis | null,
  ) {
    this.store = new SharedOrLocal<ChatBudgetStore>(
      'Chat lines',
      redis,
      redis ? new RedisChatBudgets(redis) : null,
      new LocalChatBudgets(),
    );
  }

  /** Takes one line of the server session's budget; RATE_LIMITED ("retry in N s") over it. */
  async take(serverSessionId: string): Promise<void> {
    const { chatLinesPerSecond, chatBurst } = this.config;
    const waitMs = await this.store.run((store) => store.take(serverSessionId, chatLinesPerSecond, chatBurst));
    if (waitMs > 0) throw new RateLimitedError(Math.max(1, Math.ceil(waitMs / 1_000)));
  }
}
