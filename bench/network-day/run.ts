/**
 * The network-day benchmark: SERVERS game servers × PLAYERS_PER_SERVER players (the plugin
 * simulator, bench/simulate) against PLAYERS registered players and their 10 plays each (the
 * upload generator's data), on PostgreSQL, for each configuration of CONFIGS:
 *   one       one instance, no Redis (rank index in process: the single-server deployment)
 *   one-redis one instance with Redis
 *   two       two instances sharing PostgreSQL and Redis, game servers spread round-robin
 * Per configuration:
 *   1. cold start: every server boots and every player logs in;
 *   2. sustained uploads: the offered upload rate (open loop) steps up (RATES, STEP_SECONDS each)
 *      while the rest of the network runs (resume_session every 240 s, syncs, churn, chat) until
 *      saturation; the figure is the highest rate whose uploads answered with p99 under
 *      P99_LIMIT_MS, all of them 200; also the most uploads per second answered;
 *   3. login burst: every server restarts at once; time until all players are logged in again;
 *   4. peak RSS of each service process (VmHWM), and at the end of the cold start, of every step
 *      and of the burst what each one's resident memory is made of (file-backed, V8 heap,
 *      external: the rank index's blocks among them, the rest: bench/harness/memory.ts).
 * The cold start, every rate step and the burst also carry the event-loop delay (p50, p99, max) of
 * each instance over that window, from its own /metrics (`rhythmc_event_loop_delay_seconds`: a
 * scrape right before the window resets it, one right after reads it); the table shows the highest
 * p99 among the instances. Each step and the burst also carry the server's write-ahead log
 * (`pg_stat_wal`, `pg_stat_bgwriter`: kB per upload or per player, the share of full-page images,
 * checkpoints), with the settings that drive it printed at the start.
 * In the same run a bare Express + pg upload handler (bench/upload/bare-server.ts) takes the same
 * rate steps, so the upload figure is also a ratio that holds on a noisy machine. Every figure
 * carries the load average of the moment.
 *
 *   npm run build
 *   npm run bench:network-day            # generates the data first when the database lacks it (≈ 6–12 min)
 *
 * Environment: BENCH_DATABASE_URL (rhythmc_bench_network), BENCH_REDIS_URL, PLAYERS (1000000),
 * SERVERS (100), PLAYERS_PER_SERVER (200), CONFIGS (two,one-redis,one), RATES
 * (50,100,150,200,300,400,500,600,800), STEP_SECONDS (30), P99_LIMIT_MS (50), RESOURCE_FILES (2000),
 * BARE_RATES (RATES then 1200,1600,2400,3200), SKIP_BARE=1, BARE_ONLY=1 (measure the bare handler again into the last
 * results), REDIS_PREFIX / KEEP_REDIS_PREFIX=1 (reuse a built rank index), INDEX_LOSS_RATE (Redis
 * configurations, after the steps: delete the rank index's ready marker at that upload rate and
 * print every call's answers over INDEX_LOSS_SECONDS, 60), SERVICE_NODE_ARGS (node flags of each
 * service), SERVICE_ENV (`NAME=value` pairs of each service's environment only, e.g. a malloc:
 * `LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 MALLOC_CONF=…`), REPORT_ONLY=1 (print the
 * table of the last run again). Results:
 * bench/.out/network-day.json and a markdown table on stdout.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { join } from 'node:path';
import Redis from 'ioredis';
import { Client } from 'pg';
import { formatMemory, MemoryBreakdown, memoryBreakdown } from '../harness/memory';
import { Cores, CpuProbe, deploymentCores, measureCpu, redisPid } from '../harness/cpu';
import { databaseExists, WalCounters, walCounters, walDelta, writePathSettings, withClient } from '../harness/database';
import {
  EventLoopDelay,
  eventLoopDelays,
  formatEventLoop,
  routeLatencyCounts,
  scrapeMetrics,
  uploadPhaseCounts,
} from '../harness/event-loop';
import {
  BENCH_ADMIN_TOKEN,
  BENCH_REDIS_URL,
  benchDatabaseUrl,
  databaseName,
  fmt,
  intFromEnv,
  listFromEnv,
  loadAverage,
  OUT_DIR,
  runMain,
} from '../harness/env';
import { counts, generateResourceTree } from '../harness/generate';
import { openLoop, summarize } from '../harness/load';
import { gameplayRecord, randomPlay } from '../harness/payloads';
import {
  Child,
  memoryOf,
  mib,
  startBareServer,
  startServiceProcess,
  stopAllChildren,
  stopChild,
} from '../harness/process';
import { dropRedisPrefix } from '../harness/redis';
import { startIdentityProvider } from '../simulate/identity-provider';
import { BurstResult, Network } from '../simulate/network';
import { generateUploadData } from '../upload/generate';

const DATABASE_URL = benchDatabaseUrl('rhythmc_bench_network');
const PLAYERS = intFromEnv('PLAYERS', 1_000_000);
const SERVERS = intFromEnv('SERVERS', 100);
const PLAYERS_PER_SERVER = intFromEnv('PLAYERS_PER_SERVER', 200);
const CONFIGS = listFromEnv('CONFIGS', ['two', 'one-redis', 'one']);
const RATES = listFromEnv('RATES', ['50', '100', '150', '200', '300', '400', '500', '600', '800']).map(Number);
/** The bare handler goes on further: its ceiling is far above the service's. */
const BARE_RATES = listFromEnv('BARE_RATES', [...RATES.map(String), '1200', '1600', '2400', '3200']).map(Number);
const STEP_SECONDS = intFromEnv('STEP_SECONDS', 30);
const P99_LIMIT_MS = intFromEnv('P99_LIMIT_MS', 50);
const RESOURCE_FILES = intFromEnv('RESOURCE_FILES', 2_000);
const SETTLE_SECONDS = 5;
/** Redis configurations: uploads/s offered while the rank index is lost (0: no such stretch). */
const INDEX_LOSS_RATE = intFromEnv('INDEX_LOSS_RATE', 0);
const INDEX_LOSS_SECONDS = intFromEnv('INDEX_LOSS_SECONDS', 60);

