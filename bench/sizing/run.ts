/**
 * The sizing benchmark (docs/operations.md "Sizing"): what a player costs the deployment, per
 * operation class and per player-hour, measured as CPU-seconds of each process (Linux /proc: the
 * service's process, every thread of it; the PostgreSQL backends of the benchmark database; a
 * private Redis) divided by the operations done, which a loaded machine moves far less than
 * latency; and the memory (the service's resident memory broken down, the embedded database's
 * WebAssembly heap, PostgreSQL's bytes per player and per play, Redis's bytes per player).
 *
 * One service, one of DATABASE (postgres | embedded), with REDIS=1 a private Redis (postgres
 * only), SERVERS × PLAYERS_PER_SERVER simulated players (bench/simulate: the plugin's calls) on
 * PLAYERS registered players with 10 plays each. Phases, each measured alone:
 *   start       the service's resident memory once ready;
 *   logins      every server boots, every player logs in (login, state sync, resume_session);
 *   background  BACKGROUND_SECONDS with no uploads: the servers' sockets, churn (1 % of the
 *               players leave a minute and come back), chat 1 a minute per server (the logins'
 *               resume_session was just sent: the next falls 240 s later, outside the phase);
 *   resumes     RESUME_PHASE_SECONDS with resume_session every RESUME_SECONDS instead of 240 s;
 *               per resume = (CPU of the phase − the background's for as long) ÷ resumes;
 *   uploads     WARMUP_SECONDS unmeasured, then STEP_SECONDS at RATE uploads/s on top of the
 *               background; per upload = (CPU of the
 *               phase − the background's CPU for as long) ÷ uploads; each upload followed, as the
 *               simulator does, by a balance sync (1 in 2), a collection sync (1 in 10) and an
 *               option sync (1 in 50);
 *   burst       every server restarts at once: every player logs in again (CPU per player).
 *
 *   npm run build
 *   npm run bench:sizing                                    # postgres, no Redis, PLAYERS=100000
 *   REDIS=1 npm run bench:sizing
 *   DATABASE=embedded PLAYERS=10000 npm run bench:sizing    # builds the embedded data dir once (bench/.out/sizing-embedded-<PLAYERS>)
 *   SERVICE_BUILD_ROOT=/path/to/other/checkout DATABASE=embedded PLAYERS=10000 npm run bench:sizing   # another build (its dist/), e.g. the one before a change
 *
 * Environment: BENCH_DATABASE_URL (rhythmc_bench_sizing, generated when it lacks the players),
 * PLAYERS (100000), SERVERS (20), PLAYERS_PER_SERVER (50), RATE (100), STEP_SECONDS (40),
 * BACKGROUND_SECONDS (40), RESUME_SECONDS (10), RESUME_PHASE_SECONDS (30), WARMUP_SECONDS (15),
 * UPLOADS_PER_HOUR (20: the player-hour's uploads, the last line of the summary), SERVICE_ENV / SERVICE_NODE_ARGS (bench/harness/process.ts).
 * Results: bench/.out/sizing-<database>[-redis].json and a summary on stdout.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { Client } from 'pg';
import { EmbeddedDatabase } from '../../src/database/embedded/embedded-database';
import { backendCpu, cpuDelta, cpuMs } from '../harness/cpu';
import { databaseExists, withClient } from '../harness/database';
import { BENCH_ADMIN_TOKEN, benchDatabaseUrl, intFromEnv, loadAverage, OUT_DIR, runMain } from '../harness/env';
import { scrapeMetrics } from '../harness/event-loop';
import {
  analyze,
  counts,
  deriveRatings,
  generateResourceTree,
  loadCharts,
  loadCollections,
  loadPlayers,
  loadPlays,
} from '../harness/generate';
import { memoryBreakdown, MemoryBreakdown } from '../harness/memory';
import { Child, memoryOf, mib, startServiceProcess, stopAllChildren, stopChild } from '../harness/process';
import { startPrivateRedis } from '../harness/redis';
import { startIdentityProvider } from '../simulate/identity-provider';
import { Network } from '../simulate/network';
import { GENERATED_TAGS, GENERATED_TITLES, generateUploadData } from '../upload/generate';

const DATABASE = process.env.DATABASE ?? 'postgres';
const EMBEDDED = DATABASE === 'embedded';
const WITH_REDIS = process.env.REDIS === '1';
const DATABASE_URL = benchDatabaseUrl('rhythmc_bench_sizing');
const PLAYERS = intFromEnv('PLAYERS', 100_000);
const SERVERS = intFromEnv('SERVERS', 20);
const PLAYERS_PER_SERVER = intFromEnv('PLAYERS_PER_SERVER', 50);
const RATE = intFromEnv('RATE', 100);
const STEP_SECONDS = intFromEnv('STEP_SECONDS', 40);
const BACKGROUND_SECONDS = intFromEnv('BACKGROUND_SECONDS', 40);
const RESUME_SECONDS = intFromEnv('RESUME_SECONDS', 10);
const RESUME_PHASE_SECONDS = intFromEnv('RESUME_PHASE_SECONDS', 30);
const WARMUP_SECONDS = intFromEnv('WARMUP_SECONDS', 15);
/** Uploads a player makes in an hour online (docs/decisions.md "Sizing: a player-hour"). */
const UPLOADS_PER_HOUR = intFromEnv('UPLOADS_PER_HOUR', 20);
const MiB = 2 ** 20;

