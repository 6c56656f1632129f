/**
 * Score-upload benchmark (issue 5), one run: 1,000,000 players; first 100,000 plays (10,000
 * ranked players), then grown to 10,000,000 plays (all 1,000,000 players ranked). At each size
 * the service (PostgreSQL; rank index in Redis, and in process) and a bare Express + pg handler
 * (one insert, one indexed select) take the same uploads over loopback, alternating:
 *   - latency: one request at a time (p50, p99);
 *   - throughput: CONCURRENCY keep-alive connections, closed loop (requests/s, p50, p99).
 *
 *   npm run bench:upload
 *
 * Environment: BENCH_DATABASE_URL (dropped and recreated; its name must contain "bench"),
 * BENCH_REDIS_URL, PLAYERS (1000000), SMALL_RANKED (10000), LARGE_RANKED (= PLAYERS), MODES
 * (redis,memory), ROUNDS (2), SEQUENTIAL (1000), CONCURRENT (8000), CONCURRENCY (16), SESSIONS
 * (200), SKIP_GENERATE=1 (reuse a database generated at the large size: measures only that),
 * REDIS_PREFIX / KEEP_REDIS_PREFIX=1 (reuse / keep the Redis rank index of an earlier run, as in
 * bench/network-day: only sound with SKIP_GENERATE=1 and MODES=redis, so that nothing uploads
 * without it in between), SERVICE_NODE_ARGS (node flags of the service, e.g.
 * `--cpu-prof --cpu-prof-dir=/tmp/prof`), SERVICE_ENV (`NAME=value` pairs of the service's
 * environment only, e.g. `LD_PRELOAD=… MALLOC_CONF=…`), SERVICE_SOURCE (src: src/main.ts through ts-node, the
 * default; dist: the build, as production runs it).
 * Prints the results and writes bench/.out/upload.json. Every loop is bounded by a count.
 * Every measurement of the service also reports its event-loop delay (p99, max) over that
 * measurement, from its own /metrics (`rhythmc_event_loop_delay_seconds`, reset by each scrape).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { AdminApi, call, expectCall } from '../harness/api';
import { CpuPerRequest, cpuPerRequest, CpuProbe, redisPid, sampleCpu } from '../harness/cpu';
import { withClient } from '../harness/database';
import { EventLoopDelay, eventLoopDelay } from '../harness/event-loop';
import {
  BENCH_ADMIN_TOKEN,
  BENCH_REDIS_URL,
  intFromEnv,
  loadAverage,
  OUT_DIR,
  runMain,
  secondsSince,
} from '../harness/env';
import { analyze, counts, deriveRatings, loadPlays } from '../harness/generate';
import { closedLoop, mean } from '../harness/load';
import { gameplayRecord, randomPlay } from '../harness/payloads';
import { dropRedisPrefix, redisMemory } from '../harness/redis';
import { Child, startBareServer, startServiceProcess, stopAllChildren, stopChild } from '../harness/process';
import { generateUploadData, UPLOAD_DATABASE_URL } from './generate';

const BENCH_DATABASE_URL = UPLOAD_DATABASE_URL;
const PLAYERS = intFromEnv('PLAYERS', 1_000_000);
const SMALL_RANKED = intFromEnv('SMALL_RANKED', 10_000);
const LARGE_RANKED = intFromEnv('LARGE_RANKED', PLAYERS);
const MODES = (process.env.MODES ?? 'redis,memory').split(',').filter(Boolean) as Array<'redis' | 'memory'>;
const ROUNDS = intFromEnv('ROUNDS', 2);
const SEQUENTIAL = intFromEnv('SEQUENTIAL', 1_000);
const CONCURRENT = intFromEnv('CONCURRENT', 8_000);
const CONCURRENCY = intFromEnv('CONCURRENCY', 16);
const SESSIONS = intFromEnv('SESSIONS', 200);
const WARMUP = 300;

interface Measure {
  requests: number;
  non200: number;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
  /** CPU ms per request: the HTTP process, the PostgreSQL backends of the database, Redis, the load driver. */
  cpu: CpuPerRequest;
  /** The service's event-loop delay over the measurement; null for the bare handler (no /metrics). */
  eventLoop: EventLoopDelay | null;
}

interface Target {
  name: string;
  pid: number;
  url: string;
  /** Whether it answers GET /metrics with its event-loop delay (the service; not the bare handler). */
  metrics: boolean;
  headers: Record<string, string>;
  /** A fresh upload body (new record) for one of the logged-in players. */
  body: () => string;
}