interface Step {
  offered: number;
  /** Uploads answered 200 per second of the step. */
  achieved: number;
  p50: number;
  p99: number;
  unexpected: number;
  /** Uploads not sent: no online player, or too many in flight. */
  notSent: number;
  /** Everything the simulated network called in the step, per second. */
  callsPerSecond: number;
  /** CPU used during the step, in cores: the service process(es) (or the bare handler), PostgreSQL, Redis, the simulator. */
  cores: Cores;
  /** The event-loop delay of each service instance over the step; absent for the bare handler (no /metrics) and in results of earlier runs. */
  eventLoop?: EventLoopDelay[];
  /** The server's WAL over the step (every database on it): MB/s, kB per upload answered, full-page images' share of its bytes (at 8 kB each, uncompressed), checkpoints. Absent in results of earlier runs. */
  wal?: { mbPerSecond: number; kbPerUpload: number; fullPageShare: number; checkpoints: number };
  /**
   * Where the upload p99 comes from: the share of the step's uploads (answered 200) that took
   * longer than the limit inside the service (its latency histogram, all instances), and the
   * simulator's own event-loop delay (its timers and answers wait behind it). Absent in results
   * of earlier runs. Approximate: the service's histograms are read by scrapes just outside the
   * step (a slightly wider window), and the phase histograms also count uploads whose client had
   * gone (answered, but not 200 to anyone).
   */
  overLimit?: {
    serviceShare: number;
    /** The shares of the step's uploads whose store phase (to the commit) or rank phase alone took longer than the limit. */
    storeShare: number;
    rankShare: number;
    simulatorLoopP99Ms: number;
    simulatorLoopMaxMs: number;
  };
  /** What each service instance's resident memory is made of at the step's end; absent for the bare handler and in results of earlier runs. */
  memory?: MemoryBreakdown[];
  loadAverage: number;
}

/** The highest event-loop delay p99 among the instances, ms; NaN without figures (the bare handler, results of earlier runs). */
const worstEventLoopP99 = (delays: EventLoopDelay[] | undefined) =>
  delays && delays.length > 0 ? Math.max(...delays.map((d) => d.p99Ms)) : NaN;
const msOrDash = (ms: number) => (Number.isFinite(ms) ? ms.toFixed(1) : '–');

/**
 * The upload rate at which the deployment (service, PostgreSQL, Redis) would use two whole cores,
 * from a least-squares line through (answered uploads/s, cores used) of the steps: what a
 * dedicated 2-core machine would sustain with this background network, whatever else ran on the
 * shared machine during the measurement. NaN with fewer than two steps.
 */
function projectedRate(all: Step[], cores = 2): number {
  // Past saturation the answered rate no longer follows the CPU spent, so those steps stay out of the line.
  const steps = all.filter((step) => !saturated(step));
  if (steps.length < 2) return NaN;
  const xs = steps.map((step) => step.achieved);
  const ys = steps.map((step) => deploymentCores(step.cores));
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  const slope =
    xs.reduce((sum, x, i) => sum + (x - mx) * (ys[i] - my), 0) / xs.reduce((sum, x) => sum + (x - mx) ** 2, 0);
  const intercept = my - slope * mx;
  return slope > 0 ? (cores - intercept) / slope : NaN;
}

interface ConfigResult {
  config: string;
  instances: number;
  redis: boolean;
  startupSeconds: number[];
  /** eventLoop: of each instance; absent in results of earlier runs (as in the burst). */
  coldStart: {
    ms: number;
    online: number;
    eventLoop?: EventLoopDelay[];
    memory?: MemoryBreakdown[];
    loadAverage: number;
  };
  steps: Step[];
  sustained: Step | null;
  burst:
    | (BurstResult & {
        loginP50: number;
        loginP99: number;
        unexpected: number;
        cpuSeconds: Cores;
        dedicatedSeconds: number;
        eventLoop?: EventLoopDelay[];
        memory?: MemoryBreakdown[];
        /** The server's WAL per player logged in again; absent in results of earlier runs. */
        walKbPerPlayer?: number;
        loadAverage: number;
      })
    | null;
  /** projectedRate of the steps. */
  projected2Cores: number;
  peakRssMiB: number[];
  unexpected: number;
  firstUnexpected: string[];
  /** WebSocket closes by code, frames received, calls sent a second time. */
  events: Record<string, number>;
  calls: Array<{
    call: string;
    count: number;
    byStatus: Record<string, number>;
    p50: number;
    p99: number;
    unexpected: number;
  }>;
  simulatorCpuSeconds: number;
}