/** CPU-seconds of each process class over a stretch. */
interface Cpu {
  service: number;
  db: number;
  redis: number;
}

interface Probe {
  servicePid: number;
  monitor: Client | null;
  redisPid: number | null;
}

async function sample(probe: Probe): Promise<{ service: number; db: Map<number, number>; redis: number; at: number }> {
  return {
    service: cpuMs(probe.servicePid),
    db: probe.monitor ? await backendCpu(probe.monitor) : new Map(),
    redis: probe.redisPid === null ? 0 : cpuMs(probe.redisPid),
    at: performance.now(),
  };
}

async function measure<T>(probe: Probe, work: () => Promise<T>): Promise<{ result: T; cpu: Cpu; seconds: number }> {
  const before = await sample(probe);
  const result = await work();
  const after = await sample(probe);
  return {
    result,
    seconds: (after.at - before.at) / 1000,
    cpu: {
      service: (after.service - before.service) / 1000,
      db: cpuDelta(before.db, after.db) / 1000,
      redis: (after.redis - before.redis) / 1000,
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const perOp = (cpu: Cpu, ops: number): Cpu => ({
  service: (cpu.service * 1000) / Math.max(1, ops),
  db: (cpu.db * 1000) / Math.max(1, ops),
  redis: (cpu.redis * 1000) / Math.max(1, ops),
});
const minus = (a: Cpu, b: Cpu): Cpu => ({ service: a.service - b.service, db: a.db - b.db, redis: a.redis - b.redis });
const scaled = (a: Cpu, k: number): Cpu => ({ service: a.service * k, db: a.db * k, redis: a.redis * k });
const fmtMs = (c: Cpu) =>
  `service ${c.service.toFixed(3)} / db ${EMBEDDED ? '(in service)' : c.db.toFixed(3)} / Redis ${c.redis.toFixed(3)} ms`;

/**
 * The resident part of the embedded database's WebAssembly memory: PGlite's heap is one anonymous
 * mapping of 128 MiB (its initial size) to 2 GiB (its maximum), the only one of that size in the
 * service's process (V8's own reservations are 4 GiB or more, its heap pages far smaller).
 */
function wasmResidentMiB(pid: number): number {
  const smaps = readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n');
  let total = 0;
  for (let i = 0; i < smaps.length; i++) {
    const header = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(smaps[i]);
    if (!header || header[3] !== '') continue;
    const size = Number(BigInt(`0x${header[2]}`) - BigInt(`0x${header[1]}`));
    if (size < 128 * MiB || size > 2 * 2 ** 30) continue;
    for (let j = i + 1; j < smaps.length && !/^[0-9a-f]+-/.test(smaps[j]); j++) {
      const rss = /^Rss:\s+(\d+) kB/.exec(smaps[j]);
      if (rss) total += Number(rss[1]) / 1024;
    }
  }
  return total;
}

interface MemoryNow extends MemoryBreakdown {
  peakRssMiB: number;
  wasmMiB: number;
}

async function memoryNow(service: Child): Promise<MemoryNow> {
  return {
    ...memoryBreakdown(service.pid, await scrapeMetrics(service.url)),
    peakRssMiB: mib(memoryOf(service.pid).peakRss),
    wasmMiB: wasmResidentMiB(service.pid),
  };
}

const fmtMemory = (m: MemoryNow) =>
  `RSS ${m.rssMiB.toFixed(0)} MiB (peak ${m.peakRssMiB}; V8 heap ${m.v8HeapMiB.toFixed(0)}, external ${m.externalMiB.toFixed(0)}, ` +
  `file-backed ${m.fileMiB.toFixed(0)}, WebAssembly ${m.wasmMiB.toFixed(0)}, other ${(m.otherMiB - m.wasmMiB).toFixed(0)})`;

/** The embedded data dir with PLAYERS players, built once: the service migrates it, then the generators fill it. */
async function embeddedTemplate(): Promise<string> {
  const dir = join(OUT_DIR, `sizing-embedded-${PLAYERS}`);
  if (existsSync(join(dir, 'ready'))) return dir;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const started = Date.now();
  const migrating = await startServiceProcess({
    databaseUrl: '',
    adminToken: BENCH_ADMIN_TOKEN,
    env: { DATA_DIR: join(dir, 'data'), RESOURCE_DIR: join(dir, 'resources') },
  });
  await stopChild(migrating);
  const database = await EmbeddedDatabase.start(join(dir, 'data'));
  try {
    await withClient(database.url, async (client) => {
      await loadPlayers(client, PLAYERS);
      await loadCharts(client);
      await loadCollections(client, GENERATED_TITLES, GENERATED_TAGS);
      await loadPlays(client, 1, PLAYERS);
      await deriveRatings(client, 1, PLAYERS);
      await analyze(client);
      await client.query('CHECKPOINT');
      console.log(
        `embedded data: ${JSON.stringify(await counts(client))} in ${((Date.now() - started) / 1000).toFixed(0)} s`,
      );
    });
  } finally {
    await database.stop();
  }
  writeFileSync(join(dir, 'ready'), new Date().toISOString());
  return dir;
}

async function ensurePostgresData(): Promise<void> {
  if (await databaseExists(DATABASE_URL)) {
    const state = await withClient(DATABASE_URL, counts).catch(() => null);
    if (state && state.players >= PLAYERS) {
      await withClient(DATABASE_URL, async (client) => {
        await client.query(
          `UPDATE player_session SET logged_out_at = now(), logout_reason = 'expired' WHERE logged_out_at IS NULL`,
        );
        await client.query(`UPDATE server_session SET ended_at = now(), end_reason = 'logout' WHERE ended_at IS NULL`);
        await client.query('VACUUM ANALYZE');
      });
      return;
    }
  }
  await generateUploadData(DATABASE_URL, PLAYERS, PLAYERS, (line) => console.log(`  ${line}`));
}

/** PostgreSQL's bytes per player and per play: the tables (indexes and TOAST included) that grow with each. */
async function postgresBytes(client: Client): Promise<Record<string, number>> {
  const { rows } = await client.query<{ name: string; bytes: string; rows: string }>(
    `SELECT c.relname AS name, pg_total_relation_size(c.oid) AS bytes, c.reltuples::bigint AS rows
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY pg_total_relation_size(c.oid) DESC`,
  );
  const size = (name: string) => Number(rows.find((row) => row.name === name)?.bytes ?? NaN);
  const count = (name: string) => Number(rows.find((row) => row.name === name)?.rows ?? NaN);
  const database = Number(
    (await client.query<{ b: string }>('SELECT pg_database_size(current_database()) AS b')).rows[0].b,
  );
  return {
    databaseMiB: database / MiB,
    bytesPerPlay: size('play_record') / count('play_record'),
    bytesPerBest: size('player_chart_best') / count('player_chart_best'),
    bytesPerPlayerRow: size('player') / count('player'),
    bytesPerPlayerAll: (database - size('play_record')) / count('player'),
    plays: count('play_record'),
    players: count('player'),
  };
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'rhythmc-sizing-'));
  const idp = await startIdentityProvider();
  const redis = WITH_REDIS && !EMBEDDED ? await startPrivateRedis() : null;
  let service: Child | null = null;
  let monitor: Client | null = null;
  const loads: number[] = [loadAverage()];
  try {
    const dataDir = join(work, 'data');
    if (EMBEDDED) {
      const template = await embeddedTemplate();
      cpSync(join(template, 'data'), dataDir, { recursive: true });
      rmSync(join(dataDir, 'pglite.lock'), { force: true });
    } else {
      await ensurePostgresData();
      monitor = new Client({ connectionString: DATABASE_URL });
      await monitor.connect();
    }
    const resourceDir = join(work, 'resources');
    generateResourceTree(resourceDir, 200, 64 * 1024);
    service = await startServiceProcess({
      buildRoot: process.env.SERVICE_BUILD_ROOT || undefined,
      databaseUrl: EMBEDDED ? '' : DATABASE_URL,
      redisUrl: redis?.url ?? '',
      adminToken: BENCH_ADMIN_TOKEN,
      log: `sizing-${DATABASE}.log`,
      env: { DATA_DIR: dataDir, RESOURCE_DIR: resourceDir, IDENTITY_PROVIDER_URL: idp.url },
    });
    await sleep(2_000);
    const atStart = await memoryNow(service);
    console.log(
      `${DATABASE}${redis ? ' + Redis' : ''}, ${PLAYERS} players: ready in ${(service.startedMs / 1000).toFixed(1)} s; ${fmtMemory(atStart)}`,
    );
    const probe: Probe = { servicePid: service.pid, monitor, redisPid: redis?.pid ?? null };
    const network = new Network(
      {
        urls: [service.url],
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
      () => undefined,
    );
    await network.provision();

    const logins = await measure(probe, () => network.start());
    const online = network.onlinePlayers;
    loads.push(loadAverage());
    const loginCalls = network.metrics.report().calls;
    console.log(
      `logins: ${online} players online in ${logins.seconds.toFixed(1)} s; per player ${fmtMs(perOp(logins.cpu, online))}; ` +
        `calls ${loginCalls.map((c) => `${c.call} ${c.count}`).join(', ')}`,
    );

    await sleep(5_000);
    let window = network.metrics.openWindow();
    const background = await measure(probe, () => sleep(BACKGROUND_SECONDS * 1000));
    const backgroundCalls = window.stop().report();
    loads.push(loadAverage());
    const playerHours = (online * background.seconds) / 3600;
    const backgroundPerPlayerHour = scaled(background.cpu, 1000 / playerHours);
    console.log(
      `background: ${background.seconds.toFixed(0)} s, ${online} online; per online player-hour ${fmtMs(backgroundPerPlayerHour)}; ` +
        `calls/player-hour ${backgroundCalls.calls.map((c) => `${c.call} ${(c.count / playerHours).toFixed(2)}`).join(', ')}`,
    );

    // resume_session, every RESUME_SECONDS instead of 240 s so that enough of them fall in the phase.
    network.setResumeInterval(RESUME_SECONDS);
    window = network.metrics.openWindow();
    const resumePhase = await measure(probe, () => sleep(RESUME_PHASE_SECONDS * 1000));
    const resumesSeen = window.stop();
    network.setResumeInterval(240);
    loads.push(loadAverage());
    const resumes = resumesSeen.count('ws resume_session');
    const resumeCpu = minus(resumePhase.cpu, scaled(background.cpu, resumePhase.seconds / background.seconds));
    console.log(
      `resume_session: ${resumes} in ${resumePhase.seconds.toFixed(0)} s; per resume ${fmtMs(perOp(resumeCpu, resumes))}`,
    );

    // Warm-up: the service's upload path compiled by V8 before it is measured.
    network.setUploadRate(RATE);
    await sleep(WARMUP_SECONDS * 1000);
    window = network.metrics.openWindow();
    const uploadPhase = await measure(probe, () => sleep(STEP_SECONDS * 1000));
    const seen = window.stop();
    loads.push(loadAverage());
    network.setUploadRate(0);
    const uploadCalls = seen.report();
    const uploads = seen.count('POST /player/upload') - seen.unexpectedOf('POST /player/upload');
    const uploadCpu = minus(uploadPhase.cpu, scaled(background.cpu, uploadPhase.seconds / background.seconds));
    const latencies = seen.latencies('POST /player/upload').sort((a, b) => a - b);
    const p = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
    console.log(
      `uploads: ${uploads} in ${uploadPhase.seconds.toFixed(0)} s (${(uploads / uploadPhase.seconds).toFixed(0)}/s, p50 ${p(0.5).toFixed(1)} ms, p99 ${p(0.99).toFixed(1)} ms, unexpected ${uploadCalls.unexpected}); ` +
        `per upload with its syncs ${fmtMs(perOp(uploadCpu, uploads))}; calls ${uploadCalls.calls.map((c) => `${c.call} ${c.count}`).join(', ')}`,
    );
    const afterUploads = await memoryNow(service);

    await sleep(3_000);
    const burst = await measure(probe, () => network.restart());
    loads.push(loadAverage());
    console.log(
      `burst: ${burst.result.players} players logged in again in ${(burst.result.loginsMs / 1000).toFixed(1)} s; per player ${fmtMs(perOp(burst.cpu, burst.result.players))}`,
    );
    const atEnd = await memoryNow(service);
    console.log(`memory after the uploads: ${fmtMemory(afterUploads)}; at the end: ${fmtMemory(atEnd)}`);
    await network.stop();

    let storage: Record<string, number> = {};
    if (monitor) storage = await postgresBytes(monitor);
    else
      storage = {
        dataDirMiB: Number(execFileSync('du', ['-sk', dataDir], { encoding: 'utf8' }).split('\t')[0]) / 1024,
      };
    let redisMemory: Record<string, number> = {};
    if (redis) {
      const client = new Redis(redis.url);
      const info = await client.info('memory');
      client.disconnect();
      const used = Number(/used_memory:(\d+)/.exec(info)?.[1]);
      redisMemory = { usedMiB: used / MiB, bytesPerPlayer: used / PLAYERS };
    }
    console.log(`storage: ${JSON.stringify(storage)}${redis ? `; Redis ${JSON.stringify(redisMemory)}` : ''}`);
    // A player-hour (docs/operations.md "Sizing"): one login, a resume_session every 240 s,
    // UPLOADS_PER_HOUR uploads with their syncs, and the background.
    const playerHour: Cpu = [
      perOp(burst.cpu, burst.result.players),
      scaled(perOp(resumeCpu, resumes), 3600 / 240),
      scaled(perOp(uploadCpu, uploads), UPLOADS_PER_HOUR),
      backgroundPerPlayerHour,
    ].reduce((sum, part) => ({
      service: sum.service + part.service,
      db: sum.db + part.db,
      redis: sum.redis + part.redis,
    }));
    console.log(`player-hour (1 login, 15 resumes, ${UPLOADS_PER_HOUR} uploads, background): ${fmtMs(playerHour)}`);
    console.log(`load average ${Math.min(...loads)}–${Math.max(...loads)}`);

    mkdirSync(OUT_DIR, { recursive: true });
    const file = join(OUT_DIR, `sizing-${DATABASE}${redis ? '-redis' : ''}.json`);
    writeFileSync(
      file,
      JSON.stringify(
        {
          date: new Date().toISOString(),
          database: DATABASE,
          redis: redis !== null,
          serviceEnv: process.env.SERVICE_ENV ?? '',
          players: PLAYERS,
          online,
          memory: { atStart, afterUploads, atEnd },
          perLoginMs: perOp(logins.cpu, online),
          backgroundPerPlayerHourMs: backgroundPerPlayerHour,
          backgroundCallsPerPlayerHour: Object.fromEntries(
            backgroundCalls.calls.map((c) => [c.call, c.count / playerHours]),
          ),
          perResumeMs: perOp(resumeCpu, resumes),
          perUploadMs: perOp(uploadCpu, uploads),
          upload: {
            count: uploads,
            seconds: uploadPhase.seconds,
            p50: p(0.5),
            p99: p(0.99),
            unexpected: uploadCalls.unexpected,
          },
          perBurstLoginMs: perOp(burst.cpu, burst.result.players),
          uploadsPerHour: UPLOADS_PER_HOUR,
          playerHourMs: playerHour,
          storage,
          redisMemory,
          loadAverage: [Math.min(...loads), Math.max(...loads)],
        },
        null,
        2,
      ),
    );
    console.log(`results in ${file}`);
  } finally {
    await stopChild(service);
    await monitor?.end();
    await redis?.stop();
    await idp.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

runMain(main, stopAllChildren);
