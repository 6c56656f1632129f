/**
 * The public API's benchmark (issue #43, "What must show"), on the network-scale data of
 * bench/public/generate.ts (1,000,000 players, 10,000,000 plays, 1 % banned):
 *
 * 1. Against a bare Express + pg handler running the same statement as a named prepared statement
 *    (bench/public/bare-server.ts), alternating within each round, closed loop:
 *      baltop         GET /server/baltop?limit=10            (server token; bare: the same ban filter, no auth)
 *      public-atp     GET /public/v1/boards/atp?limit=10     (an API key; bare: TOP_SITE_SQL, no key)
 *      public-chart   GET /public/v1/boards/charts/1?limit=10 (chart 1: the most played)
 *    The answers are checked equal first. Ratio of req/s per round (service ÷ bare), and CPU per
 *    answer of the HTTP process.
 * 2. Open loop at RATE requests a second (500) offered to one instance, OPEN_SECONDS each:
 *      boards     the ATP top 10, a chart's top 10 (charts 1–50), the ATP window around a random player (k 5), in turn
 *      profiles   GET /public/v1/players/<uid> of random unbanned players (bests 30, recent 10)
 *    latency from each request's scheduled time (p50, p99, max), the service's event-loop p99.
 * The pending migrations are applied first and timed (the public API's indexes on 10M plays).
 *
 *   npm run build
 *   npm run bench:public:generate       # once: about 20 min
 *   npm run bench:public                # REDIS_URL=redis://… to count the limits (and hold the rank index) in Redis
 *
 * Environment: BENCH_DATABASE_URL, REDIS_URL, REDIS_PREFIX (rhythmc-bench-public:<random>:), CONNECTIONS (16), DURATION_SECONDS (8), WARMUP_SECONDS (2),
 * ROUNDS (3), RATE (500), OPEN_SECONDS (30), SERVICE_LOG_LEVEL (info: a line per request, as deployed), READS (baltop,public-atp,public-chart; none), OPEN (boards,profiles; none),
 * PROFILE=1 (a CPU profile of the service over each of its measured windows, summarised on stdout and
 * written to bench/.out/public-<read>.cpuprofile; the sampling costs CPU: a profiled run's figures are not figures).
 * FLOOR=1 adds a third target to the comparison with the bare handler: the same routes in NestJS on Express with
 * nothing of the service's (bench/public/nest-floor-server.ts), to tell the framework's own cost from the service's.
 * SERVICE_BUILD=<dir> (another checkout's, or a copy's, dist/ with its node_modules) starts that build
 * instead of this one: run it alternately with this one to measure a change before/after (one
 * instance at a time: without Redis the rank index allows one per database); SERVICE_DATA_DIR=<dir>
 * keeps the service's data (the rank index's snapshot) between such runs.
 * Results: bench/.out/public-api.json and markdown tables on stdout; every line gives the load average.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdminApi, call, expectCall } from '../harness/api';
import { alternate, ratio } from '../harness/compare';
import { cpuMs } from '../harness/cpu';
import { migrate, withClient } from '../harness/database';
import { eventLoopDelay, scrapeMetrics } from '../harness/event-loop';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  assertBenchDatabase,
  fmt,
  intFromEnv,
  listFromEnv,
  loadAverage,
  OUT_DIR,
  runMain,
  secondsSince,
} from '../harness/env';
import { closedLoop, LoadResult, mean, openLoop, OpenLoopResult } from '../harness/load';
import { Child, startBareServer, startServiceProcess, stopAllChildren, stopChild } from '../harness/process';
import { connectProfiler, CpuProfiler, inspectArgs, summarizeProfile } from '../harness/profiler';
import { dropRedisPrefix } from '../harness/redis';
import { readFileSync } from 'node:fs';
import { PUBLIC_DATABASE_URL } from './generate';

const CONNECTIONS = intFromEnv('CONNECTIONS', 16);
const SECONDS = intFromEnv('DURATION_SECONDS', 8);
const WARMUP_SECONDS = intFromEnv('WARMUP_SECONDS', 2);
const ROUNDS = intFromEnv('ROUNDS', 3);
const RATE = intFromEnv('RATE', 500);
const OPEN_SECONDS = intFromEnv('OPEN_SECONDS', 30);
const READS = process.env.READS === 'none' ? [] : listFromEnv('READS', ['baltop', 'public-atp', 'public-chart']);
const OPEN = process.env.OPEN === 'none' ? [] : listFromEnv('OPEN', ['boards', 'profiles']);
const REDIS_URL = process.env.REDIS_URL?.trim() || '';
const PROFILE = process.env.PROFILE === '1';
const SERVICE_BUILD = process.env.SERVICE_BUILD?.trim() || undefined;
const FLOOR = process.env.FLOOR === '1';

const READ_PATHS: Record<string, string> = {
  baltop: '/server/baltop?limit=10',
  'public-atp': '/public/v1/boards/atp?limit=10',
  'public-chart': '/public/v1/boards/charts/1?limit=10',
};

async function main(): Promise<void> {
  const url = PUBLIC_DATABASE_URL;
  assertBenchDatabase(url);
  const migrated = Date.now();
  await migrate(url);
  const migrationSeconds = secondsSince(migrated);
  console.log(`migrations applied in ${migrationSeconds} s`);
  const { players, plays, anchors } = await withClient(url, async (client) => {
    const counts = await client.query<{ players: number; plays: number }>(
      'SELECT (SELECT count(*) FROM player)::int AS players, (SELECT count(*) FROM play_record)::int AS plays',
    );
    // Random unbanned players (every 100th is banned), each with a rating.
    const sample = await client.query<{ uid: string }>(
      'SELECT uid FROM player_rating WHERE uid % 100 <> 0 ORDER BY random() LIMIT 1000',
    );
    return { ...counts.rows[0], anchors: sample.rows.map((row) => Number(row.uid)) };
  });
  if (players === 0) throw new Error('The benchmark database is empty: run `npm run bench:public:generate` first');

  const adminToken = randomBytes(24).toString('hex');
  const work = mkdtempSync(join(tmpdir(), 'rhythmc-bench-'));
  // REDIS_PREFIX: the same prefix across runs keeps the Redis rank index (built once, minutes at 1M).
  const redisPrefix = process.env.REDIS_PREFIX?.trim() || `rhythmc-bench-public:${randomBytes(4).toString('hex')}:`;
  let service: Child | null = null;
  let bare: Child | null = null;
  let floor: Child | null = null;
  let profiler: CpuProfiler | null = null;
  const inspectPort = 9_500 + Math.floor(Math.random() * 400);
  /** Runs `work`, profiled as `name` when PROFILE=1. */
  const profiled = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
    if (!profiler) return work();
    await profiler.start();
    const result = await work();
    const file = join(OUT_DIR, `public-${name}.cpuprofile`);
    mkdirSync(OUT_DIR, { recursive: true });
    await profiler.stop(file);
    console.log(`\nprofile of ${name}:\n${summarizeProfile(JSON.parse(readFileSync(file, 'utf8')), 25)}\n`);
    return result;
  };
  try {
    service = await startServiceProcess({
      databaseUrl: url,
      redisUrl: REDIS_URL,
      adminToken,
      source: 'dist',
      buildRoot: SERVICE_BUILD,
      log: 'public-service.log',
      env: {
        LOG_LEVEL: process.env.SERVICE_LOG_LEVEL ?? 'info',
        SERVER_TOKEN_TTL_SECONDS: '3600',
        // SERVICE_DATA_DIR: kept between runs, so the rank index starts from its snapshot (seconds)
        // instead of the tables (minutes at 1M players on a loaded machine).
        DATA_DIR: process.env.SERVICE_DATA_DIR?.trim() || join(work, 'data'),
        RESOURCE_DIR: join(work, 'resources'),
        REDIS_KEY_PREFIX: redisPrefix,
        ...(PROFILE ? { NODE_OPTIONS: inspectArgs(inspectPort) } : {}),
      },
    });
    if (PROFILE) profiler = await connectProfiler(inspectPort);
    console.log(
      `service ready in ${fmt(service.startedMs)} ms (${REDIS_URL ? 'Redis' : 'no Redis'}), load average ${loadAverage()}`,
    );
    // The rank index builds in the background after the start (minutes at 1M players in Redis, its
    // snapshot in process): the measured windows begin once it answers, not while it takes a core.
    const indexWait = Date.now();
    while (!/^rhythmc_rank_index_ready\{[^}]*\} 1$/m.test(await scrapeMetrics(service.url))) {
      if (Date.now() - indexWait > 900_000) throw new Error('the rank index was not ready within 15 minutes');
      await sleep(1_000);
    }
    console.log(`rank index ready ${fmt(Date.now() - indexWait)} ms later, load average ${loadAverage()}`);
    bare = await startBareServer('bench/public/bare-server.ts', {}, '/health/ready');
    if (FLOOR) floor = await startBareServer('bench/public/nest-floor-server.ts', {}, '/health/ready');

    const created = await new AdminApi(service.url, adminToken).createServer(`bench-${randomBytes(3).toString('hex')}`);
    const { accessToken } = await expectCall<{ accessToken: string }>(
      200,
      service.url,
      'POST',
      '/server/login',
      created.bootstrapToken,
      { pluginVersion: 1, pluginSHA: 'bench' },
    );
    // A key the load cannot exhaust: its limit is not what is measured (each call is still counted).
    const { key } = await expectCall<{ key: string }>(201, service.url, 'POST', '/admin/api-keys', adminToken, {
      name: 'bench',
      scopes: ['read:boards', 'read:players'],
      rateLimit: 1_000_000,
    });
    const tokenOf = (path: string) => (path.startsWith('/public/') ? key : accessToken);

    // 1. Against the bare handler.
    const table: Array<Record<string, unknown>> = [];
    for (const read of READS) {
      const path = READ_PATHS[read];
      if (!path) throw new Error(`READS: unknown read ${read}`);
      const [a, b, c] = await Promise.all([
        call(bare.url, 'GET', path, null),
        call(service.url, 'GET', path, tokenOf(path)),
        floor ? call(floor.url, 'GET', path, null) : null,
      ]);
      if (a.status !== 200 || b.status !== 200 || a.text !== b.text || (c && (c.status !== 200 || c.text !== a.text)))
        throw new Error(
          `${read}: the answers differ: bare ${a.status} ${a.text.slice(0, 200)} | service ${b.status} ${b.text.slice(0, 200)}` +
            (c ? ` | floor ${c.status} ${c.text.slice(0, 200)}` : ''),
        );
      const targets: Record<string, Child> = floor ? { bare, service, floor } : { bare, service };
      type Measured = LoadResult & { cpuUsPerRequest: number; eventLoopP99Ms: number | null; loadAverage: number };
      const results = await alternate<Measured>(Object.keys(targets), ROUNDS, async (name, round) => {
        const target = targets[name];
        const headers: Record<string, string> = name === 'service' ? { Authorization: `Bearer ${tokenOf(path)}` } : {};
        const load = (seconds: number) =>
          closedLoop({
            baseUrl: target.url,
            connections: CONNECTIONS,
            seconds,
            request: () => ({ method: 'GET', path, headers }),
          });
        await load(WARMUP_SECONDS);
        if (name === 'service') await eventLoopDelay(target.url);
        const cpuBefore = cpuMs(target.pid);
        const measured =
          name === 'service' && round === 0 ? await profiled(read, () => load(SECONDS)) : await load(SECONDS);
        const cpuUsPerRequest = ((cpuMs(target.pid) - cpuBefore) * 1000) / measured.requests;
        const eventLoopP99Ms = name === 'service' ? (await eventLoopDelay(target.url)).p99Ms : null;
        const load1 = loadAverage();
        console.log(
          `${read} round ${round + 1} ${name.padEnd(7)} ${fmt(measured.rps).padStart(6)} req/s  p50 ${fmt(measured.p50, 2)} ms  p99 ${fmt(measured.p99, 2)} ms  CPU ${fmt(cpuUsPerRequest)} µs/req` +
            `${eventLoopP99Ms === null ? '' : `  event-loop p99 ${fmt(eventLoopP99Ms, 1)} ms`}  non-200 ${measured.unexpected}  errors ${measured.errors}  load average ${load1}`,
        );
        return { ...measured, cpuUsPerRequest, eventLoopP99Ms, loadAverage: load1 };
      });
      const throughput = ratio(
        results.service.map((r) => r.rps),
        results.bare.map((r) => r.rps),
      );
      const cpu = ratio(
        results.bare.map((r) => r.cpuUsPerRequest),
        results.service.map((r) => r.cpuUsPerRequest),
      );
      const loads = Object.values(results)
        .flat()
        .map((r) => r.loadAverage);
      const floorRatio = floor
        ? ratio(
            results.floor.map((r) => r.rps),
            results.bare.map((r) => r.rps),
          )
        : null;
      table.push({
        read,
        path,
        bareRps: mean(results.bare.map((r) => r.rps)),
        serviceRps: mean(results.service.map((r) => r.rps)),
        ratio: throughput.ofMeans,
        roundRatios: throughput.perRound,
        medianRatio: throughput.median,
        bareCpuUs: mean(results.bare.map((r) => r.cpuUsPerRequest)),
        serviceCpuUs: mean(results.service.map((r) => r.cpuUsPerRequest)),
        cpuRatio: cpu.median,
        ...(floorRatio
          ? {
              floorRps: mean(results.floor.map((r) => r.rps)),
              floorRatio: floorRatio.ofMeans,
              floorRoundRatios: floorRatio.perRound,
              floorCpuUs: mean(results.floor.map((r) => r.cpuUsPerRequest)),
              serviceToFloor: mean(results.service.map((r) => r.rps)) / mean(results.floor.map((r) => r.rps)),
            }
          : {}),
        failures: Object.values(results)
          .flat()
          .reduce((sum, r) => sum + r.unexpected + r.errors, 0),
        loadAverage: { min: Math.min(...loads), max: Math.max(...loads) },
      });
    }

    // 2. Open loop at RATE a second, one instance.
    const open: Array<Record<string, unknown>> = [];
    for (const kind of OPEN) {
      let i = 0;
      const path = (): string => {
        const n = i++;
        const anchor = anchors[n % anchors.length];
        if (kind === 'profiles') return `/public/v1/players/${anchor}`;
        if (kind !== 'boards') throw new Error(`OPEN: unknown ${kind}`);
        switch (n % 3) {
          case 0:
            return '/public/v1/boards/atp?limit=10';
          case 1:
            return `/public/v1/boards/charts/${1 + (n % 50)}?limit=10`;
          default:
            return `/public/v1/boards/atp?around=${anchor}&k=5`;
        }
      };
      const headers = { Authorization: `Bearer ${key}` };
      // Warm the paths and the plans, then measure.
      await openLoop({
        baseUrl: service.url,
        rate: RATE,
        seconds: 3,
        request: () => ({ method: 'GET', path: path(), headers }),
      });
      await eventLoopDelay(service.url);
      const cpuBefore = cpuMs(service.pid);
      const measured: OpenLoopResult = await profiled(`open-${kind}`, () =>
        openLoop({
          baseUrl: service!.url,
          rate: RATE,
          seconds: OPEN_SECONDS,
          request: () => ({ method: 'GET', path: path(), headers }),
        }),
      );
      const cpuUsPerRequest = ((cpuMs(service.pid) - cpuBefore) * 1000) / measured.requests;
      const eventLoop = await eventLoopDelay(service.url);
      const load1 = loadAverage();
      console.log(
        `open ${kind} ${RATE}/s offered: ${fmt(measured.rps)} answered/s  p50 ${fmt(measured.p50, 2)} ms  p90 ${fmt(measured.p90, 2)} ms  p99 ${fmt(measured.p99, 2)} ms  max ${fmt(measured.max, 1)} ms  ` +
          `dropped ${measured.dropped}  non-200 ${measured.unexpected}  errors ${measured.errors}  CPU ${fmt(cpuUsPerRequest)} µs/req  event-loop p99 ${fmt(eventLoop.p99Ms, 1)} ms  load average ${load1}`,
      );
      // The figures only: not the ~10,000 latencies the open loop also returns.
      const { latencies: _latencies, ...figures } = measured;
      open.push({ kind, ...figures, cpuUsPerRequest, eventLoop, loadAverage: load1 });
    }

    const report = {
      database: url.replace(/^.*\//, ''),
      build: SERVICE_BUILD ?? 'this checkout',
      players,
      plays,
      redis: REDIS_URL !== '',
      node: process.version,
      migrationSeconds: Number(migrationSeconds),
      connections: CONNECTIONS,
      seconds: SECONDS,
      rounds: ROUNDS,
      rate: RATE,
      openSeconds: OPEN_SECONDS,
      comparisons: table,
      open,
    };
    mkdirSync(OUT_DIR, { recursive: true });
    writeFileSync(join(OUT_DIR, 'public-api.json'), `${JSON.stringify(report, null, 2)}\n`);

    console.log(
      '\n| read | bare req/s | service req/s | service ÷ bare (of means; rounds) | CPU µs/answer bare / service | failures | load average |\n|---|---|---|---|---|---|---|',
    );
    for (const row of table) {
      const rounds = (row.roundRatios as number[]).map((r) => r.toFixed(2)).join(', ');
      const load = row.loadAverage as { min: number; max: number };
      console.log(
        `| \`${row.path as string}\` | ${fmt(row.bareRps as number)} | ${fmt(row.serviceRps as number)} | **${(row.ratio as number).toFixed(2)}** (${rounds}) | ${fmt(row.bareCpuUs as number)} / ${fmt(row.serviceCpuUs as number)} | ${row.failures as number} | ${load.min}–${load.max} |`,
      );
    }
    if (FLOOR) {
      console.log(
        '\n| read | NestJS floor req/s | floor ÷ bare (of means; rounds) | service ÷ floor | CPU µs/answer bare / floor / service |\n|---|---|---|---|---|',
      );
      for (const row of table) {
        const rounds = (row.floorRoundRatios as number[]).map((r) => r.toFixed(2)).join(', ');
        console.log(
          `| \`${row.path as string}\` | ${fmt(row.floorRps as number)} | **${(row.floorRatio as number).toFixed(2)}** (${rounds}) | ${(row.serviceToFloor as number).toFixed(2)} | ${fmt(row.bareCpuUs as number)} / ${fmt(row.floorCpuUs as number)} / ${fmt(row.serviceCpuUs as number)} |`,
        );
      }
    }
    console.log(
      `\n| open loop, ${RATE}/s offered, ${OPEN_SECONDS} s | answered/s | p50 ms | p90 ms | p99 ms | max ms | dropped | non-200 | event-loop p99 ms | load average |\n|---|---|---|---|---|---|---|---|---|---|`,
    );
    for (const row of open) {
      const r = row as unknown as OpenLoopResult & { kind: string; eventLoop: { p99Ms: number }; loadAverage: number };
      console.log(
        `| ${r.kind} | ${fmt(r.rps)} | ${fmt(r.p50, 2)} | ${fmt(r.p90, 2)} | **${fmt(r.p99, 2)}** | ${fmt(r.max, 1)} | ${r.dropped} | ${r.unexpected + r.errors} | ${fmt(r.eventLoop.p99Ms, 1)} | ${r.loadAverage} |`,
      );
    }
  } finally {
    profiler?.close();
    await stopChild(bare);
    await stopChild(floor);
    await stopChild(service);
    if (REDIS_URL) await dropRedisPrefix(REDIS_URL, redisPrefix).catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
  }
}

runMain(main, stopAllChildren);
