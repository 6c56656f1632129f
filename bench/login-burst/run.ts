/**
 * The login burst (issue #16): every game server restarts at once and its players log in again
 * (ONLINE through the simulator's identity provider, or OFFLINE_REFRESH with the resume token
 * they got) and sync their state (collections, balance, resume_session), exactly as the plugin
 * simulator (bench/simulate) does it. The figure is the CPU per player of the deployment: the
 * service process, the PostgreSQL backends of the database and Redis (/proc), which unlike wall
 * time holds on a shared machine; beside it the SQL round trips per player (the service's
 * `rhythmc_db_queries_total`), wall time, p50/p99 per call and the load average.
 *
 * Per configuration (CONFIGS: `redis` = one instance with REDIS_URL, `no-redis` = one without):
 *   1. the service starts (the build) on the database;
 *   2. SERVERS servers × PLAYERS_PER_SERVER players are provisioned and log in for the first time
 *      (the cold start: half the servers online-mode, the others Net Token, then continueEnabled
 *      on and resume tokens), measured the same way;
 *   3. GAP_SECONDS of quiet, longer than the service's reuse of identity-provider answers (60 s),
 *      so the burst's ONLINE logins ask the provider as a restart hours later would;
 *   4. the burst: every server logs in again without logging out (its old session is replaced,
 *      its socket closed with 4002, its catalogs load) and its players log in again and sync.
 *
 *   npm run build
 *   npm run bench:login-burst
 *   CPU_PROF=1 CONFIGS=redis npm run bench:login-burst   # + a CPU profile of the service during the burst
 *
 * Data: BENCH_DATABASE_URL (rhythmc_bench_login), created anew at each run as a copy of
 * TEMPLATE_DATABASE (rhythmc_bench_network, the network-day data: 1,000,000 players, 10,000,000
 * plays; REUSE_DATA=1 keeps the copy an earlier run left); the generated players 1..N are logged
 * in, spread over the range. Never writes into the template. Environment: SERVERS (100), PLAYERS_PER_SERVER (200), CONFIGS (redis,no-redis),
 * GAP_SECONDS (65), LOGIN_CONCURRENCY (4, per server, as in network-day), RESUME_INTERVAL (3600:
 * no periodic resume_session inside the measured stretches, only the one after each login),
 * the `redis` configuration's Redis: a private redis-server started for the run (its CPU is the
 * service's alone; the service builds its rank index there first, several minutes for 1,000,000
 * players), or with SHARED_REDIS=1 BENCH_REDIS_URL, where REDIS_PREFIX (rhythmc-bench-login:) is
 * kept between runs with KEEP_REDIS_PREFIX=1 so the index is not built again (no run here uploads,
 * so it stays right; but other users of that Redis count in its CPU), CPU_PROF=1 (profile the burst: bench/.out/login-burst-<config>.cpuprofile and its
 * summary; the profiler's own CPU inflates that run's figures). Results: bench/.out/login-burst.json.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { Cores, CpuProbe, deploymentCores, measureCpu, redisPid } from '../harness/cpu';
import { databaseExists, withClient } from '../harness/database';
import {
  assertBenchDatabase,
  BENCH_ADMIN_TOKEN,
  BENCH_REDIS_URL,
  benchDatabaseUrl,
  databaseName,
  fmt,
  intFromEnv,
  listFromEnv,
  OUT_DIR,
  runMain,
  withDatabase,
} from '../harness/env';
import { metricValue, scrapeMetrics } from '../harness/event-loop';
import { generateResourceTree } from '../harness/generate';
import { summarize } from '../harness/load';
import { freePort, memoryOf, mib, startServiceProcess, stopAllChildren, stopChild } from '../harness/process';
import { connectProfiler, CpuProfiler, inspectArgs, summarizeProfile } from '../harness/profiler';
import { dropRedisPrefix, startPrivateRedis } from '../harness/redis';
import { startIdentityProvider } from '../simulate/identity-provider';
import { Collector } from '../simulate/metrics';
import { Network } from '../simulate/network';

const DATABASE_URL = benchDatabaseUrl('rhythmc_bench_login');
const TEMPLATE_DATABASE = process.env.TEMPLATE_DATABASE ?? 'rhythmc_bench_network';
const REUSE_DATA = process.env.REUSE_DATA === '1';
const SERVERS = intFromEnv('SERVERS', 100);
const PLAYERS_PER_SERVER = intFromEnv('PLAYERS_PER_SERVER', 200);
const CONFIGS = listFromEnv('CONFIGS', ['redis', 'no-redis']);
const GAP_SECONDS = intFromEnv('GAP_SECONDS', 65);
const LOGIN_CONCURRENCY = intFromEnv('LOGIN_CONCURRENCY', 4);
const RESUME_INTERVAL = intFromEnv('RESUME_INTERVAL', 3600);
const REDIS_PREFIX = process.env.REDIS_PREFIX ?? 'rhythmc-bench-login:';
const CPU_PROF = process.env.CPU_PROF === '1';
/** Redis of the `redis` configuration: a private redis-server (default; its CPU is the service's alone) or SHARED_REDIS=1 for BENCH_REDIS_URL. */
const SHARED_REDIS = process.env.SHARED_REDIS === '1';

