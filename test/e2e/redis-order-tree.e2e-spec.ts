import Redis from 'ioredis';
import {
  siteNumbers,
  siteRankKey,
  trackNumbers,
  trackRankKey,
  TREE_CAPACITY,
} from '../../src/ranking/redis/redis-order-tree';
import { testRedisUrl } from '../setup/test-env';
import { TestOrderTree } from '../support/redis-order-tree';

const redisUrl = testRedisUrl();
const describeWithRedis = redisUrl ? describe : describe.skip;

/** Deterministic pseudo-random numbers (the failures must be reproducible). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const compare = (a: number[], b: number[]) => {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
};

/** The sorted model the tree must agree with. */
class Model {
  readonly keys: number[][] = [];
  below(key: number[]): number {
    let lo = 0;
    let hi = this.keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (compare(this.keys[mid], key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
  has(key: number[]): boolean {
    const at = this.below(key);
    return at < this.keys.length && compare(this.keys[at], key) === 0;
  }
  insert(key: number[]): boolean {
    if (this.has(key)) return false;
    this.keys.splice(this.below(key), 0, key);
    return true;
  }
  delete(key: number[]): boolean {
    if (!this.has(key)) return false;
    this.keys.splice(this.below(key), 1);
    return true;
  }
  flat(from = 0, to = this.keys.length): number[] {
    return this.keys.slice(from, to).flat();
  }
}

describeWithRedis(
  redisUrl
    ? 'Redis rank index tree: a counted B+-tree in Redis strings agrees with a sorted list'
    : 'Redis rank index tree (skipped: needs REDIS_URL)',
  () => {
    let redis: Redis;
    const prefix = `rhythmc-test-tree-${process.pid}-${Date.now()}:`;

    beforeAll(() => {
      redis = new Redis(redisUrl as string, { lazyConnect: false, maxRetriesPerRequest: 1 });
    });

    afterAll(async () => {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    });

    it('inserts, deletes, counts and reads ranges exactly through splits, merges and root changes (capacity 4)', async () => {
      const tree = new TestOrderTree(redis, `${prefix}random`, 't', 4);
      const model = new Model();
      const next = random(16);
      // Few distinct values per field, so that most comparisons go down to the uid.
      const key = () => [
        Math.floor(next() * 3),
        Math.floor(next() * 3),
        Math.floor(next() * 4),
        Math.floor(next() * 40) + 2 ** 52,
      ];
      let checks = 0;
      for (let step = 0; step < 1_500; step++) {
        const k = key();
        // Grow for the first half, shrink to nothing in the second.
        const inserting = step < 750 ? next() < 0.75 : next() < 0.2;
        if (inserting && step % 2 === 0) expect([step, await tree.insert(k)]).toEqual([step, model.insert(k)]);
        else if (inserting) {
          const below = model.below(k);
          expect([step, await tree.insertCounted(k)]).toEqual([step, { inserted: model.insert(k), below }]);
        } else {
          const victim = model.keys.length > 0 && next() < 0.9 ? model.keys[Math.floor(next() * model.keys.length)] : k;
          expect([step, await tree.delete(victim)]).toEqual([step, model.delete(victim)]);
        }
        const probe = key();
        expect([step, await tree.below(probe)]).toEqual([step, model.below(probe)]);
        if (step % 25 === 0) {
          const check = await tree.check();
          expect(check.records).toBe(model.keys.length);
          expect(check.numbers).toEqual(model.flat());
          expect(await tree.nodeKeys()).toBe(check.nodes);
          const from = Math.floor(next() * (model.keys.length + 2));
          expect(await tree.range(from, 7)).toEqual(model.flat(from, from + 7));
          checks++;
        }
      }
      for (const k of [...model.keys]) {
        expect(await tree.delete(k)).toBe(true);
        model.delete(k);
      }
      expect(checks).toBe(60);
      const empty = await tree.check();
      expect(empty).toEqual({ records: 0, nodes: 1, height: 1, numbers: [] });
      expect(await tree.nodeKeys()).toBe(1);
      expect(await tree.insert([1, 1, 1, 1])).toBe(true);
      expect(await tree.find([1, 1, 1, 1])).toEqual({ rank: 0, found: true });
    });

    it('grows to several levels and back, and finds every key at its rank', async () => {
      const tree = new TestOrderTree(redis, `${prefix}levels`, 's', 4);
      const model = new Model();
      const next = random(7);
      for (let i = 0; i < 400; i++) {
        const k = [Math.floor(next() * 50), Math.floor(next() * 1_000)];
        expect(await tree.insert(k)).toBe(model.insert(k));
      }
      const grown = await tree.check();
      expect(grown.height).toBeGreaterThanOrEqual(4);
      expect(grown.numbers).toEqual(model.flat());
      for (const [rank, k] of model.keys.entries()) expect(await tree.find(k)).toEqual({ rank, found: true });
      expect(await tree.find([50, 0])).toEqual({ rank: model.keys.length, found: false });
      while (model.keys.length > 3) {
        const k = model.keys[Math.floor(next() * model.keys.length)];
        expect(await tree.delete(k)).toBe(model.delete(k));
      }
      const shrunk = await tree.check();
      expect(shrunk.numbers).toEqual(model.flat());
      expect(shrunk.height).toBeLessThanOrEqual(2);
      expect(await tree.nodeKeys()).toBe(shrunk.nodes);
    });

    it('keeps leaves nearly full when keys arrive in order (a load), half full when they arrive at random', async () => {
      const ordered = new TestOrderTree(redis, `${prefix}ordered`, 's', 16);
      for (let i = 0; i < 1_000; i++) await ordered.insert([7, i]);
      const full = await ordered.check();
      expect(full.records).toBe(1_000);
      // 15 of 16 a leaf: 67 leaves and 6 inner nodes; split in half it would be about 125 leaves.
      expect(full.nodes).toBe(67 + 5 + 1);

      const shuffled = new TestOrderTree(redis, `${prefix}shuffled`, 's', 16);
      const next = random(3);
      const order = Array.from({ length: 1_000 }, (_, i) => i).sort(() => next() - 0.5);
      for (const i of order) await shuffled.insert([7, i]);
      const half = await shuffled.check();
      expect(half.numbers).toEqual(full.numbers);
      expect(half.nodes).toBeGreaterThan(80);
    });

    it('holds the service keys exactly: ATP in ten-thousandths, any acc from 0 to 100, times and uids up to 2^53', async () => {
      const site = new TestOrderTree(redis, `${prefix}site`, 's', TREE_CAPACITY);
      const atps = [0, 1, 171_234, 9_999_999_999];
      for (const atpE4 of atps) await site.insert([...siteNumbers(atpE4), 2 ** 53 - 1].map(Number));
      await site.insert([...siteNumbers(171_234), 5].map(Number));
      const siteNumbersRead = await site.range(0, 10);
      const siteKeys = [];
      for (let i = 0; i < siteNumbersRead.length; i += 2)
        siteKeys.push(siteRankKey(siteNumbersRead[i], siteNumbersRead[i + 1]));
      expect(siteKeys).toEqual([
        [-9_999_999_999, 0, 2 ** 53 - 1],
        [-171_234, 0, 5],
        [-171_234, 0, 2 ** 53 - 1],
        [-1, 0, 2 ** 53 - 1],
        [0, 0, 2 ** 53 - 1],
      ]);

      const chart = new TestOrderTree(redis, `${prefix}chart`, 't', TREE_CAPACITY);
      const now = Date.UTC(2026, 10, 27);
      const bests: Array<[number, number, number]> = [
        [100, now, 3],
        [99.99999999999999, now, 3],
        [99.99, now - 1, 9],
        [99.99, now, 2],
        [99.99, now, 8],
        [5e-324, now, 1],
        [0, 0, 2 ** 53 - 1],
      ];
      for (const [acc, time, uid] of [...bests].reverse())
        await chart.insert([...trackNumbers(acc, time), uid].map(Number));
      const read = await chart.range(0, 10);
      const keys = [];
      for (let i = 0; i < read.length; i += 4) keys.push(trackRankKey(read[i], read[i + 1], read[i + 2], read[i + 3]));
      expect(keys).toEqual(bests.map(([acc, time, uid]) => [acc === 0 ? 0 : -acc, time, uid]));
      expect(await chart.below([...trackNumbers(99.99, now), 5].map(Number))).toBe(4);
    });
  },
);