function startService(mode: 'redis' | 'memory', redisPrefix: string): Promise<Child> {
  return startServiceProcess({
    name: `service (${mode})`,
    // SERVICE_SOURCE=dist: the build (`npm run build` first), as production runs it; src (the
    // default, as every figure before 2026-11-26): src/main.ts through ts-node, whose hooks load
    // node:domain (every EventEmitter then pays for it) and source-map-support.
    source: process.env.SERVICE_SOURCE === 'dist' ? 'dist' : 'src',
    databaseUrl: BENCH_DATABASE_URL,
    redisUrl: mode === 'redis' ? BENCH_REDIS_URL : '',
    adminToken: BENCH_ADMIN_TOKEN,
    log: `upload-service-${mode}.log`,
    env: {
      REDIS_KEY_PREFIX: redisPrefix,
      SERVER_TOKEN_TTL_SECONDS: '86400',
      PLAYER_TOKEN_TTL_SECONDS: '86400',
      LOG_LEVEL: 'info',
    },
  });
}

/** `total` requests over `connections` keep-alive connections, closed loop. */
async function measure(target: Target, total: number, connections: number, probe: CpuProbe): Promise<Measure> {
  // The scrape resets the service's event-loop window: it then spans this measurement alone.
  if (target.metrics) await eventLoopDelay(target.url);
  const before = await sampleCpu(probe);
  const result = await closedLoop({
    baseUrl: target.url,
    connections,
    requests: total,
    request: () => ({ method: 'POST', path: '/player/upload', headers: target.headers, body: target.body() }),
  });
  const cpu = await cpuPerRequest(probe, before, total);
  const eventLoop = target.metrics ? await eventLoopDelay(target.url) : null;
  return {
    requests: total,
    non200: result.unexpected + result.errors,
    seconds: result.seconds,
    rps: result.rps,
    p50: result.p50,
    p99: result.p99,
    cpu,
    eventLoop,
  };
}

// ---------------------------------------------------------------- uploads

/**
 * payload.time of the measured uploads: now, one millisecond apart at least (unique per player and
 * chart), after every generated one. Until 2026-11-29 it ran one second a play from an hour ago:
 * past the ~3,900th upload every play was more than 5 minutes ahead, flagged `time` and not
 * counted (no best, no rating), so most measured uploads skipped the work a counted one does. The
 * run now fails if any measured play is flagged.
 */
let clock = 0;

function uploadBody(session: { uid: number; accessToken: string }, serverID: number): string {
  return JSON.stringify(
    gameplayRecord({
      ...session,
      serverID,
      ...randomPlay(Math.random),
      time: (clock = Math.max(clock + 1, Date.now())),
    }),
  );
}

/** A game server and SESSIONS logged-in players picked among the ranked ones. */
async function setUpSessions(
  base: string,
  ranked: number,
): Promise<{ serverToken: string; serverID: number; sessions: Array<{ uid: number; accessToken: string }> }> {
  const admin = new AdminApi(base, BENCH_ADMIN_TOKEN);
  const created = await admin.createServer(`bench-${randomBytes(4).toString('hex')}`);
  const login = await expectCall<{ accessToken: string; serverID: number }>(
    200,
    base,
    'POST',
    '/server/login',
    created.bootstrapToken,
    { pluginVersion: 1, pluginSHA: 'bench' },
  );
  const sessions: Array<{ uid: number; accessToken: string }> = [];
  const picked = new Set<number>();
  while (picked.size < Math.min(SESSIONS, ranked)) picked.add(1 + Math.floor(Math.random() * ranked));
  for (const uid of picked) {
    const netToken = await admin.netToken(uid);
    const player = await expectCall<{ accessToken: string }>(200, base, 'POST', '/player/login', login.accessToken, {
      mode: 'TOKEN',
      version: 1,
      authToken: netToken,
    });
    sessions.push({ uid, accessToken: player.accessToken });
  }
  return { serverToken: login.accessToken, serverID: login.serverID, sessions };
}

// ---------------------------------------------------------------- run

interface SizeResult {
  size: string;
  state: Awaited<ReturnType<typeof counts>>;
  modes: Array<{ mode: string; startupSeconds: number; redisMemory?: string; rounds: Array<Record<string, Measure>> }>;
}

