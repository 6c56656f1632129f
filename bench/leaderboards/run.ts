/**
 * The leaderboard reads (issue #18) against a bare Express + pg server reading the same rows by
 * index with the service's own SQL (bench/leaderboards/bare-server.ts), on the same database, in
 * the same run, alternating within each round:
 *   atp-top        GET /server/leaderboards/atp?limit=10
 *   atp-around     GET /server/leaderboards/atp?around=<uid>&k=5
 *   chart-top      GET /server/leaderboards/charts/1?limit=10
 *   chart-around   GET /server/leaderboards/charts/1?around=<uid>&k=5     (chart 1 has 1,000,000 bests)
 * The window's player changes with every request (ANCHORS random unbanned players, the same
 * sequence for both servers). Per read: a closed loop (CONNECTIONS) for throughput and CPU per
 * answer, then one connection (one request at a time, no queueing) for latency. The service's
 * event-loop delay p99 comes from its own /metrics over each measured window.
 *
 *   npm run build
 *   npm run bench:leaderboards                    # generates rhythmc_bench_leaderboards first when it is empty (about a minute)
 *   REDIS_URL=redis://127.0.0.1:6379 npm run bench:leaderboards   # the rank index in Redis
 *
 * Environment: BENCH_DATABASE_URL, GENERATE=1 (regenerate), PLAYERS (1000000), REDIS_URL, CONNECTIONS (16),
 * DURATION_SECONDS (8), WARMUP_SECONDS (2), ROUNDS (3), SERIAL_SECONDS (6), ANCHORS (1000),
 * READS (atp-top,atp-around,chart-top,chart-around). Results: bench/.out/leaderboards-<index>.json and a markdown table.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdminApi, call, expectCall } from '../harness/api';
import { alternate, ratio } from '../harness/compare';
import { cpuMs } from '../harness/cpu';
import { eventLoopDelay } from '../harness/event-loop';
import { withClient } from '../harness/database';
import { assertBenchDatabase, fmt, intFromEnv, listFromEnv, loadAverage, OUT_DIR, runMain } from '../harness/env';
import { closedLoop, LoadResult, mean } from '../harness/load';
import { dropRedisPrefix } from '../harness/redis';
import { Child, startBareServer, startServiceProcess, stopAllChildren, stopChild } from '../harness/process';
import { BIG_CHART, generateLeaderboardData, LEADERBOARDS_DATABASE_URL } from './generate';

const CONNECTIONS = intFromEnv('CONNECTIONS', 16);
const SECONDS = intFromEnv('DURATION_SECONDS', 8);
const WARMUP_SECONDS = intFromEnv('WARMUP_SECONDS', 2);
const ROUNDS = intFromEnv('ROUNDS', 3);
const SERIAL_SECONDS = intFromEnv('SERIAL_SECONDS', 6);
const ANCHORS = intFromEnv('ANCHORS', 1000);
const READS = listFromEnv('READS', ['atp-top', 'atp-around', 'chart-top', 'chart-around']);
const REDIS_URL = process.env.REDIS_URL?.trim() || '';

/** The path of read `read`, for the i-th request (windows rotate over the anchors). */
function pathOf(read: string, anchors: number[], i: number): string {
  const anchor = anchors[i % anchors.length];
  switch (read) {
    case 'atp-top':
      return '/server/leaderboards/atp?limit=10';
    case 'atp-around':
      return `/server/leaderboards/atp?around=${anchor}&k=5`;
    case 'chart-top':
      return `/server/leaderboards/charts/${BIG_CHART}?limit=10`;
    case 'chart-around':
      return `/server/leaderboards/charts/${BIG_CHART}?around=${anchor}&k=5`;
    default:
      throw new Error(`READS: unknown read ${read}`);
  }
}

/** The entries without their ranks (the bare server numbers no window): the rows must be the same. */
const rows = (text: string) =>
  (JSON.parse(text) as { entries: Array<Record<string, unknown>> }).entries.map(({ rank: _rank, ...entry }) => entry);

