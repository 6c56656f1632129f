/**
 * The candidates for exact ranks, measured side by side on the benchmark database (run generate.ts
 * or run.ts first): for N players ranked by (ATP desc, uid asc),
 *   1. SQL COUNT over the B-tree (atp, uid): the rows ahead of a player, walked one by one;
 *   2. bucketed counts in SQL: one row per distinct ATP, rank = SUM(count) above + ties before;
 *   3. Redis sorted set: ZRANK (one round trip), and the versioned upsert + rank script of the service;
 *   4. the in-process OrderStatisticSet: countBelow and insert/delete.
 * Also the per-chart order on the most played chart. Prints µs per rank and the memory it takes.
 *
 *   npx ts-node --transpile-only bench/upload/rank-structures.ts
 */
import Redis from 'ioredis';
import { Client } from 'pg';
import { OrderStatisticSet } from '../../src/ranking/rank-index/order-statistic-set';
import { toTenThousandths } from '../../src/ranking/rating-scale';
import { BENCH_REDIS_URL, intFromEnv } from '../harness/env';
import { percentile } from '../harness/load';
import { UPLOAD_DATABASE_URL as BENCH_DATABASE_URL } from './generate';

const SAMPLES = intFromEnv('SAMPLES', 200);
const PREFIX = 'rhythmc-bench-rank:';