const isSustained = (step: Step) =>
  step.p99 < P99_LIMIT_MS && step.unexpected === 0 && step.achieved >= step.offered * 0.95;
/**
 * The search goes on past a step that misses the p99 limit (on a shared machine a stall of a
 * neighbour shows in any p99) and stops at saturation: fewer than 90 % of the offered uploads
 * answered in the step (a queue is building up).
 */
const saturated = (step: Step) => step.achieved < step.offered * 0.9;
/** The highest step that met the limit. */
const sustainedOf = (steps: Step[]) => [...steps].sort((a, b) => b.offered - a.offered).find(isSustained) ?? null;
/** The most uploads per second answered in any step: the capacity. */
const capacityOf = (steps: Step[]) => Math.max(0, ...steps.map((step) => step.achieved));

async function ensureData(): Promise<void> {
  if (await databaseExists(DATABASE_URL)) {
    const state = await withClient(DATABASE_URL, counts).catch(() => null);
    if (state && state.players >= PLAYERS && state.plays >= PLAYERS * 10 * 0.99) {
      // A run stopped half-way leaves its sessions open, and the next run logs the same players in (409).
      const closed = await withClient(DATABASE_URL, async (client) => {
        const players = await client.query(
          `UPDATE player_session SET logged_out_at = now(), logout_reason = 'expired' WHERE logged_out_at IS NULL`,
        );
        const servers = await client.query(
          `UPDATE server_session SET ended_at = now(), end_reason = 'logout' WHERE ended_at IS NULL`,
        );
        // This machine's PostgreSQL runs without autovacuum: tables that earlier runs grew from
        // empty (sessions, collections, balances) would keep the plans of empty tables, and the
        // rows earlier runs updated stay as dead tuples (player_balance held 12 dead rows for
        // each live one after five runs). Vacuum what autovacuum would have by now (its default
        // threshold), then analyze everything.
        const { rows: bloated } = await client.query<{ name: string }>(
          `SELECT quote_ident(relname) AS name FROM pg_stat_user_tables WHERE n_dead_tup > 50 + 0.2 * n_live_tup`,
        );
        if (bloated.length > 0) await client.query(`VACUUM ${bloated.map((row) => row.name).join(', ')}`);
        await client.query('ANALYZE');
        return { players: players.rowCount, servers: servers.rowCount, vacuumed: bloated.length };
      });
      console.log(
        `data: ${JSON.stringify(state)} in ${databaseName(DATABASE_URL)}; sessions left open by an earlier run closed, tables vacuumed: ${JSON.stringify(closed)}`,
      );
      return;
    }
  }
  console.log(
    `generating ${PLAYERS.toLocaleString('en')} players and ${(PLAYERS * 10).toLocaleString('en')} plays into ${databaseName(DATABASE_URL)}`,
  );
  await generateUploadData(DATABASE_URL, PLAYERS, PLAYERS, (line) => console.log(`  ${line}`));
}

/** The tables a run grows from few rows to tens of thousands (sessions, balances, collections). */
const GROWING_TABLES = [
  'player_session',
  'server_session',
  'player_resume_token',
  'player_balance',
  'balance_history',
  'player_collection',
];

/**
 * This machine's PostgreSQL (and CI's) runs with autovacuum off. A production server analyzes a
 * table once a tenth of it changed; without that, the planner keeps the statistics of the run's
 * start (no open session), and the session statements' cached plans walk the index of open
 * sessions (20,000 entries at every resume_session: 4× the PostgreSQL CPU of the login burst,
 * seen 2026-11-26), and the rows the run updates (sessions renewed, balances synced) pile up as
 * dead tuples. So when autovacuum is off, the run vacuums and analyzes the growing tables every
 * 30 s, as autovacuum would, and at its pace: with autovacuum's cost-based delay (a manual VACUUM
 * does not sleep; until 2026-11-27 this one read those tables at full speed beside the steps).
 */
async function emulateAutoanalyze(): Promise<{ stop: () => Promise<void> }> {
  const client = new Client({ connectionString: DATABASE_URL });
  await client.connect();
  const { rows } = await client.query<{ autovacuum: string }>('SHOW autovacuum');
  if (rows[0].autovacuum === 'on') {
    await client.end();
    return { stop: () => Promise.resolve() };
  }
  // At autovacuum's pace, not a manual VACUUM's (which never sleeps): its cost-based delay, so
  // that the emulation reads and writes no faster than the worker it stands in for would.
  const { rows: pace } = await client.query<{ delay: string; limit: string }>(
    `SELECT current_setting('autovacuum_vacuum_cost_delay') AS delay,
            CASE current_setting('autovacuum_vacuum_cost_limit') WHEN '-1' THEN current_setting('vacuum_cost_limit')
                 ELSE current_setting('autovacuum_vacuum_cost_limit') END AS limit`,
  );
  await client.query(`SET vacuum_cost_delay = '${pace[0].delay}'`);
  await client.query(`SET vacuum_cost_limit = ${Number(pace[0].limit)}`);
  console.log(
    `autovacuum is off on this server: VACUUM (ANALYZE) ${GROWING_TABLES.join(', ')} every 30 s, as autovacuum would ` +
      `(vacuum_cost_delay ${pace[0].delay}, vacuum_cost_limit ${pace[0].limit}, autovacuum's)`,
  );
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = client.query(`VACUUM (ANALYZE) ${GROWING_TABLES.join(', ')}`).catch(() => undefined);
  }, 30_000);
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
      await client.end();
    },
  };
}

