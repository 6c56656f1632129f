import { createHash, randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import { runScript } from '../redis/run-script';
import type { WindowState } from './window-state';

/** A lease is at most this many calls… */
export const LEASE_MAX = 64;
/** …and at most this share of what is left of the window's budget (1/16)… */
export const LEASE_SHARE = 16;
/** …and none at all below this many calls left: the last calls of a budget are counted one by one. */
export const LEASE_FLOOR = 256;
/** A lease nobody used for this long (or used up) is settled with Redis: its unused calls go back. */
export const LEASE_IDLE_MS = 250;
/**
 * Counters kept in memory at most (one per key or address seen within a window). Past it, a new
 * key is counted a call a round trip, without a lease: a flood of addresses cannot grow the map.
 */
export const MAX_COUNTERS = 100_000;

/**
 * KEYS: the window (a hash: `id`, `n` calls taken, `o:<instance>` calls leased and not yet used or
 * given back) and the block. ARGV: instance, calls asked for now, limit, window (ms), and the lease
 * rule (most, share, floor). Returns { calls granted (for the callers and the lease), `n` after,
 * the window's ms left, its id, the block: 0 none, -1 refused for now (other instances hold unused
 * leases: no block), else the block's ms left }. Calls over the limit and calls made while blocked
 * are counted too (a caller that ignores Retry-After stays blocked); calls refused for now are not.
 * The `n` returned counts only the calls let through.
 */
const TAKE_SCRIPT = `
local w, b = KEYS[1], KEYS[2]
local inst = 'o:' .. ARGV[1]
local need, limit, windowMs = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local leaseMax, leaseShare, leaseFloor = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local ttl = redis.call('PTTL', w)
local id
if ttl <= 0 then
  local t = redis.call('TIME')
  id = t[1] .. '.' .. t[2]
  redis.call('DEL', w)
  redis.call('HSET', w, 'id', id, 'n', 0)
  redis.call('PEXPIRE', w, windowMs)
  ttl = windowMs
else
  id = redis.call('HGET', w, 'id')
  redis.call('HDEL', w, inst)
end
local n = tonumber(redis.call('HGET', w, 'n'))
local blocked = redis.call('PTTL', b)
if blocked > 0 then
  redis.call('HINCRBY', w, 'n', need)
  return {0, n, ttl, id, blocked}
end
local left = limit - n
if left >= need then
  local lease = 0
  if left >= leaseFloor then lease = math.min(leaseMax, math.floor(left / leaseShare)) end
  local grant = math.min(math.max(need, lease), left)
  redis.call('HINCRBY', w, 'n', grant)
  if grant > need then redis.call('HSET', w, inst, grant - need) end
  return {grant, n + grant, ttl, id, 0}
end
local grant = math.max(left, 0)
local others = 0
local fields = redis.call('HGETALL', w)
for i = 1, #fields, 2 do
  if string.sub(fields[i], 1, 2) == 'o:' then others = others + tonumber(fields[i + 1]) end
end
if others > 0 then
  redis.call('HINCRBY', w, 'n', grant)
  return {grant, n + grant, ttl, id, -1}
end
redis.call('HINCRBY', w, 'n', need)
redis.call('SET', b, 1, 'PX', windowMs)
return {grant, n + grant, ttl, id, windowMs}`;

/** KEYS: the window. ARGV: instance, the lease's window id, its unused calls (given back if that window still runs). */
const SETTLE_SCRIPT = `
if redis.call('HGET', KEYS[1], 'id') ~= ARGV[2] then return 0 end
local unused = tonumber(ARGV[3])
if unused > 0 then redis.call('HINCRBY', KEYS[1], 'n', -unused) end
redis.call('HDEL', KEYS[1], 'o:' .. ARGV[1])
return unused`;

const TAKE_SHA = createHash('sha1').update(TAKE_SCRIPT).digest('hex');

interface Lease {
  windowId: string;
  /** `n` of the window when the lease was granted (its own calls included). */
  taken: number;
  /** Calls of the lease not yet used. */
  left: number;
  /** Local time by which the window has certainly ended in Redis (the call's send time + its ttl). */
  endsAt: number;
  usedAt: number;
}

interface Waiter {
  limit: number;
  resolve(state: WindowState): void;
  reject(error: unknown): void;
}

interface Counter {
  /** Redis keys (one hash tag: a Redis Cluster keeps both in one slot). */
  windowKey: string;
  blockKey: string;
  windowMs: number;
  /** Kept in the map (false past MAX_COUNTERS: no lease, counted a call a round trip). */
  kept: boolean;
  lease: Lease | null;
  /** Whether Redis holds a share of this lease under this instance (`o:<instance>`) to settle. */
  leaseShared: boolean;
  waiting: Waiter[];
  taking: boolean;
  seenAt: number;
}

const ok = (limit: number, taken: number, left: number, endsAt: number, now: number): WindowState => ({
  limit,
  remaining: Math.max(0, limit - taken + left),
  resetSeconds: Math.max(0, Math.ceil((endsAt - now) / 1_000)),
  retryAfterSeconds: null,
});

const refused = (limit: number, waitMs: number): WindowState => {
  const wait = Math.max(1, Math.ceil(waitMs / 1_000));
  return { limit, remaining: 0, resetSeconds: wait, retryAfterSeconds: wait };
};

/**
 * WindowLimiter's count in Redis, shared by every instance, without a round trip a call
 * (docs/decisions.md "Public API", Limits): an instance takes a lease of calls from the window in
 * Redis (up to LEASE_MAX, a sixteenth of what is left, none below LEASE_FLOOR left) and answers
 * the next calls from it in memory. Every leased call is counted in Redis when leased, so the
 * instances together never let more than the limit through; calls that arrive while a take is in
 * flight wait for it and are asked for together. A lease idle for LEASE_IDLE_MS gives its unused
 * calls back; until then another instance that finds the budget spent answers 429 with a wait of
 * one second and no block (the calls may still be there), and starts the block of one window only
 * once no instance holds any.
 */
export class LeasedWindows {
  private readonly instance = randomUUID();
  private readonly counters = new Map<string, Counter>();
  private readonly sweep: NodeJS.Timeout;

  constructor(private readonly redis: Redis) {
    this.sweep = setInterval(() => void this.settleIdle(Date.now()), LEASE_IDLE_MS);
    this.sweep.unref();
  }

  hit(key: string, limit: number, windowMs: number, now = Date.now()): Promise<WindowState> {
    const counter = this.counter(key, windowMs, now);
    const lease = counter.lease;
    if (lease !== null && !counter.taking && lease.left > 0 && now < lease.endsAt) {
      lease.left--;
      lease.usedAt = now;
      return Promise.resolve(ok(limit, lease.taken, lease.left, lease.endsAt, now));
    }
    return new Promise<WindowState>((resolve, reject) => {
      counter.waiting.push({ limit, resolve, reject });
      if (!counter.taking) void this.take(counter);
    });
  }

  /** Gives every lease's unused calls back (the instance stops). */
  async close(): Promise<void> {
    clearInterval(this.sweep);
    await Promise.allSettled([...this.counters.values()].map((counter) => this.settle(counter)));
    this.counters.clear();
  }

  private counter(key: string, windowMs: number, now: number): Counter {
    let counter = this.counters.get(key);
    if (counter === undefined) {
      const tag = `public-limit:{${key}}`;
      counter = {
        windowKey: `${tag}:window`,
        blockKey: `${tag}:block`,
        windowMs,
        kept: this.counters.size < MAX_COUNTERS,
        lease: null,
        leaseShared: false,
        waiting: [],
        taking: false,
        seenAt: now,
      };
      if (counter.kept) this.counters.set(key, counter);
    }
    counter.windowMs = windowMs;
    counter.seenAt = now;
    return counter;
  }

  /** Serves the waiting calls from the lease where it can, and asks Redis for the rest together. */
  private async take(counter: Counter): Promise<void> {
    counter.taking = true;
    try {
      while (counter.waiting.length > 0) {
        const now = Date.now();
        const lease = counter.lease;
        if (lease !== null && lease.left > 0 && now < lease.endsAt) {
          while (lease.left > 0 && counter.waiting.length > 0) {
            const waiter = counter.waiting.shift()!;
            lease.left--;
            lease.usedAt = now;
            waiter.resolve(ok(waiter.limit, lease.taken, lease.left, lease.endsAt, now));
          }
          continue;
        }
        const batch = counter.waiting.splice(0);
        const limit = batch[batch.length - 1].limit;
        try {
          const answer = await this.takeFromRedis(counter, batch.length, limit);
          const served = Math.min(answer.granted, batch.length);
          counter.lease =
            answer.block === 0
              ? {
                  windowId: answer.windowId,
                  taken: answer.taken,
                  left: answer.granted - served,
                  endsAt: answer.endsAt,
                  usedAt: answer.sentAt,
                }
              : null;
          counter.leaseShared = answer.block === 0 && answer.granted > batch.length;
          const leaseLeft = counter.lease?.left ?? 0;
          const at = Date.now();
          batch.forEach((waiter, i) => {
            if (i >= served) waiter.resolve(refused(waiter.limit, answer.block > 0 ? answer.block : 1_000));
            // The calls of this batch served after this one are not left to it.
            else waiter.resolve(ok(waiter.limit, answer.taken, leaseLeft + served - 1 - i, answer.endsAt, at));
          });
        } catch (error) {
          counter.lease = null;
          counter.leaseShared = false;
          for (const waiter of batch) waiter.reject(error);
        }
      }
    } finally {
      counter.taking = false;
    }
  }

  private async takeFromRedis(
    counter: Counter,
    need: number,
    limit: number,
  ): Promise<{ granted: number; taken: number; endsAt: number; windowId: string; block: number; sentAt: number }> {
    const sentAt = Date.now();
    const reply = (await runScript(
      this.redis,
      TAKE_SHA,
      TAKE_SCRIPT,
      [counter.windowKey, counter.blockKey],
      [this.instance, need, limit, counter.windowMs, counter.kept ? LEASE_MAX : 0, LEASE_SHARE, LEASE_FLOOR],
    )) as [number, number, number, string, number];
    const [granted, taken, ttl, windowId, block] = reply;
    return { granted, taken, endsAt: sentAt + ttl, windowId: String(windowId), block, sentAt };
  }

  /** Leases used up, or idle for LEASE_IDLE_MS: their unused calls go back to the window; idle counters go. */
  private async settleIdle(now: number): Promise<void> {
    const settling: Promise<void>[] = [];
    for (const [key, counter] of this.counters) {
      if (counter.taking) continue;
      const lease = counter.lease;
      if (lease !== null && (lease.left === 0 || now - lease.usedAt >= LEASE_IDLE_MS || now >= lease.endsAt))
        settling.push(this.settle(counter).catch(() => undefined));
      else if (lease === null && counter.waiting.length === 0 && now - counter.seenAt >= counter.windowMs)
        this.counters.delete(key);
    }
    await Promise.all(settling);
  }

  private async settle(counter: Counter): Promise<void> {
    const lease = counter.lease;
    counter.lease = null;
    if (lease === null || !counter.leaseShared) return;
    counter.leaseShared = false;
    if (Date.now() >= lease.endsAt) return; // that window is over in Redis, and its lease with it
    // EVAL, never EVALSHA: a NOSCRIPT retry would reach Redis after this instance's next take and
    // clear the share of the lease that take records.
    await this.redis.eval(SETTLE_SCRIPT, 1, counter.windowKey, this.instance, lease.windowId, lease.left);
  }
}