/** The calls of a player's login and sync, in the report's order. */
const PLAYER_CALLS = [
  'POST /player/login ONLINE',
  'POST /player/login OFFLINE_REFRESH',
  'POST /player/login TOKEN',
  'POST /player/options',
  'POST /player/collections',
  'POST /player/economy',
  'ws resume_session',
];

interface Stretch {
  players: number;
  seconds: number;
  cpuSeconds: Cores;
  /** Deployment CPU (service + PostgreSQL + Redis) per player, ms. */
  cpuMsPerPlayer: number;
  perPlayerMs: { service: number; db: number; redis: number };
  queries: number;
  queriesPerPlayer: number;
  /** Seconds on two dedicated cores: the deployment's CPU over 2. */
  dedicatedSeconds: number;
  calls: Array<{ call: string; count: number; byStatus: Record<string, number>; p50: number; p99: number }>;
  unexpected: number;
  firstUnexpected: string[];
  /** `uptime`'s load averages (1, 5, 15 min) before and after. */
  loadBefore: string;
  loadAfter: string;
}

interface ConfigResult {
  config: string;
  redis: boolean;
  startupSeconds: number;
  coldStart: Stretch;
  burst: Stretch & { serversUpMs: number; loginsMs: number; syncedMs: number; failedLogins: number };
  peakRssMiB: number;
  identityLookups: { coldStart: number; burst: number };
  profile: string | null;
}

const uptime = () => execFileSync('uptime', { encoding: 'utf8' }).trim();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A fresh copy of the template (an earlier run's logins, sessions and balances would change what
 * this one measures), or with REUSE_DATA=1 the copy there is, its sessions left open closed.
 */
async function ensureData(): Promise<number> {
  assertBenchDatabase(DATABASE_URL);
  if (!REUSE_DATA && (await databaseExists(DATABASE_URL))) {
    console.log(`dropping ${databaseName(DATABASE_URL)}, the copy an earlier run used (REUSE_DATA=1 keeps it)`);
    await withClient(withDatabase(DATABASE_URL, 'postgres'), (client) =>
      client.query(`DROP DATABASE "${databaseName(DATABASE_URL)}"`),
    );
  }
  if (!(await databaseExists(DATABASE_URL))) {
    const name = databaseName(DATABASE_URL);
    console.log(`creating ${name} as a copy of ${TEMPLATE_DATABASE}`);
    await withClient(withDatabase(DATABASE_URL, 'postgres'), async (client) => {
      for (let attempt = 1; ; attempt++) {
        try {
          await client.query(`CREATE DATABASE "${name}" TEMPLATE "${TEMPLATE_DATABASE}"`);
          return;
        } catch (error) {
          // 55006: the template is in use by another session; it is only read, so wait and retry.
          if ((error as { code?: string }).code !== '55006' || attempt >= 60) throw error;
          await sleep(5_000);
        }
      }
    });
  }
  return withClient(DATABASE_URL, async (client) => {
    const players = await client.query(
      `UPDATE player_session SET logged_out_at = now(), logout_reason = 'expired' WHERE logged_out_at IS NULL`,
    );
    const servers = await client.query(
      `UPDATE server_session SET ended_at = now(), end_reason = 'logout' WHERE ended_at IS NULL`,
    );
    const { rows } = await client.query<{ n: string }>(
      `SELECT coalesce(max(uid), 0) AS n FROM player WHERE username LIKE 'bench\\_%'`,
    );
    console.log(
      `data: ${databaseName(DATABASE_URL)}, generated players 1..${rows[0].n}; sessions left open by an earlier run closed: ${players.rowCount} players, ${servers.rowCount} servers`,
    );
    return Number(rows[0].n);
  });
}