/**
 * The WAL of a step. A write's cost on the server is mostly its WAL: each commit waits for it to
 * be flushed, and right after a checkpoint every page a write touches for the first time is logged
 * whole (a full-page image), so frequent checkpoints (max_wal_size reached) multiply it.
 */
function walPerStep(wal: WalCounters, seconds: number, uploads: number): Step['wal'] {
  return {
    mbPerSecond: wal.bytes / 1e6 / seconds,
    kbPerUpload: uploads > 0 ? wal.bytes / 1e3 / uploads : 0,
    fullPageShare: wal.bytes > 0 ? Math.min(1, (wal.fullPageImages * 8192) / wal.bytes) : 0,
    checkpoints: wal.checkpoints,
  };
}

function formatWal(wal: Step['wal']): string {
  if (!wal) return 'WAL –';
  return `WAL ${wal.mbPerSecond.toFixed(1)} MB/s (${wal.kbPerUpload.toFixed(1)} kB per upload, full-page images ≤ ${(wal.fullPageShare * 100).toFixed(0)} %, ${wal.checkpoints} checkpoint(s))`;
}

interface ServiceUploadCounts {
  /** Uploads answered 200 so far, and those over the p99 limit inside the service. */
  count: number;
  over: number;
  /** Of those, the ones whose store phase (to the commit) or rank phase (after it) alone took longer than the limit. */
  storeOver: number;
  rankOver: number;
}

/** What the instances' histograms hold so far of the uploads answered (ServiceUploadCounts), summed. */
async function serviceUploadLatency(urls: string[]): Promise<ServiceUploadCounts> {
  const limit = P99_LIMIT_MS / 1000;
  const counts = (await Promise.all(urls.map((url) => scrapeMetrics(url)))).map((text) => {
    const route = routeLatencyCounts(text, '/player/upload', limit);
    return {
      count: route.count,
      over: route.over,
      storeOver: uploadPhaseCounts(text, 'store', limit).over,
      rankOver: uploadPhaseCounts(text, 'rank', limit).over,
    };
  });
  const sum = (key: keyof ServiceUploadCounts) => counts.reduce((total, c) => total + c[key], 0);
  return { count: sum('count'), over: sum('over'), storeOver: sum('storeOver'), rankOver: sum('rankOver') };
}

/**
 * What each instance's resident memory is made of right now (bench/harness/memory.ts). Its scrape
 * also ends the instance's event-loop window: call it only after a window was read.
 */
function memoryOfInstances(instances: Array<{ pid: number; url: string }>): Promise<MemoryBreakdown[]> {
  return Promise.all(instances.map(async ({ pid, url }) => memoryBreakdown(pid, await scrapeMetrics(url))));
}

function formatOverLimit(overLimit: Step['overLimit']): string {
  if (!overLimit) return 'over the limit: –';
  return (
    `uploads over ${P99_LIMIT_MS} ms inside the service ${(overLimit.serviceShare * 100).toFixed(2)} % ` +
    `(store phase alone ${(overLimit.storeShare * 100).toFixed(2)} %, rank phase alone ${(overLimit.rankShare * 100).toFixed(2)} %); ` +
    `simulator event-loop delay p99 ${overLimit.simulatorLoopP99Ms.toFixed(1)} ms (max ${overLimit.simulatorLoopMaxMs.toFixed(1)} ms)`
  );
}