async function measureSize(size: string, ranked: number): Promise<SizeResult> {
  const state = await withClient(BENCH_DATABASE_URL, counts);
  console.log(`\n== ${size}: ${JSON.stringify(state)}`);
  const result: SizeResult = { size, state, modes: [] };
  const bare = await startBareServer('bench/upload/bare-server.ts', {}, '/health/ready');
  const monitor = new Client({ connectionString: BENCH_DATABASE_URL });
  await monitor.connect();
  const redis = await redisPid(BENCH_REDIS_URL);
  try {
    for (const mode of MODES) {
      // REDIS_PREFIX: start on an index built by an earlier run (minutes at 1M players) instead of building it again.
      const prefix = process.env.REDIS_PREFIX ?? `rhythmc-bench-upload:${randomBytes(4).toString('hex')}:`;
      const service = await startService(mode, prefix);
      const memory = mode === 'redis' ? await redisMemory(BENCH_REDIS_URL) : undefined;
      console.log(
        `service (${mode}) ready in ${(service.startedMs / 1000).toFixed(1)} s${memory ? `, Redis ${memory}` : ''}`,
      );
      const entry = {
        mode,
        startupSeconds: service.startedMs / 1000,
        redisMemory: memory,
        rounds: [] as Array<Record<string, Measure>>,
      };
      try {
        const base = service.url;
        const setup = await setUpSessions(base, ranked);
        let next = 0;
        const pick = () => setup.sessions[next++ % setup.sessions.length];
        const targets: Target[] = [
          {
            name: 'bare',
            pid: bare.pid,
            url: bare.url,
            metrics: false,
            headers: {},
            body: () => uploadBody(pick(), setup.serverID),
          },
          {
            name: 'service',
            pid: service.pid,
            url: base,
            metrics: true,
            headers: { Authorization: `Bearer ${setup.serverToken}` },
            body: () => uploadBody(pick(), setup.serverID),
          },
        ];
        const probeOf = (target: Target): CpuProbe => ({
          httpPids: [target.pid],
          monitor,
          redisPid: target.name === 'service' && mode === 'redis' ? redis : null,
        });
        const firstRecord = (
          await monitor.query<{ id: string }>('SELECT coalesce(max(id), 0)::text AS id FROM play_record')
        ).rows[0].id;
        for (const target of targets) {
          const warm = await measure(target, WARMUP, 4, probeOf(target));
          if (warm.non200 > 0) throw new Error(`${target.name}: ${warm.non200} of ${WARMUP} warm-up uploads failed`);
        }
        for (let round = 0; round < ROUNDS; round++) {
          const measures: Record<string, Measure> = {};
          for (const target of round % 2 === 0 ? targets : [...targets].reverse()) {
            measures[`${target.name} sequential`] = await measure(target, SEQUENTIAL, 1, probeOf(target));
            measures[`${target.name} c${CONCURRENCY}`] = await measure(
              target,
              CONCURRENT,
              CONCURRENCY,
              probeOf(target),
            );
          }
          for (const [name, m] of Object.entries(measures)) {
            console.log(
              `  [${mode} r${round + 1}] ${name.padEnd(18)} ${m.rps.toFixed(0).padStart(6)} req/s  p50 ${m.p50.toFixed(2)} ms  p99 ${m.p99.toFixed(2)} ms` +
                `  CPU ms/req http ${m.cpu.http.toFixed(3)} db ${m.cpu.db.toFixed(3)} redis ${m.cpu.redis.toFixed(3)} driver ${m.cpu.driver.toFixed(3)}` +
                `${m.eventLoop ? `  event-loop p99 ${m.eventLoop.p99Ms.toFixed(1)} ms max ${m.eventLoop.maxMs.toFixed(1)} ms` : ''}` +
                `  load average ${loadAverage()}${m.non200 ? `  NON-200: ${m.non200}` : ''}`,
            );
          }
          entry.rounds.push(measures);
        }
        // Every play the service stored must have been counted: a flagged play skips the best and the rating.
        const stored = (
          await monitor.query<{ plays: number; flagged: number }>(
            `SELECT count(*)::int AS plays, count(*) FILTER (WHERE cardinality(flags) > 0)::int AS flagged
               FROM play_record WHERE id > $1::bigint`,
            [firstRecord],
          )
        ).rows[0];
        console.log(`  [${mode}] the service stored ${stored.plays} plays, ${stored.flagged} flagged`);
        if (stored.flagged > 0) throw new Error(`${stored.flagged} measured plays were flagged: they were not counted`);
        // Ends the game server's session, which logs its players out: the next mode logs them in again.
        await call(base, 'POST', '/server/logout', setup.serverToken);
      } finally {
        await stopChild(service);
        if (mode === 'redis' && process.env.KEEP_REDIS_PREFIX !== '1') await dropRedisPrefix(BENCH_REDIS_URL, prefix);
      }
      result.modes.push(entry);
    }
  } finally {
    await monitor.end();
    await stopChild(bare);
  }
  return result;
}