async function main(): Promise<void> {
  const url = LEADERBOARDS_DATABASE_URL;
  assertBenchDatabase(url);
  const ranked = await withClient(url, (client) =>
    client.query<{ n: number }>('SELECT count(*)::int AS n FROM player_rating'),
  ).then(
    (result) => result.rows[0].n,
    () => 0,
  );
  if (process.env.GENERATE === '1' || process.argv.includes('--generate') || ranked === 0)
    await generateLeaderboardData(url, intFromEnv('PLAYERS', 1_000_000));
  // Random unbanned players (every 100th is banned), all with a best on the big chart.
  const anchors = await withClient(url, (client) =>
    client.query<{ uid: string }>('SELECT uid FROM player_rating r WHERE r.uid % 100 <> 0 ORDER BY random() LIMIT $1', [
      ANCHORS,
    ]),
  ).then((result) => result.rows.map((row) => Number(row.uid)));

  const adminToken = randomBytes(24).toString('hex');
  const work = mkdtempSync(join(tmpdir(), 'rhythmc-bench-'));
  const redisPrefix = `rhythmc-bench-leaderboards:${randomBytes(4).toString('hex')}:`;
  const index = REDIS_URL ? 'redis' : 'memory';
  let service: Child | null = null;
  let bare: Child | null = null;
  try {
    service = await startServiceProcess({
      databaseUrl: url,
      redisUrl: REDIS_URL,
      adminToken,
      source: 'dist',
      log: 'leaderboards-service.log',
      env: {
        LOG_LEVEL: 'info',
        SERVER_TOKEN_TTL_SECONDS: '3600',
        DATA_DIR: join(work, 'data'),
        RESOURCE_DIR: join(work, 'resources'),
        REDIS_KEY_PREFIX: redisPrefix,
      },
    });
    console.log(
      `service ready in ${fmt(service.startedMs)} ms (rank index: ${index}, loaded from ${fmt(ranked || intFromEnv('PLAYERS', 1_000_000))} ratings)`,
    );
    bare = await startBareServer('bench/leaderboards/bare-server.ts', {}, '/health/ready');

    const created = await new AdminApi(service.url, adminToken).createServer(`bench-${randomBytes(3).toString('hex')}`);
    const { accessToken } = await expectCall<{ accessToken: string }>(
      200,
      service.url,
      'POST',
      '/server/login',
      created.bootstrapToken,
      { pluginVersion: 1, pluginSHA: 'bench' },
    );
    const headers = { Authorization: `Bearer ${accessToken}` };

    const table: Array<Record<string, unknown>> = [];
    for (const read of READS) {
      // Same SQL, same data: the same rows, for a few anchors; the service's ranks are checked against a count.
      for (let i = 0; i < 5; i++) {
        const path = pathOf(read, anchors, i);
        const [a, b] = await Promise.all([
          call(bare.url, 'GET', path, accessToken),
          call(service.url, 'GET', path, accessToken),
        ]);
        if (a.status !== 200 || b.status !== 200 || JSON.stringify(rows(a.text)) !== JSON.stringify(rows(b.text))) {
          throw new Error(
            `${read}: the answers differ: bare ${a.status} ${a.text.slice(0, 300)} | service ${b.status} ${b.text.slice(0, 300)}`,
          );
        }
      }
      const targets = { bare, service };
      type Measured = LoadResult & { cpuUsPerRequest: number; eventLoopP99Ms: number | null };
      const results = await alternate<Measured>(['bare', 'service'], ROUNDS, async (name, round) => {
        const target = targets[name as keyof typeof targets];
        let i = 0;
        const load = (seconds: number) =>
          closedLoop({
            baseUrl: target.url,
            connections: CONNECTIONS,
            seconds,
            request: () => ({ method: 'GET', path: pathOf(read, anchors, i++), headers }),
          });
        await load(WARMUP_SECONDS);
        if (name === 'service') await eventLoopDelay(target.url);
        const cpuBefore = cpuMs(target.pid);
        const measured = await load(SECONDS);
        const cpuUsPerRequest = ((cpuMs(target.pid) - cpuBefore) * 1000) / measured.requests;
        const eventLoopP99Ms = name === 'service' ? (await eventLoopDelay(target.url)).p99Ms : null;
        console.log(
          `${read} round ${round + 1} ${name.padEnd(7)} ${fmt(measured.rps).padStart(6)} req/s  p50 ${fmt(measured.p50, 2)} ms  p99 ${fmt(measured.p99, 2)} ms  CPU ${fmt(cpuUsPerRequest)} µs/req` +
            `${eventLoopP99Ms === null ? '' : `  event-loop p99 ${fmt(eventLoopP99Ms, 1)} ms`}  non-200 ${measured.unexpected}  errors ${measured.errors}  load average ${loadAverage()}`,
        );
        return { ...measured, cpuUsPerRequest, eventLoopP99Ms };
      });
      // Latency of one request at a time (one connection, no queueing): what a board read costs a game server.
      const latency: Record<string, LoadResult & { eventLoopP99Ms: number | null }> = {};
      for (const name of ['bare', 'service'] as const) {
        const target = targets[name];
        let i = 0;
        if (name === 'service') await eventLoopDelay(target.url);
        const measured = await closedLoop({
          baseUrl: target.url,
          connections: 1,
          seconds: SERIAL_SECONDS,
          request: () => ({ method: 'GET', path: pathOf(read, anchors, i++), headers }),
        });
        latency[name] = {
          ...measured,
          eventLoopP99Ms: name === 'service' ? (await eventLoopDelay(target.url)).p99Ms : null,
        };
        console.log(
          `${read} one at a time ${name.padEnd(7)} p50 ${fmt(measured.p50, 2)} ms  p99 ${fmt(measured.p99, 2)} ms  ${fmt(measured.rps)} req/s  non-200 ${measured.unexpected}  load average ${loadAverage()}`,
        );
      }
      const throughput = ratio(
        results.service.map((r) => r.rps),
        results.bare.map((r) => r.rps),
      );
      const cpu = ratio(
        results.bare.map((r) => r.cpuUsPerRequest),
        results.service.map((r) => r.cpuUsPerRequest),
      );
      table.push({
        read,
        path: pathOf(read, [1001], 0).replace('1001', '<uid>'),
        bareRps: mean(results.bare.map((r) => r.rps)),
        serviceRps: mean(results.service.map((r) => r.rps)),
        ratio: throughput.ofMeans,
        roundRatios: throughput.perRound,
        medianRatio: throughput.median,
        bareCpuUs: mean(results.bare.map((r) => r.cpuUsPerRequest)),
        serviceCpuUs: mean(results.service.map((r) => r.cpuUsPerRequest)),
        cpuRatio: cpu.median,
        latency: {
          bare: { p50: latency.bare.p50, p99: latency.bare.p99 },
          service: { p50: latency.service.p50, p99: latency.service.p99 },
        },
        eventLoopP99Ms: Math.max(
          ...results.service.map((r) => r.eventLoopP99Ms ?? 0),
          latency.service.eventLoopP99Ms ?? 0,
        ),
        failures: [...results.bare, ...results.service, latency.bare, latency.service].reduce(
          (sum, r) => sum + r.unexpected + r.errors,
          0,
        ),
        loadAverage: loadAverage(),
        runs: results,
      });
    }

    mkdirSync(OUT_DIR, { recursive: true });
    writeFileSync(
      join(OUT_DIR, `leaderboards-${index}.json`),
      `${JSON.stringify({ date: new Date().toISOString(), node: process.version, index, connections: CONNECTIONS, seconds: SECONDS, rounds: ROUNDS, serialSeconds: SERIAL_SECONDS, rows: table }, null, 2)}\n`,
    );
    console.log(
      `\nrank index: ${index}, Node ${process.version}, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s; latency of one request at a time (one connection)\n` +
        '| request | bare req/s | service req/s | service ÷ bare (median; rounds) | CPU µs/answer bare / service (ratio) | p50 / p99 ms one at a time, bare | service | service event-loop p99 | load average |\n|---|---|---|---|---|---|---|---|---|',
    );
    for (const row of table) {
      const r = row as {
        path: string;
        bareRps: number;
        serviceRps: number;
        medianRatio: number;
        roundRatios: number[];
        bareCpuUs: number;
        serviceCpuUs: number;
        cpuRatio: number;
        latency: { bare: { p50: number; p99: number }; service: { p50: number; p99: number } };
        eventLoopP99Ms: number;
        loadAverage: number;
      };
      console.log(
        `| \`${r.path}\` | ${fmt(r.bareRps)} | ${fmt(r.serviceRps)} | **${fmt(r.medianRatio, 2)}** (${r.roundRatios.map((x) => fmt(x, 2)).join(', ')}) | ${fmt(r.bareCpuUs)} / ${fmt(r.serviceCpuUs)} (${fmt(r.cpuRatio, 2)}) | ` +
          `${fmt(r.latency.bare.p50, 2)} / ${fmt(r.latency.bare.p99, 2)} | **${fmt(r.latency.service.p50, 2)}** / ${fmt(r.latency.service.p99, 2)} | ${fmt(r.eventLoopP99Ms, 1)} ms | ${r.loadAverage} |`,
      );
    }
  } finally {
    await stopChild(bare);
    await stopChild(service);
    if (REDIS_URL) await dropRedisPrefix(REDIS_URL, redisPrefix).catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
  }
}

runMain(main, stopAllChildren);