/** The bare handler at the same rate steps (no background traffic): the machine's ceiling for an insert + select. */
async function bareSteps(monitor: Client): Promise<Step[]> {
  const bare = await startBareServer(
    'bench/upload/bare-server.ts',
    { BENCH_DATABASE_URL: DATABASE_URL },
    '/health/ready',
  );
  const probe: CpuProbe = { httpPids: [bare.pid], monitor, redisPid: null };
  const steps: Step[] = [];
  let clock = Date.now();
  const random = Math.random;
  const request = () => {
    const uid = 1 + Math.floor(random() * PLAYERS);
    return {
      method: 'POST' as const,
      path: '/player/upload',
      body: JSON.stringify(
        gameplayRecord({ uid, accessToken: 'bare', serverID: 1, ...randomPlay(random), time: (clock += 1) }),
      ),
    };
  };
  try {
    await openLoop({ baseUrl: bare.url, rate: 50, seconds: SETTLE_SECONDS, request });
    for (const rate of BARE_RATES) {
      const { result, cores } = await measureCpu(probe, () =>
        openLoop({ baseUrl: bare.url, rate, seconds: STEP_SECONDS, request, maxInFlight: 2_000 }),
      );
      const step: Step = {
        offered: rate,
        achieved: (result.requests - result.unexpected - result.errors) / result.seconds,
        p50: result.p50,
        p99: result.p99,
        unexpected: result.unexpected + result.errors,
        notSent: result.dropped,
        callsPerSecond: result.rps,
        cores,
        loadAverage: loadAverage(),
      };
      steps.push(step);
      console.log(
        `  bare ${rate}/s: achieved ${step.achieved.toFixed(0)}/s, p50 ${step.p50.toFixed(1)} ms, p99 ${step.p99.toFixed(1)} ms; ` +
          `cores: handler ${cores.service.toFixed(2)}, PostgreSQL ${cores.db.toFixed(2)}, driver ${cores.simulator.toFixed(2)}; load average ${step.loadAverage}`,
      );
      if (saturated(step)) break;
    }
  } finally {
    await stopChild(bare);
  }
  return steps;
}