/** Runs `work` and measures it: CPU of the deployment, SQL statements of the service, calls of the simulator. */
async function measure<T extends object>(
  probe: CpuProbe,
  url: string,
  network: Network,
  players: (result: T) => number,
  work: () => Promise<T>,
): Promise<{ result: T; stretch: Stretch }> {
  const loadBefore = uptime();
  const queriesBefore = metricValue(await scrapeMetrics(url), 'rhythmc_db_queries_total');
  const window = network.metrics.openWindow();
  const { result, cpuSeconds, seconds } = await measureCpu(probe, work);
  const seen: Collector = window.stop();
  const queries = metricValue(await scrapeMetrics(url), 'rhythmc_db_queries_total') - queriesBefore;
  const count = Math.max(1, players(result));
  const report = seen.report();
  const stretch: Stretch = {
    players: players(result),
    seconds,
    cpuSeconds,
    cpuMsPerPlayer: (deploymentCores(cpuSeconds) * 1000) / count,
    perPlayerMs: {
      service: (cpuSeconds.service * 1000) / count,
      db: (cpuSeconds.db * 1000) / count,
      redis: (cpuSeconds.redis * 1000) / count,
    },
    queries,
    queriesPerPlayer: queries / count,
    dedicatedSeconds: deploymentCores(cpuSeconds) / 2,
    calls: report.calls.map(({ call, count: n, byStatus }) => {
      const latency = summarize(seen.latencies(call));
      return { call, count: n, byStatus, p50: latency.p50, p99: latency.p99 };
    }),
    unexpected: report.unexpected,
    firstUnexpected: report.firstUnexpected.slice(0, 10),
    loadBefore,
    loadAfter: uptime(),
  };
  return { result, stretch };
}

function describe(name: string, s: Stretch): string {
  const calls = s.calls
    .filter((c) => PLAYER_CALLS.includes(c.call) || c.call.startsWith('POST /server/login'))
    .map(
      (c) =>
        `    ${c.call.padEnd(36)} ${String(c.count).padStart(7)}  p50 ${c.p50.toFixed(1)} ms, p99 ${c.p99.toFixed(1)} ms`,
    )
    .join('\n');
  return (
    `  ${name}: ${fmt(s.players)} players in ${s.seconds.toFixed(1)} s; CPU ${s.cpuMsPerPlayer.toFixed(2)} ms per player ` +
    `(service ${s.perPlayerMs.service.toFixed(2)}, PostgreSQL ${s.perPlayerMs.db.toFixed(2)}, Redis ${s.perPlayerMs.redis.toFixed(2)}; ` +
    `simulator ${((s.cpuSeconds.simulator * 1000) / Math.max(1, s.players)).toFixed(2)}), ` +
    `${s.queriesPerPlayer.toFixed(1)} SQL round trips per player, ${s.dedicatedSeconds.toFixed(1)} s on 2 dedicated cores; ` +
    `unexpected ${s.unexpected}\n    load before: ${s.loadBefore}\n    load after:  ${s.loadAfter}\n${calls}` +
    (s.firstUnexpected.length > 0 ? `\n    first unexpected:\n      ${s.firstUnexpected.join('\n      ')}` : '')
  );
}

