import Redis from 'ioredis';
import { LEASE_IDLE_MS, LeasedWindows } from '../../src/common/throttle/leased-windows';
import type { WindowState } from '../../src/common/throttle/window-limiter';
import { RedisServer } from '../support/redis-server';
import { sleep } from '../support/wait';

/**
 * The public API's per-key budget counted in Redis through leases (src/common/throttle/leased-windows.ts),
 * against a private redis-server: each LeasedWindows with its own connection stands for one
 * instance. What must hold: never more calls let through than the limit, across instances; one
 * instance answers every call exactly as a count a call would (RateLimit-Remaining included); most
 * calls need no round trip; an unused lease goes back so that another instance can use the calls.
 */
describe('Public API limits: leases of calls in Redis', () => {
  let server: RedisServer;
  const clients: Redis[] = [];
  const instances: LeasedWindows[] = [];
  let admin: Redis;
  let keyNumber = 0;

  const instance = (): LeasedWindows => {
    const client = new Redis(server.url, { keyPrefix: 'leases-test:' });
    clients.push(client);
    const windows = new LeasedWindows(client);
    instances.push(windows);
    return windows;
  };
  const newKey = () => `key:${++keyNumber}`;
  /** Script calls Redis ran so far (EVAL and EVALSHA). */
  const scriptCalls = async (): Promise<number> => {
    const stats = await admin.info('commandstats');
    return [...stats.matchAll(/cmdstat_(?:eval|evalsha):calls=(\d+)/g)].reduce((sum, m) => sum + Number(m[1]), 0);
  };
  const callsUntilRefused = async (windows: LeasedWindows, key: string, limit: number, windowMs = 60_000) => {
    let allowed = 0;
    for (;;) {
      const state = await windows.hit(key, limit, windowMs);
      if (state.retryAfterSeconds !== null) return { allowed, refusal: state };
      allowed++;
    }
  };

  beforeAll(async () => {
    server = await RedisServer.start();
    admin = new Redis(server.url);
  });
  afterAll(async () => {
    await Promise.all(instances.map((windows) => windows.close()));
    for (const client of clients) client.disconnect();
    admin?.disconnect();
    await server?.stop();
  });

  it('lets exactly the limit through on one instance, each answer with the exact calls left, in a fraction of the round trips', async () => {
    const windows = instance();
    const key = newKey();
    const before = await scriptCalls();
    const remaining: number[] = [];
    for (let i = 0; i < 1_200; i++) {
      const state = await windows.hit(key, 1_200, 60_000);
      expect(state.retryAfterSeconds).toBeNull();
      remaining.push(state.remaining);
    }
    expect(remaining).toEqual(Array.from({ length: 1_200 }, (_, i) => 1_199 - i));
    const used = (await scriptCalls()) - before;
    // A lease of up to 64 calls while 256 or more are left, then one call a round trip, and a
    // settle now and then: about 300 script calls, where a count a call takes 1,200.
    expect(used).toBeLessThan(400);

    const over = await windows.hit(key, 1_200, 60_000);
    expect(over).toEqual({ limit: 1_200, remaining: 0, resetSeconds: 60, retryAfterSeconds: 60 });
    const [window] = await admin.keys(`leases-test:public-limit:{${key}}:window`);
    // The refused call is counted too.
    expect(await admin.hget(window, 'n')).toBe('1201');
  });

  it('asks once for calls that arrive together, and answers each with its own calls left', async () => {
    const windows = instance();
    const key = newKey();
    const before = await scriptCalls();
    const states = await Promise.all(Array.from({ length: 50 }, () => windows.hit(key, 1_200, 60_000)));
    expect(states.every((state) => state.retryAfterSeconds === null)).toBe(true);
    expect(states.map((state) => state.remaining).sort((a, b) => b - a)).toEqual(
      Array.from({ length: 50 }, (_, i) => 1_199 - i),
    );
    // The first call's take, then the rest served by one more (the lease of 64 holds them all, or one take for the waiters).
    expect((await scriptCalls()) - before).toBeLessThanOrEqual(2);
  });

  it('never lets more than the limit through across instances, calls alternating', async () => {
    const a = instance();
    const b = instance();
    const key = newKey();
    let allowed = 0;
    for (let i = 0; i < 1_200; i++) {
      const state = await (i % 2 === 0 ? a : b).hit(key, 1_200, 60_000);
      if (state.retryAfterSeconds === null) allowed++;
    }
    expect(allowed).toBe(1_200);
    for (const windows of [a, b]) expect((await windows.hit(key, 1_200, 60_000)).retryAfterSeconds).toBe(60);
  });

  it('hands an idle lease back, so that the calls it held are not lost to another instance', async () => {
    const a = instance();
    const b = instance();
    const key = newKey();
    // a takes 701 calls (the last lease it took is not all used), then falls silent.
    for (let i = 0; i < 701; i++) expect((await a.hit(key, 1_200, 60_000)).retryAfterSeconds).toBeNull();
    const held = Number(await admin.hget(`leases-test:public-limit:{${key}}:window`, 'n')) - 701;
    expect(held).toBeGreaterThan(0);
    const first = await callsUntilRefused(b, key, 1_200);
    // b gets what is left in Redis, and a's unused calls too if a gave them back meanwhile.
    expect([499 - held, 499]).toContain(first.allowed);
    if (first.allowed === 499 - held) {
      // a may still use them: b refuses for a second, without starting a block…
      expect(first.refusal).toEqual({ limit: 1_200, remaining: 0, resetSeconds: 1, retryAfterSeconds: 1 });
      // …until a, silent, has given them back.
      await sleep(LEASE_IDLE_MS * 3);
      const second = await callsUntilRefused(b, key, 1_200);
      expect(second.allowed).toBe(held);
      expect(second.refusal.retryAfterSeconds).toBe(60);
    } else {
      expect(first.refusal.retryAfterSeconds).toBe(60);
    }
    expect(await admin.hget(`leases-test:public-limit:{${key}}:window`, 'n')).toBe(String(1_200 + 1));
  });

  it('does not carry a lease over into the next window', async () => {
    const windows = instance();
    const key = newKey();
    expect((await windows.hit(key, 10_000, 400)).remaining).toBe(9_999);
    expect((await windows.hit(key, 10_000, 400)).remaining).toBe(9_998);
    await sleep(500);
    const state: WindowState = await windows.hit(key, 10_000, 400);
    expect(state.remaining).toBe(9_999);
    expect(await admin.hget(`leases-test:public-limit:{${key}}:window`, 'n')).toBe('64');
  });

  it('keeps counting the calls of a blocked caller: one that ignores Retry-After stays blocked', async () => {
    const windows = instance();
    const key = newKey();
    expect((await windows.hit(key, 1, 1_000)).retryAfterSeconds).toBeNull(); // the window of t0
    await sleep(500);
    expect((await windows.hit(key, 1, 1_000)).retryAfterSeconds).toBe(1); // blocked until t0 + 1.5 s
    await sleep(650); // the window of t0 is over, the block is not: these two start a new window
    expect((await windows.hit(key, 1, 1_000)).retryAfterSeconds).toBe(1);
    expect((await windows.hit(key, 1, 1_000)).retryAfterSeconds).toBe(1);
    await sleep(450); // the block is over, but the new window holds 2 calls over a limit of 1
    expect((await windows.hit(key, 1, 1_000)).retryAfterSeconds).toBe(1);
  });

  it('goes on counting exactly when Redis forgets its scripts (a restart, SCRIPT FLUSH): the text is sent once more', async () => {
    const windows = instance();
    const key = newKey();
    const evals = async () => Number(/cmdstat_eval:calls=(\d+)/.exec(await admin.info('commandstats'))?.[1] ?? 0);
    // Below 256 calls left no lease is taken: every call is a script call.
    for (let i = 0; i < 5; i++) expect((await windows.hit(key, 10, 60_000)).remaining).toBe(9 - i);
    await admin.script('FLUSH');
    const evalsBefore = await evals();
    for (let i = 5; i < 10; i++) expect((await windows.hit(key, 10, 60_000)).remaining).toBe(9 - i);
    expect((await windows.hit(key, 10, 60_000)).retryAfterSeconds).toBe(60);
    // One EVAL with the text after the NOSCRIPT, which loads it: the calls after it run by SHA again.
    expect((await evals()) - evalsBefore).toBe(1);
    const [window] = await admin.keys(`leases-test:public-limit:{${key}}:window`);
    expect(await admin.hget(window, 'n')).toBe('11');
  });
});