async function timeEach(samples: number, work: (i: number) => unknown): Promise<{ p50: number; p99: number }> {
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t0 = process.hrtime.bigint();
    await work(i);
    times.push(Number(process.hrtime.bigint() - t0) / 1e3);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

const fmt = (t: { p50: number; p99: number }) => `p50 ${t.p50.toFixed(0)} µs, p99 ${t.p99.toFixed(0)} µs`;

async function main(): Promise<void> {
  const db = new Client({ connectionString: BENCH_DATABASE_URL });
  await db.connect();
  const redis = new Redis(BENCH_REDIS_URL);
  const SITE = `${PREFIX}site`;
  const TRACK = `${PREFIX}track`;
  try {
    const { rows: ratings } = await db.query<{ uid: string; atp: string }>('SELECT uid, atp FROM player_rating');
    const n = ratings.length;
    const { rows: top } = await db.query<{ level_id: number; players: number }>(
      'SELECT level_id, count(*)::int AS players FROM player_chart_best GROUP BY level_id ORDER BY 2 DESC LIMIT 1',
    );
    const level = top[0].level_id;
    const { rows: bests } = await db.query<{ uid: string; acc: number; first_time_ms: string }>(
      'SELECT uid, acc, first_time_ms FROM player_chart_best WHERE level_id = $1',
      [level],
    );
    console.log(`${n} ranked players; chart ${level} has ${bests.length} players`);
    // Probes spread over the whole order, deepest ranks included.
    const probes = Array.from({ length: SAMPLES }, (_, i) => ratings[Math.floor((i / SAMPLES) * n)]);

    // 1. SQL COUNT over the B-tree.
    const count = await timeEach(SAMPLES, (i) =>
      db.query('SELECT count(*) FROM player_rating r WHERE r.atp > $1 OR (r.atp = $1 AND r.uid < $2)', [
        probes[i].atp,
        probes[i].uid,
      ]),
    );
    console.log(`SQL COUNT (B-tree), site:       ${fmt(count)}`);

    // 2. Bucketed counts: a table of (atp, players); ties within a bucket still walk the index.
    await db.query('DROP TABLE IF EXISTS bench_atp_bucket');
    await db.query(
      'CREATE TABLE bench_atp_bucket AS SELECT atp, count(*)::int AS players FROM player_rating GROUP BY atp',
    );
    await db.query('ALTER TABLE bench_atp_bucket ADD PRIMARY KEY (atp)');
    const { rows: buckets } = await db.query<{ n: number; widest: number }>(
      'SELECT count(*)::int AS n, max(players) AS widest FROM bench_atp_bucket',
    );
    const bucketed = await timeEach(SAMPLES, (i) =>
      db.query(
        `SELECT (SELECT coalesce(sum(players), 0) FROM bench_atp_bucket WHERE atp > $1)
              + (SELECT count(*) FROM player_rating WHERE atp = $1 AND uid < $2)`,
        [probes[i].atp, probes[i].uid],
      ),
    );
    console.log(
      `bucketed counts in SQL, site:   ${fmt(bucketed)} (${buckets[0].n} buckets, widest ${buckets[0].widest} players)`,
    );
    await db.query('DROP TABLE bench_atp_bucket');

    // 3. Redis sorted set.
    await redis.del(SITE, TRACK);
    for (let i = 0; i < n; i += 10_000) {
      const args: Array<string | number> = [];
      for (const row of ratings.slice(i, i + 10_000))
        args.push(-toTenThousandths(Number(row.atp)), row.uid.padStart(19, '0'));
      await redis.zadd(SITE, ...args);
    }
    for (let i = 0; i < bests.length; i += 10_000) {
      const args: Array<string | number> = [];
      for (const row of bests.slice(i, i + 10_000))
        args.push(-row.acc, row.first_time_ms.padStart(15, '0') + row.uid.padStart(19, '0'));
      await redis.zadd(TRACK, ...args);
    }
    const zrank = await timeEach(SAMPLES, (i) => redis.zrank(SITE, probes[i].uid.padStart(19, '0')));
    const memory = await redis.memory('USAGE', SITE);
    console.log(`Redis ZRANK, site:              ${fmt(zrank)} (${((memory ?? 0) / n).toFixed(0)} bytes per member)`);
    const zadd = await timeEach(SAMPLES, (i) =>
      redis
        .multi()
        .zadd(SITE, -toTenThousandths(Number(probes[i].atp)) - 1, probes[i].uid.padStart(19, '0'))
        .zrank(SITE, probes[i].uid.padStart(19, '0'))
        .exec(),
    );
    console.log(`Redis ZADD + ZRANK, one trip:   ${fmt(zadd)}`);
    const trackRank = await timeEach(SAMPLES, (i) => {
      const row = bests[Math.floor((i / SAMPLES) * bests.length)];
      return redis.zrank(TRACK, row.first_time_ms.padStart(15, '0') + row.uid.padStart(19, '0'));
    });
    console.log(`Redis ZRANK, chart ${level}:      ${fmt(trackRank)}`);
    await redis.del(SITE, TRACK);

    // 4. In process.
    const heapBefore = process.memoryUsage().arrayBuffers;
    const set = new OrderStatisticSet();
    let started = Date.now();
    for (const row of ratings) set.insert(-toTenThousandths(Number(row.atp)), 0, Number(row.uid));
    const loadMs = Date.now() - started;
    const bytes = process.memoryUsage().arrayBuffers - heapBefore;
    const below = await timeEach(SAMPLES, (i) =>
      set.countBelow(-toTenThousandths(Number(probes[i].atp)), 0, Number(probes[i].uid)),
    );
    started = Date.now();
    const moves = 100_000;
    for (let i = 0; i < moves; i++) {
      const row = ratings[i % n];
      const key = -toTenThousandths(Number(row.atp));
      set.delete(key, 0, Number(row.uid));
      set.insert(key - 1, 0, Number(row.uid));
    }
    const moveMicros = ((Date.now() - started) * 1000) / moves;
    console.log(
      `in-process countBelow, site:    ${fmt(below)} (load ${n} keys in ${loadMs} ms, ${(bytes / 1024 / 1024).toFixed(0)} MB; delete + insert ${moveMicros.toFixed(1)} µs)`,
    );
  } finally {
    await redis.del(SITE, TRACK).catch(() => undefined);
    redis.disconnect();
    await db.end();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