/**
 * A markdown table of the means over the rounds, with the two ratios the issue sets targets for,
 * and the service's event-loop delay p99 of its highest round (one stalled round is what it is for).
 */
function summarise(results: SizeResult[]): string {
  const lines = [
    '| size | mode | target | req/s (c' +
      CONCURRENCY +
      ') | p50 / p99 ms (c' +
      CONCURRENCY +
      ') | p50 / p99 ms (sequential) | CPU ms/request: HTTP / PostgreSQL / Redis / driver | ' +
      'event-loop p99 ms, highest round (c' +
      CONCURRENCY +
      ' / sequential) | service ÷ bare: req/s, CPU |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  const eventLoopP99 = (ms: Measure[]) => {
    const p99s = ms.flatMap((m) => (m.eventLoop ? [m.eventLoop.p99Ms] : []));
    return p99s.length > 0 ? Math.max(...p99s).toFixed(1) : '–';
  };
  for (const size of results) {
    for (const mode of size.modes) {
      const pick = (name: string) => mode.rounds.map((round) => round[name]).filter(Boolean);
      const cpuTotal = (ms: Measure[]) => mean(ms.map((m) => m.cpu.http + m.cpu.db + m.cpu.redis + m.cpu.driver));
      for (const target of ['bare', 'service']) {
        const loaded = pick(`${target} c${CONCURRENCY}`);
        const sequential = pick(`${target} sequential`);
        const cpu = (key: keyof Measure['cpu']) => mean(loaded.map((m) => m.cpu[key])).toFixed(3);
        let ratio = '';
        if (target === 'service') {
          const bare = pick(`bare c${CONCURRENCY}`);
          ratio = `${((mean(loaded.map((m) => m.rps)) / mean(bare.map((m) => m.rps))) * 100).toFixed(0)} %, ${((cpuTotal(bare) / cpuTotal(loaded)) * 100).toFixed(0)} %`;
        }
        const eventLoop = target === 'service' ? `${eventLoopP99(loaded)} / ${eventLoopP99(sequential)}` : '–';
        lines.push(
          `| ${size.size} | ${mode.mode} | ${target} | ${mean(loaded.map((m) => m.rps)).toFixed(0)} | ${mean(loaded.map((m) => m.p50)).toFixed(2)} / ${mean(loaded.map((m) => m.p99)).toFixed(2)} | ` +
            `${mean(sequential.map((m) => m.p50)).toFixed(2)} / ${mean(sequential.map((m) => m.p99)).toFixed(2)} | ${cpu('http')} / ${cpu('db')} / ${cpu('redis')} / ${cpu('driver')} | ${eventLoop} | ${ratio} |`,
        );
      }
    }
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const started = Date.now();
  const results: SizeResult[] = [];
  if (process.env.SKIP_GENERATE !== '1') {
    await generateUploadData(BENCH_DATABASE_URL, PLAYERS, SMALL_RANKED, (line) => console.log(`  ${line}`));
    console.log(`generated the small size in ${secondsSince(started)} s`);
    results.push(await measureSize('100k plays', SMALL_RANKED));

    const grown = Date.now();
    await withClient(BENCH_DATABASE_URL, async (client) => {
      await loadPlays(client, SMALL_RANKED + 1, LARGE_RANKED);
      console.log(`  plays loaded in ${secondsSince(grown)} s`);
      await deriveRatings(client, SMALL_RANKED + 1, LARGE_RANKED);
      console.log(`  bests and ratings derived in ${secondsSince(grown)} s`);
      await analyze(client);
    });
    console.log(`grew to the large size in ${secondsSince(grown)} s`);
  }
  results.push(await measureSize(`${(LARGE_RANKED * 10).toLocaleString('en')} plays`, LARGE_RANKED));

  const table = summarise(results);
  console.log(`\n${table}`);
  mkdirSync(OUT_DIR, { recursive: true });
  writeFileSync(
    join(OUT_DIR, 'upload.json'),
    JSON.stringify({ date: new Date().toISOString(), results, table }, null, 2),
  );
  console.log(`\ndone in ${secondsSince(started)} s; results in bench/.out/upload.json`);
}

runMain(main, stopAllChildren);
