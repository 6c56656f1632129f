/**
 * The Redis rank index's memory at network size (docs/benchmarks.md "The Redis index's memory"):
 * the built service with REDIS_URL on a Redis of the benchmark's own (nothing else in it), on a
 * copy of the network-day data (1M ranked players, ~9M bests on 2,000 charts). It builds the index
 * at start (no `rank3:ready`); the figures are Redis's `used_memory` before and after, the memory
 * of each kind of key (MEMORY USAGE over every key), the trees' shape, the build time, and the
 * ranks of random entries against SQL's count (they must be equal). Then churn: REDISIDX_CHURN
 * bests improve (a random sample moved up to a higher acc, as uploads would), written by the
 * index's own versioned batch writes, and the memory is read again: random inserts split leaves
 * in half, where the ordered build kept them full.
 *
 *   npm run build && npm run bench:redis-index
 *   BENCH_DATABASE_URL=postgres://…/rhythmc_bench_redisidx REDISIDX_CHECKS=1000 npm run bench:redis-index
 */
import Redis from 'ioredis';
import { TestOrderTree } from '../../test/support/redis-order-tree';
import type { AppConfig } from '../../src/config/app-config';
import type { RankSourceRepository } from '../../src/ranking/rank-source.repository';
import { RedisRankIndex } from '../../src/ranking/redis/redis-rank-index';
import { TREE_CAPACITY, siteNumbers, trackNumbers } from '../../src/ranking/redis/redis-order-tree';
import {
  assertBenchDatabase,
  BENCH_ADMIN_TOKEN,
  benchDatabaseUrl,
  databaseName,
  intFromEnv,
  loadAverage,
  runMain,
  withDatabase,
} from '../harness/env';
import { databaseExists, withClient } from '../harness/database';
import { startServiceProcess, stopAllChildren, stopChild } from '../harness/process';
import { startPrivateRedis } from '../harness/redis';

const DATABASE_URL = benchDatabaseUrl('rhythmc_bench_redisidx');
const SOURCE_DATABASE = 'rhythmc_bench_network';
const CHECKS = intFromEnv('REDISIDX_CHECKS', 500);
const CHURN = intFromEnv('REDISIDX_CHURN', 1_000_000);
const PREFIX = 'bench:';

const mb = (bytes: number) => (bytes / 1e6).toFixed(1);

async function usedMemory(redis: Redis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1]);
}