async function runConfig(
  config: string,
  existingPlayers: number,
  idp: Awaited<ReturnType<typeof startIdentityProvider>>,
  resourceDir: string,
  monitor: Client,
  redisUrl: string,
): Promise<ConfigResult> {
  const redis = config === 'redis';
  console.log(`\n== ${config}: one instance, ${redis ? `Redis ${redisUrl} (prefix ${REDIS_PREFIX})` : 'no Redis'}`);
  const inspectPort = CPU_PROF ? await freePort() : 0;
  const service = await startServiceProcess({
    name: `login-burst ${config}`,
    databaseUrl: DATABASE_URL,
    redisUrl: redis ? redisUrl : '',
    adminToken: BENCH_ADMIN_TOKEN,
    log: `login-burst-${config}.log`,
    env: {
      REDIS_KEY_PREFIX: REDIS_PREFIX,
      RESOURCE_DIR: resourceDir,
      IDENTITY_PROVIDER_URL: idp.url,
      LOG_LEVEL: 'warn',
      ...(CPU_PROF ? { NODE_OPTIONS: inspectArgs(inspectPort) } : {}),
    },
  });
  let profiler: CpuProfiler | null = null;
  try {
    console.log(`  ready in ${(service.startedMs / 1000).toFixed(1)} s`);
    const network = new Network(
      {
        urls: [service.url],
        adminToken: BENCH_ADMIN_TOKEN,
        identityProvider: true,
        servers: SERVERS,
        players: PLAYERS_PER_SERVER,
        resumeInterval: RESUME_INTERVAL,
        onlineShare: 0.5,
        loginConcurrency: LOGIN_CONCURRENCY,
        existingPlayers,
        churn: 0,
        chatPerMinute: 0,
        seed: 1,
        uploadRate: 0,
        followAdvertised: false,
      },
      (line) => console.log(`  ${line}`),
    );
    const probe: CpuProbe = {
      httpPids: [service.pid],
      monitor,
      redisPid: redis ? await redisPid(redisUrl) : null,
    };
    await network.provision();
    const lookups0 = idp.lookups();
    const cold = await measure(
      probe,
      service.url,
      network,
      () => network.onlinePlayers,
      () => network.start(),
    );
    console.log(describe('cold start', cold.stretch));
    const lookups1 = idp.lookups();
    console.log(`  ${GAP_SECONDS} s of quiet (identity-provider answers are reused for 60 s)`);
    await sleep(GAP_SECONDS * 1000);
    if (CPU_PROF) {
      profiler = await connectProfiler(inspectPort);
      await profiler.start();
    }
    const burst = await measure(
      probe,
      service.url,
      network,
      (result) => result.players,
      () => network.restart(),
    );
    let profile: string | null = null;
    if (profiler) {
      mkdirSync(OUT_DIR, { recursive: true });
      profile = join(OUT_DIR, `login-burst-${config}.cpuprofile`);
      await profiler.stop(profile);
      const summary = summarizeProfile(JSON.parse(readFileSync(profile, 'utf8')), 40);
      writeFileSync(`${profile}.txt`, summary);
      console.log(`  CPU profile of the burst: ${profile} (summary: ${profile}.txt)\n${summary}`);
    }
    console.log(describe('burst', burst.stretch));
    console.log(
      `    servers up in ${(burst.result.serversUpMs / 1000).toFixed(1)} s, logins done in ${(burst.result.loginsMs / 1000).toFixed(1)} s, synced in ${(burst.result.syncedMs / 1000).toFixed(1)} s, failed logins ${burst.result.failedLogins}`,
    );
    const lookups2 = idp.lookups();
    const peakRssMiB = mib(memoryOf(service.pid).peakRss);
    await network.stop();
    return {
      config,
      redis,
      startupSeconds: service.startedMs / 1000,
      coldStart: cold.stretch,
      burst: {
        ...burst.stretch,
        serversUpMs: burst.result.serversUpMs,
        loginsMs: burst.result.loginsMs,
        syncedMs: burst.result.syncedMs,
        failedLogins: burst.result.failedLogins,
      },
      peakRssMiB,
      identityLookups: { coldStart: lookups1 - lookups0, burst: lookups2 - lookups1 },
      profile,
    };
  } finally {
    profiler?.close();
    await stopChild(service);
  }
}