async function runConfig(
  config: string,
  idpUrl: string,
  resourceDir: string,
  redisPrefix: string,
  monitor: Client,
): Promise<ConfigResult> {
  const instances = config === 'two' ? 2 : 1;
  const redis = config !== 'one';
  console.log(`\n== ${config}: ${instances} instance(s), ${redis ? 'Redis' : 'no Redis (rank index in process)'}`);
  const started: Child[] = [];
  const cpuBefore = process.cpuUsage();
  try {
    for (let i = 0; i < instances; i++) {
      const instance = await startServiceProcess({
        name: `${config} instance ${i + 1}`,
        databaseUrl: DATABASE_URL,
        redisUrl: redis ? BENCH_REDIS_URL : '',
        adminToken: BENCH_ADMIN_TOKEN,
        log: `network-day-${config}-${i + 1}.log`,
        env: {
          REDIS_KEY_PREFIX: redisPrefix,
          RESOURCE_DIR: resourceDir,
          IDENTITY_PROVIDER_URL: idpUrl,
          LOG_LEVEL: 'warn',
        },
      });
      started.push(instance);
      console.log(
        `  ${instance.name} ready in ${(instance.startedMs / 1000).toFixed(1)} s (RSS ${mib(memoryOf(instance.pid).rss)} MiB)`,
      );
    }
    const network = new Network(
      {
        urls: started.map((instance) => instance.url),
        adminToken: BENCH_ADMIN_TOKEN,
        identityProvider: true,
        servers: SERVERS,
        players: PLAYERS_PER_SERVER,
        resumeInterval: 240,
        onlineShare: 0.5,
        loginConcurrency: 4,
        existingPlayers: PLAYERS,
        churn: 0.01,
        chatPerMinute: 1,
        seed: 1,
        uploadRate: 0,
        followAdvertised: false,
      },
      (line) => console.log(`  ${line}`),
    );
    const probe: CpuProbe = {
      httpPids: started.map((instance) => instance.pid),
      monitor,
      redisPid: redis ? await redisPid(BENCH_REDIS_URL) : null,
    };
    const urls = started.map((instance) => instance.url);
    await network.provision();
    // Each scrape of an instance's /metrics ends its event-loop window and starts the next: this
    // one keeps the start-up and the provisioning out of the cold start's.
    await eventLoopDelays(urls);
    const cold = await network.start();
    const coldStart = {
      ms: cold.ms,
      online: network.onlinePlayers,
      eventLoop: await eventLoopDelays(urls),
      memory: await memoryOfInstances(started),
      loadAverage: loadAverage(),
    };
    console.log(
      `  cold start: ${coldStart.online} players online in ${(cold.ms / 1000).toFixed(1)} s; event-loop delay per instance ${formatEventLoop(coldStart.eventLoop)}; ${formatMemory(coldStart.memory)}`,
    );

    // Sustained uploads: step the offered rate up until p99 crosses the limit.
    const steps: Step[] = [];
    for (const rate of RATES) {
      network.setUploadRate(rate);
      await sleep(SETTLE_SECONDS * 1000);
      const offeredBefore = { ...network.uploads };
      const serviceBefore = await serviceUploadLatency(urls);
      await eventLoopDelays(urls);
      const simulatorLoop = monitorEventLoopDelay({ resolution: 10 });
      simulatorLoop.enable();
      const window = network.metrics.openWindow();
      const walBefore = await walCounters(monitor);
      const { cores } = await measureCpu(probe, () => sleep(STEP_SECONDS * 1000));
      const wal = walDelta(await walCounters(monitor), walBefore);
      const seen = window.stop();
      simulatorLoop.disable();
      const eventLoop = await eventLoopDelays(urls);
      const serviceAfter = await serviceUploadLatency(urls);
      const memory = await memoryOfInstances(started);
      const serviceUploads = serviceAfter.count - serviceBefore.count;
      const uploads = seen.latencies('POST /player/upload');
      const report = seen.report();
      const latency = summarize(uploads);
      const step: Step = {
        offered: rate,
        achieved: (seen.count('POST /player/upload') - seen.unexpectedOf('POST /player/upload')) / report.seconds,
        p50: latency.p50,
        p99: latency.p99,
        unexpected: seen.unexpectedOf('POST /player/upload'),
        notSent: network.uploads.noPlayer + network.uploads.dropped - offeredBefore.noPlayer - offeredBefore.dropped,
        callsPerSecond: report.calls.reduce((sum, call) => sum + call.count, 0) / report.seconds,
        cores,
        eventLoop,
        wal: walPerStep(wal, report.seconds, seen.count('POST /player/upload')),
        overLimit: {
          serviceShare: serviceUploads > 0 ? (serviceAfter.over - serviceBefore.over) / serviceUploads : NaN,
          storeShare: serviceUploads > 0 ? (serviceAfter.storeOver - serviceBefore.storeOver) / serviceUploads : NaN,
          rankShare: serviceUploads > 0 ? (serviceAfter.rankOver - serviceBefore.rankOver) / serviceUploads : NaN,
          // The histogram's values are nanoseconds; the timer's own 10 ms resolution is taken off.
          simulatorLoopP99Ms: Math.max(0, simulatorLoop.percentile(99) / 1e6 - 10),
          simulatorLoopMaxMs: Math.max(0, simulatorLoop.max / 1e6 - 10),
        },
        memory,
        loadAverage: loadAverage(),
      };
      steps.push(step);
      console.log(
        `  uploads ${rate}/s: achieved ${step.achieved.toFixed(0)}/s, p50 ${step.p50.toFixed(1)} ms, p99 ${step.p99.toFixed(1)} ms, ` +
          `unexpected ${step.unexpected}, not sent ${step.notSent}; all calls ${step.callsPerSecond.toFixed(0)}/s; ` +
          `cores: service ${cores.service.toFixed(2)}, PostgreSQL ${cores.db.toFixed(2)}, Redis ${cores.redis.toFixed(2)}, simulator ${cores.simulator.toFixed(2)}; ` +
          `event-loop delay per instance ${formatEventLoop(eventLoop)}; ${formatOverLimit(step.overLimit)}; ${formatWal(step.wal)}; ${formatMemory(memory)}; load average ${step.loadAverage}`,
      );
      if (saturated(step)) break;
    }
    const sustained = sustainedOf(steps);
    if (redis && INDEX_LOSS_RATE > 0) await indexLoss(network, urls, redisPrefix);

    // Login burst: every server restarts at once (no uploads meanwhile, for a clean figure).
    network.setUploadRate(0);
    await sleep(SETTLE_SECONDS * 1000);
    await eventLoopDelays(urls);
    const window = network.metrics.openWindow();
    const walBeforeBurst = await walCounters(monitor);
    const { result: burstResult, cpuSeconds: burstCpu } = await measureCpu(probe, () => network.restart());
    const burstWal = walDelta(await walCounters(monitor), walBeforeBurst);
    const seen = window.stop();
    const burstEventLoop = await eventLoopDelays(urls);
    const burstMemory = await memoryOfInstances(started);
    const logins = [
      'POST /player/login ONLINE',
      'POST /player/login OFFLINE_REFRESH',
      'POST /player/login TOKEN',
    ].flatMap((call) => seen.latencies(call));
    const loginLatency = summarize(logins);
    const burst = {
      ...burstResult,
      loginP50: loginLatency.p50,
      loginP99: loginLatency.p99,
      unexpected: seen.report().unexpected,
      cpuSeconds: burstCpu,
      // The burst's CPU spread over two dedicated cores: its length on a machine of its own.
      dedicatedSeconds: deploymentCores(burstCpu) / 2,
      eventLoop: burstEventLoop,
      memory: burstMemory,
      walKbPerPlayer: burstResult.players > 0 ? burstWal.bytes / 1e3 / burstResult.players : 0,
      loadAverage: loadAverage(),
    };
    console.log(
      `  burst: ${burst.servers} servers up in ${(burst.serversUpMs / 1000).toFixed(1)} s, ${burst.players} players logged in again in ${(burst.loginsMs / 1000).toFixed(1)} s ` +
        `(synced ${(burst.syncedMs / 1000).toFixed(1)} s; login p50 ${loginLatency.p50.toFixed(0)} ms, p99 ${loginLatency.p99.toFixed(0)} ms; failed ${burst.failedLogins}); ` +
        `CPU s: service ${burstCpu.service.toFixed(0)}, PostgreSQL ${burstCpu.db.toFixed(0)}, Redis ${burstCpu.redis.toFixed(0)}, simulator ${burstCpu.simulator.toFixed(0)} ` +
        `(${burst.dedicatedSeconds.toFixed(0)} s on 2 dedicated cores); event-loop delay per instance ${formatEventLoop(burstEventLoop)}; ` +
        `WAL ${burst.walKbPerPlayer.toFixed(1)} kB per player (${burstWal.checkpoints} checkpoint(s)); ${formatMemory(burstMemory)}; load average ${burst.loadAverage}`,
    );

    const peakRssMiB = started.map((instance) => mib(memoryOf(instance.pid).peakRss));
    await network.stop();
    const report = network.metrics.report();
    const cpu = process.cpuUsage(cpuBefore);
    return {
      config,
      instances,
      redis,
      startupSeconds: started.map((instance) => instance.startedMs / 1000),
      coldStart,
      steps,
      sustained,
      projected2Cores: projectedRate(steps),
      burst,
      peakRssMiB,
      unexpected: report.unexpected,
      firstUnexpected: report.firstUnexpected,
      events: report.events,
      calls: report.calls.map(({ call, count, byStatus, p50, p99, unexpected }) => ({
        call,
        count,
        byStatus,
        p50,
        p99,
        unexpected,
      })),
      simulatorCpuSeconds: (cpu.user + cpu.system) / 1e6,
    };
  } finally {
    await Promise.all(started.map((instance) => stopChild(instance)));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function table(results: ConfigResult[], bare: Step[]): string {
  const bareSustained = sustainedOf(bare);
  const bareCapacity = capacityOf(bare);
  // A baseline that never saturated within RATES is only a lower bound, and each ratio to it an upper bound.
  const bareOpen = bare.length > 0 && !bare.some(saturated);
  const atLeast = bareOpen ? '≥ ' : '';
  const atMost = bareOpen ? '≤ ' : '';
  const ratio = (value: number, base: number) => (base > 0 ? `${atMost}${((value / base) * 100).toFixed(0)} %` : '–');
  const loads = (values: number[]) => `${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)}`;
  const lines = [
    `| configuration | sustained uploads/s (p99 < ${P99_LIMIT_MS} ms) | p50 / p99 ms there | ÷ bare handler | most uploads/s answered (÷ bare) | uploads/s on 2 dedicated cores, projected | cold start: 20,000 players online | login burst: all servers restart (on 2 dedicated cores) | ` +
      `event-loop p99 ms, highest instance: sustained step / login burst | peak RSS | unexpected answers | load average |`,
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of results) {
    const s = r.sustained;
    const capacity = capacityOf(r.steps);
    lines.push(
      `| ${r.config} (${r.instances} instance${r.instances > 1 ? 's' : ''}${r.redis ? ', Redis' : ''}) | ${s ? fmt(s.offered) : `< ${RATES[0]}`} | ${s ? `${s.p50.toFixed(1)} / ${s.p99.toFixed(1)}` : '–'} | ` +
        `${s && bareSustained ? ratio(s.offered, bareSustained.offered) : '–'} | ${fmt(capacity)} (${ratio(capacity, bareCapacity)}) | ` +
        `${Number.isFinite(r.projected2Cores) ? fmt(r.projected2Cores) : '–'} | ` +
        `${(r.coldStart.ms / 1000).toFixed(0)} s | ` +
        `${r.burst ? `${(r.burst.loginsMs / 1000).toFixed(0)} s (${r.burst.dedicatedSeconds.toFixed(0)} s); ${fmt(r.burst.players)} logins, p99 ${r.burst.loginP99.toFixed(0)} ms` : '–'} | ` +
        `${msOrDash(worstEventLoopP99(s?.eventLoop))} / ${msOrDash(worstEventLoopP99(r.burst?.eventLoop))} | ${r.peakRssMiB.map((m) => `${fmt(m)} MiB`).join(' + ')} | ${r.unexpected} | ` +
        `${loads([...r.steps.map((step) => step.loadAverage), r.burst?.loadAverage ?? r.steps[0].loadAverage])} |`,
    );
  }
  if (bare.length > 0) {
    lines.push(
      `| bare Express + pg upload handler | ${bareSustained ? `${atLeast}${fmt(bareSustained.offered)}` : `< ${RATES[0]}`} | ${bareSustained ? `${bareSustained.p50.toFixed(1)} / ${bareSustained.p99.toFixed(1)}` : '–'} | | ` +
        `${atLeast}${fmt(bareCapacity)} | ${Number.isFinite(projectedRate(bare)) ? fmt(projectedRate(bare)) : '–'} | | | | | | ${loads(bare.map((step) => step.loadAverage))} |`,
    );
  }
  lines.push(
    '',
    'Every step (offered/s: answered/s, p50 / p99 ms, cores used by the service + PostgreSQL + Redis, event-loop p99 ms of the highest instance (services only), the WAL of the server per upload answered, load average):',
  );
  for (const [name, steps] of [['bare', bare] as const, ...results.map((r) => [r.config, r.steps] as const)]) {
    lines.push(
      `- ${name}: ${steps
        .map(
          (step) =>
            `${step.offered}: ${step.achieved.toFixed(0)}, ${step.p50.toFixed(1)} / ${step.p99.toFixed(1)}, ${deploymentCores(step.cores).toFixed(2)}, ` +
            `${step.eventLoop ? `${msOrDash(worstEventLoopP99(step.eventLoop))}, ` : ''}` +
            `${step.wal ? `${step.wal.kbPerUpload.toFixed(1)} kB WAL, ` : ''}${step.loadAverage.toFixed(1)}`,
        )
        .join('; ')}`,
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  if (process.env.REPORT_ONLY === '1' || process.env.BARE_ONLY === '1') {
    // The table again from the last run's results; with BARE_ONLY=1 after measuring the bare handler again.
    const file = join(OUT_DIR, 'network-day.json');
    const last = JSON.parse(readFileSync(file, 'utf8')) as {
      bare: Step[];
      results: ConfigResult[];
      bareMeasuredAt?: string;
    };
    if (process.env.BARE_ONLY === '1') {
      const monitor = new Client({ connectionString: DATABASE_URL });
      await monitor.connect();
      try {
        last.bare = await bareSteps(monitor);
        last.bareMeasuredAt = new Date().toISOString();
      } finally {
        await monitor.end();
      }
      writeFileSync(file, JSON.stringify(last, null, 2));
    }
    console.log(table(last.results, last.bare));
    return;
  }
  const startedAt = Date.now();
  await ensureData();
  const work = mkdtempSync(join(tmpdir(), 'rhythmc-network-day-'));
  const resourceDir = join(work, 'resources');
  generateResourceTree(resourceDir, RESOURCE_FILES, 256 * 1024);
  const idp = await startIdentityProvider();
  // One prefix for the Redis configurations (they keep the rank index up to date between them),
  // dropped at the end. REDIS_PREFIX reuses the index of an earlier run (built in about 6 minutes)
  // and KEEP_REDIS_PREFIX=1 keeps it; only sound while no run without Redis uploaded in between.
  const redisPrefix = process.env.REDIS_PREFIX ?? `rhythmc-bench-network:${randomBytes(4).toString('hex')}:`;
  const results: ConfigResult[] = [];
  let bare: Step[] = [];
  // Reads which PostgreSQL backends serve the benchmark database, for their CPU time.
  const monitor = new Client({ connectionString: DATABASE_URL });
  await monitor.connect();
  const analyzer = await emulateAutoanalyze();
  console.log(`PostgreSQL: ${await writePathSettings(monitor)}`);
  try {
    if (process.env.SKIP_BARE !== '1') {
      console.log('\n== bare Express + pg upload handler, same rate steps');
      bare = await bareSteps(monitor);
    }
    for (const config of CONFIGS) {
      if (!['one', 'one-redis', 'two'].includes(config)) throw new Error(`unknown configuration "${config}"`);
      results.push(await runConfig(config, idp.url, resourceDir, redisPrefix, monitor));
      mkdirSync(OUT_DIR, { recursive: true });
      writeFileSync(
        join(OUT_DIR, 'network-day.json'),
        JSON.stringify(
          {
            date: new Date().toISOString(),
            servers: SERVERS,
            playersPerServer: PLAYERS_PER_SERVER,
            players: PLAYERS,
            bare,
            results,
          },
          null,
          2,
        ),
      );
    }
  } finally {
    await analyzer.stop();
    await monitor.end();
    await idp.stop();
    if (process.env.KEEP_REDIS_PREFIX !== '1')
      await dropRedisPrefix(BENCH_REDIS_URL, redisPrefix).catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
  }
  console.log(
    `\n${SERVERS} servers × ${PLAYERS_PER_SERVER} players, ${PLAYERS.toLocaleString('en')} registered players; done in ${((Date.now() - startedAt) / 60_000).toFixed(1)} min\n`,
  );
  console.log(table(results, bare));
  console.log('\nresults in bench/.out/network-day.json');
}

runMain(main, stopAllChildren);

/**
 * The rank index lost under load (INDEX_LOSS_RATE): at that upload rate, the index's ready marker
 * is deleted from Redis, as a flush or an eviction would; the instances answer ranks from SQL
 * while they rebuild it. Prints every call's answers by status over INDEX_LOSS_SECONDS, then waits
 * until the index is ready again (before the login burst).
 */
async function indexLoss(network: Network, urls: string[], redisPrefix: string): Promise<void> {
  network.setUploadRate(INDEX_LOSS_RATE);
  await sleep(SETTLE_SECONDS * 1000);
  const window = network.metrics.openWindow();
  const redis = new Redis(BENCH_REDIS_URL, { lazyConnect: true });
  await redis.connect();
  try {
    await redis.del(`${redisPrefix}rank3:ready`);
  } finally {
    redis.disconnect();
  }
  await sleep(INDEX_LOSS_SECONDS * 1000);
  const report = window.stop().report();
  console.log(`  rank index lost at ${INDEX_LOSS_RATE} uploads/s, the next ${INDEX_LOSS_SECONDS} s:`);
  for (const call of report.calls)
    console.log(
      `    ${call.call.padEnd(36)} ${String(call.count).padStart(6)}  ${JSON.stringify(call.byStatus)}  p50 ${call.p50.toFixed(0)} ms, p99 ${call.p99.toFixed(0)} ms`,
    );
  network.setUploadRate(0);
  const deadline = Date.now() + 600_000;
  for (;;) {
    const ready = await Promise.all(
      urls.map(async (url) =>
        /rhythmc_rank_index_ready\{[^}]*\} 1\b/.test(await (await fetch(`${url}/metrics`)).text()),
      ),
    );
    if (ready.every(Boolean)) break;
    if (Date.now() > deadline) throw new Error('the rank index was not ready again within 10 minutes');
    await sleep(5_000);
  }
  console.log('  rank index ready again');
}