/** MEMORY USAGE of every key, summed by kind (`rank3:<kind>:…`), and the bytes the node strings hold. */
async function memoryByKind(redis: Redis): Promise<Map<string, { keys: number; bytes: number; payload: number }>> {
  const kinds = new Map<string, { keys: number; bytes: number; payload: number }>();
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${PREFIX}*`, 'COUNT', 5_000);
    cursor = next;
    const pipeline = redis.pipeline();
    for (const key of keys) {
      pipeline.memory('USAGE', key, 'SAMPLES', '0');
      pipeline.type(key);
      pipeline.strlen(key);
    }
    const results = (await pipeline.exec()) ?? [];
    keys.forEach((key, i) => {
      const parts = key.slice(PREFIX.length).split(':');
      const type = results[i * 3 + 1][1] as string;
      const kind =
        parts[1] === 'p'
          ? 'player stores (hash)'
          : parts[1] === 's'
            ? type === 'hash'
              ? 'site tree meta'
              : 'site tree nodes'
            : parts[1] === 't'
              ? type === 'hash'
                ? 'chart tree metas'
                : 'chart tree nodes'
              : 'other';
      const entry = kinds.get(kind) ?? { keys: 0, bytes: 0, payload: 0 };
      entry.keys++;
      entry.bytes += Number(results[i * 3][1]);
      if (type === 'string') entry.payload += Number(results[i * 3 + 2][1]);
      kinds.set(kind, entry);
    });
  } while (cursor !== '0');
  return kinds;
}

/**
 * CHURN improved bests through RedisRankIndex.syncEntries (what a recompute uses; an upload's
 * script runs the same upsert): each sampled best moves to a higher acc at a later time with a
 * newer version, so its old record is deleted and the new one inserted at a random place.
 */
async function churn(redisUrl: string, bests: number, baseline: number): Promise<void> {
  const prefixed = new Redis(redisUrl, { keyPrefix: PREFIX });
  const plain = new Redis(redisUrl);
  try {
    const index = new RedisRankIndex(
      { redisKeyPrefix: PREFIX } as AppConfig,
      prefixed,
      null as unknown as RankSourceRepository,
    );
    const sample = await withClient(DATABASE_URL, async (client) => {
      const percent = Math.min(100, ((CHURN * 1.2) / bests) * 100);
      const rows = await client.query<{ uid: string; level_id: number; acc: number; version: string }>(
        `SELECT uid, level_id, acc, version FROM player_chart_best TABLESAMPLE BERNOULLI (${percent}) LIMIT $1`,
        [CHURN],
      );
      return rows.rows;
    });
    const version = 2 ** 40;
    const now = Date.now();
    const started = process.hrtime.bigint();
    const before = await redisCpuSeconds(plain);
    for (let i = 0; i < sample.length; i += 10_000) {
      await index.syncEntries({
        sites: [],
        tracks: sample.slice(i, i + 10_000).map((row, j) => ({
          uid: row.uid,
          levelId: row.level_id,
          version: version + i + j,
          // Up a random part of the way to 100 %, in hundredths as the plugin sends.
          acc: Math.round((row.acc + (((i + j) % 97) / 97) * (100 - row.acc)) * 100) / 100,
          firstTimeMs: now + i + j,
        })),
      });
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const redisSeconds = (await redisCpuSeconds(plain)) - before;
    const used = (await usedMemory(plain)) - baseline;
    const nodes = await plain.dbsize();
    process.stdout.write(
      `${JSON.stringify({
        churned: sample.length,
        seconds: seconds.toFixed(1),
        redisCpuMicrosecondsPerUpsert: ((redisSeconds / sample.length) * 1e6).toFixed(1),
        usedMemoryMB: mb(used),
        keys: nodes,
        loadAverage: loadAverage(),
      })}\n`,
    );
  } finally {
    prefixed.disconnect();
    plain.disconnect();
  }
}

async function redisCpuSeconds(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  return Number(/used_cpu_sys:([\d.]+)/.exec(info)?.[1]) + Number(/used_cpu_user:([\d.]+)/.exec(info)?.[1]);
}

async function main(): Promise<void> {
  assertBenchDatabase(DATABASE_URL);
  if (databaseName(DATABASE_URL) === SOURCE_DATABASE)
    throw new Error(`${SOURCE_DATABASE} is the shared generated data: run on a copy`);
  if (!(await databaseExists(DATABASE_URL))) {
    process.stdout.write(`copying ${SOURCE_DATABASE} to ${databaseName(DATABASE_URL)}…\n`);
    await withClient(withDatabase(DATABASE_URL, 'postgres'), (client) =>
      client.query(`CREATE DATABASE "${databaseName(DATABASE_URL)}" TEMPLATE "${SOURCE_DATABASE}"`),
    );
  }
  const privateRedis = await startPrivateRedis();
  const redis = new Redis(privateRedis.url);
  try {
    const baseline = await usedMemory(redis);
    const started = Date.now();
    const service = await startServiceProcess({
      databaseUrl: DATABASE_URL,
      redisUrl: privateRedis.url,
      adminToken: BENCH_ADMIN_TOKEN,
      source: 'dist',
      env: { REDIS_KEY_PREFIX: PREFIX, LOG_LEVEL: 'info' },
    });
    const readyMs = Date.now() - started;
    await stopChild(service, 60_000);
    const used = (await usedMemory(redis)) - baseline;
    const kinds = await memoryByKind(redis);
    const counts = await withClient(DATABASE_URL, async (client) => {
      const rows = await client.query<{ ratings: number; bests: number; charts: number }>(
        'SELECT (SELECT count(*) FROM player_rating)::int AS ratings, (SELECT count(*) FROM player_chart_best)::int AS bests, (SELECT count(DISTINCT level_id) FROM player_chart_best)::int AS charts',
      );
      return rows.rows[0];
    });
    const site = new TestOrderTree(redis, `${PREFIX}rank3:s`, 's', TREE_CAPACITY);
    const siteTree = await redis.hgetall(`${PREFIX}rank3:s`);

    // Exact ranks: random ratings and bests, the tree's count below against SQL's count ahead.
    let mismatches = 0;
    await withClient(DATABASE_URL, async (client) => {
      const ratings = await client.query<{ uid: string; atp_e4: string; ahead: number }>(
        `SELECT r.uid, (r.atp * 10000)::bigint AS atp_e4,
                (SELECT count(*) FROM player_rating o WHERE o.atp > r.atp OR (o.atp = r.atp AND o.uid < r.uid))::int AS ahead
           FROM player_rating r TABLESAMPLE SYSTEM (1) LIMIT $1`,
        [CHECKS],
      );
      for (const row of ratings.rows) {
        const below = await site.below([...siteNumbers(Number(row.atp_e4)), row.uid].map(Number));
        if (below !== row.ahead) mismatches++;
      }
      const bests = await client.query<{ uid: string; level_id: number; acc: number; first: string; ahead: number }>(
        `SELECT b.uid, b.level_id, b.acc, b.first_time_ms AS first,
                (SELECT count(*) FROM player_chart_best o WHERE o.level_id = b.level_id AND (o.acc > b.acc OR (o.acc = b.acc
                   AND (o.first_time_ms < b.first_time_ms OR (o.first_time_ms = b.first_time_ms AND o.uid < b.uid)))))::int AS ahead
           FROM player_chart_best b TABLESAMPLE SYSTEM (0.1) LIMIT $1`,
        [CHECKS],
      );
      for (const row of bests.rows) {
        const tree = new TestOrderTree(redis, `${PREFIX}rank3:t:${row.level_id}`, 't', TREE_CAPACITY);
        const below = await tree.below([...trackNumbers(row.acc, Number(row.first)), row.uid].map(Number));
        if (below !== row.ahead) mismatches++;
      }
      process.stdout.write(`checked ${ratings.rows.length} ratings and ${bests.rows.length} bests against SQL\n`);
    });

    const trees = [...kinds.entries()].filter(([kind]) => kind.endsWith('nodes'));
    const records = counts.bests * 21 + counts.ratings * 13;
    const payload = trees.reduce((sum, [, entry]) => sum + entry.payload, 0);
    const result = {
      database: databaseName(DATABASE_URL),
      ratings: counts.ratings,
      bests: counts.bests,
      charts: counts.charts,
      readyMs,
      usedMemoryMB: mb(used),
      bytesPerBest: (used / counts.bests).toFixed(1),
      kinds: Object.fromEntries(
        [...kinds.entries()].map(([kind, entry]) => [
          kind,
          { keys: entry.keys, MB: mb(entry.bytes), payloadMB: entry.payload > 0 ? mb(entry.payload) : undefined },
        ]),
      ),
      siteTree,
      /** Record bytes over node bytes: how full the trees are (inner nodes included). */
      treeFill: (records / payload).toFixed(3),
      rankMismatches: mismatches,
      loadAverage: loadAverage(),
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    if (mismatches > 0) process.exitCode = 1;
    if (CHURN > 0) await churn(privateRedis.url, counts.bests, baseline);
  } finally {
    redis.disconnect();
    await privateRedis.stop();
  }
}

runMain(main, stopAllChildren);