function table(results: ConfigResult[]): string {
  const lines = [
    '| configuration | stretch | players | CPU ms per player: total (service / PostgreSQL / Redis) | SQL round trips per player | on 2 dedicated cores | wall | login p50 / p99 ms | unexpected | load average before → after |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of results) {
    for (const [name, s] of [
      ['cold start', r.coldStart],
      ['burst', r.burst],
    ] as const) {
      const logins = s.calls.filter((c) => c.call.startsWith('POST /player/login'));
      const login = logins.sort((a, b) => b.count - a.count)[0];
      lines.push(
        `| ${r.config} | ${name} | ${fmt(s.players)} | ${s.cpuMsPerPlayer.toFixed(2)} (${s.perPlayerMs.service.toFixed(2)} / ${s.perPlayerMs.db.toFixed(2)} / ${s.perPlayerMs.redis.toFixed(2)}) | ` +
          `${s.queriesPerPlayer.toFixed(1)} | ${s.dedicatedSeconds.toFixed(1)} s | ${s.seconds.toFixed(1)} s | ` +
          `${login ? `${login.p50.toFixed(0)} / ${login.p99.toFixed(0)}` : '–'} | ${s.unexpected} | ${s.loadBefore.replace(/^.*load average: /, '')} → ${s.loadAfter.replace(/^.*load average: /, '')} |`,
      );
    }
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  for (const config of CONFIGS)
    if (!['redis', 'no-redis'].includes(config)) throw new Error(`unknown configuration "${config}"`);
  const existingPlayers = await ensureData();
  if (existingPlayers < SERVERS * PLAYERS_PER_SERVER)
    throw new Error(`${databaseName(DATABASE_URL)} has ${existingPlayers} generated players, fewer than the run needs`);
  const work = mkdtempSync(join(tmpdir(), 'rhythmc-login-burst-'));
  const resourceDir = join(work, 'resources');
  generateResourceTree(resourceDir, 100, 64 * 1024);
  const idp = await startIdentityProvider();
  const monitor = new Client({ connectionString: DATABASE_URL });
  await monitor.connect();
  const results: ConfigResult[] = [];
  const privateRedis = !SHARED_REDIS && CONFIGS.includes('redis') ? await startPrivateRedis() : null;
  const redisUrl = privateRedis?.url ?? BENCH_REDIS_URL;
  try {
    for (const config of CONFIGS) {
      results.push(await runConfig(config, existingPlayers, idp, resourceDir, monitor, redisUrl));
      mkdirSync(OUT_DIR, { recursive: true });
      writeFileSync(
        join(OUT_DIR, 'login-burst.json'),
        JSON.stringify(
          { date: new Date().toISOString(), servers: SERVERS, playersPerServer: PLAYERS_PER_SERVER, results },
          null,
          2,
        ),
      );
    }
  } finally {
    await monitor.end();
    await idp.stop();
    rmSync(work, { recursive: true, force: true });
    if (privateRedis) await privateRedis.stop();
    else if (process.env.KEEP_REDIS_PREFIX !== '1')
      await dropRedisPrefix(BENCH_REDIS_URL, REDIS_PREFIX).catch(() => undefined);
  }
  console.log(
    `\n${SERVERS} servers × ${PLAYERS_PER_SERVER} players on ${databaseName(DATABASE_URL)} (${fmt(existingPlayers)} generated players)\n`,
  );
  console.log(table(results));
  console.log('\nresults in bench/.out/login-burst.json');
}

runMain(main, stopAllChildren);
