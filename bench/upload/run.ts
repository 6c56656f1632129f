/**
 * Score-upload benchmark (issue 5), one run: 1,000,000 players; first 100,000 plays (10,000
 * ranked players), then grown to 10,000,000 plays (all 1,000,000 players ranked). At each size
 * the service (PostgreSQL; rank index in Redis, and in process) and a bare Express + pg handler
 * (one insert, one indexed select) take the same uploads over loopback, alternating:
 *   - latency: one request at a time (p50, p99);
 *   - throughput: CONCURRENCY keep-alive connections, closed loop (requests/s, p50, p99).
 *
 *   npx ts-node --transpile-only bench/upload/run.ts
 *
 * Environment: BENCH_DATABASE_URL (dropped and recreated; its name must contain "bench"),
 * BENCH_REDIS_URL, PLAYERS (1000000), SMALL_RANKED (10000), LARGE_RANKED (= PLAYERS), MODES
 * (redis,memory), ROUNDS (2), SEQUENTIAL (1000), CONCURRENT (8000), CONCURRENCY (16), SESSIONS
 * (200), SKIP_GENERATE=1 (reuse a database generated at the large size: measures only that).
 * Prints the results and writes bench/.out/upload.json. Every loop is bounded by a count.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import Redis from 'ioredis';
import { Client } from 'pg';
import { ADMIN_TOKEN, BENCH_DATABASE_URL, BENCH_REDIS_URL, intFromEnv, percentile, seconds, withClient } from './common';
import { analyze, CHARTS, counts, deriveRatings, loadPlays, loadPlayersAndCharts, recreateDatabase } from './generate';

const ROOT = join(__dirname, '..', '..');
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
  cpu: { http: number; db: number; redis: number; driver: number };
}

/** What a measurement reads CPU time from (Linux /proc). */
interface CpuProbe {
  httpPid: number;
  monitor: Client;
  redisPid: number | null;
}

interface Target {
  name: string;
  pid: number;
  url: string;
  headers: Record<string, string>;
  /** A fresh upload body (new record) for one of the logged-in players. */
  body: () => string;
}

// ---------------------------------------------------------------- processes

function startChild(name: string, args: string[], env: Record<string, string>, ready: RegExp): Promise<{ child: ChildProcess; port: number; startedMs: number }> {
  const started = Date.now();
  mkdirSync(join(ROOT, 'bench', '.out'), { recursive: true });
  const log = createWriteStream(join(ROOT, 'bench', '.out', `upload-${name.replace(/\W+/g, '-')}.log`), { flags: 'a' });
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', ...args], {
    cwd: ROOT,
    env: { ...process.env, TS_NODE_TRANSPILE_ONLY: 'true', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    let listening = false;
    child.stdout?.on('data', (chunk: Buffer) => {
      log.write(chunk);
      // The service logs a line per request at LOG_LEVEL=info: once it listens, keep only a tail.
      output = listening ? (output + chunk.toString()).slice(-2000) : output + chunk.toString();
      if (listening) return;
      const match = ready.exec(output);
      if (match) {
        listening = true;
        resolve({ child, port: Number(match[1]), startedMs: Date.now() - started });
      }
    });
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}: ${output.slice(-2000)}`)));
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

async function startService(mode: 'redis' | 'memory', port: number, redisPrefix: string) {
  return startChild(
    `service (${mode})`,
    ['src/main.ts'],
    {
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: BENCH_DATABASE_URL,
      REDIS_URL: mode === 'redis' ? BENCH_REDIS_URL : '',
      REDIS_KEY_PREFIX: redisPrefix,
      ADMIN_TOKEN,
      THROTTLE_LOGIN_LIMIT: '1000000',
      SERVER_TOKEN_TTL_SECONDS: '86400',
      PLAYER_TOKEN_TTL_SECONDS: '86400',
      LOG_LEVEL: 'info',
    },
    /listening on 127\.0\.0\.1:(\d+)/,
  );
}

/** Deletes the Redis keys of a prefix (SCAN + UNLINK, bounded by the key count). */
async function dropRedisPrefix(prefix: string): Promise<void> {
  const redis = new Redis(BENCH_REDIS_URL);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 10_000);
      if (keys.length > 0) await redis.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

async function redisMemory(): Promise<string> {
  const redis = new Redis(BENCH_REDIS_URL);
  try {
    return /used_memory_human:(\S+)/.exec(await redis.info('memory'))?.[1] ?? '?';
  } finally {
    redis.disconnect();
  }
}

// ---------------------------------------------------------------- HTTP

function post(agent: Agent, url: URL, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, method: 'POST', headers: { ...headers, 'Content-Length': Buffer.byteLength(body) } }, (res) => {
      res.on('data', () => undefined);
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function json(method: string, url: string, token: string | null, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(url, {
    method,
    headers: { 'Content-Type': 'application/json', 'User-Agent': 'rhythmc-bench/1.0 node/20', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

/** User + system CPU time of a process so far, in ms (Linux /proc: fields 14 and 15, in 1/100 s). */
function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return NaN;
  }
}

/** CPU of the PostgreSQL backends connected to the benchmark database (the monitor's own excluded). */
async function backendCpu(monitor: Client): Promise<Map<number, number>> {
  const { rows } = await monitor.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
  return new Map(rows.map((row) => [row.pid, cpuMs(row.pid)]));
}

/**
 * CPU used between two readings by the backends: the growth of those alive at both, plus all of
 * those that connected in between (pools open connections lazily and close idle ones).
 */
function cpuDelta(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, end] of after) {
    const start = before.get(pid) ?? 0;
    if (Number.isFinite(start) && Number.isFinite(end) && end >= start) sum += end - start;
  }
  return sum;
}

async function redisPid(): Promise<number | null> {
  const redis = new Redis(BENCH_REDIS_URL);
  try {
    const pid = Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1]);
    return Number.isFinite(pid) && cpuMs(pid) >= 0 ? pid : null;
  } finally {
    redis.disconnect();
  }
}

/** `total` requests over `connections` keep-alive connections, closed loop. */
async function measure(target: Target, total: number, connections: number, probe: CpuProbe): Promise<Measure> {
  const before = {
    http: cpuMs(probe.httpPid),
    db: await backendCpu(probe.monitor),
    redis: probe.redisPid === null ? 0 : cpuMs(probe.redisPid),
    driver: process.cpuUsage(),
  };
  const url = new URL(`${target.url}/player/upload`);
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const headers = { 'Content-Type': 'application/json', 'User-Agent': 'rhythmc-bench/1.0 node/20', ...target.headers };
  const latencies: number[] = [];
  let non200 = 0;
  let issued = 0;
  const started = process.hrtime.bigint();
  const worker = async () => {
    while (issued < total) {
      issued++;
      const body = target.body();
      const t0 = process.hrtime.bigint();
      const status = await post(agent, url, headers, body);
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      if (status !== 200) non200++;
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  const driver = process.cpuUsage(before.driver);
  const cpu = {
    http: (cpuMs(probe.httpPid) - before.http) / total,
    db: cpuDelta(before.db, await backendCpu(probe.monitor)) / total,
    redis: probe.redisPid === null ? 0 : (cpuMs(probe.redisPid) - before.redis) / total,
    driver: (driver.user + driver.system) / 1000 / total,
  };
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return { requests: total, non200, seconds: elapsed, rps: total / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99), cpu };
}

// ---------------------------------------------------------------- uploads

let clock = Date.UTC(2030, 0, 1);

function uploadBody(session: { uid: number; accessToken: string }, serverID: number): string {
  const time = (clock += 1_000);
  const acc = Math.random() < 0.15 ? 100 : Math.round((80 + 20 * Math.sqrt(Math.random())) * 100) / 100;
  const stats = { perfect: 300, great: 5, miss: 1 };
  return JSON.stringify({
    player: { playerUID: session.uid, accessToken: session.accessToken, timestamp: time + 250 },
    server: { serverID, serverName: 'bench', country: 'DE' },
    payload: {
      type: 'gameplay',
      levelID: 1 + Math.floor(CHARTS * Math.random() ** 2),
      acc,
      isRival: false,
      isWin: false,
      rivalUID: 0,
      rivalAcc: 0,
      tapStats: stats,
      holdStats: stats,
      dodgeStats: stats,
      lookStats: stats,
      maxCombo: 300,
      pass: Math.random() > 0.1,
      fullCombo: false,
      allPerfect: acc === 100,
      isNewRecord: false,
      player_arena: 'bench',
      time,
    },
  });
}

/** A game server and SESSIONS logged-in players picked among the ranked ones. */
async function setUpSessions(base: string, ranked: number): Promise<{ serverToken: string; serverID: number; sessions: Array<{ uid: number; accessToken: string }> }> {
  const created = await json('POST', `${base}/admin/servers`, ADMIN_TOKEN, { name: `bench-${randomBytes(4).toString('hex')}`, country: 'DE' });
  const login = await json('POST', `${base}/server/login`, created.body.bootstrapToken, { pluginVersion: 1, pluginSHA: 'bench' });
  if (login.status !== 200) throw new Error(`server login: ${login.status}`);
  const sessions: Array<{ uid: number; accessToken: string }> = [];
  const picked = new Set<number>();
  while (picked.size < Math.min(SESSIONS, ranked)) picked.add(1 + Math.floor(Math.random() * ranked));
  for (const uid of picked) {
    const token = await json('POST', `${base}/admin/players/${uid}/net-token`, ADMIN_TOKEN);
    const player = await json('POST', `${base}/player/login`, login.body.accessToken, { mode: 'TOKEN', version: 1, authToken: token.body.netToken });
    if (player.status !== 200) throw new Error(`player login: ${player.status} ${JSON.stringify(player.body)}`);
    sessions.push({ uid, accessToken: player.body.accessToken });
  }
  return { serverToken: login.body.accessToken, serverID: login.body.serverID, sessions };
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
  const bare = await startChild('bare handler', ['bench/upload/bare-server.ts'], { PORT: '0' }, /listening (\d+)/);
  const monitor = new Client({ connectionString: BENCH_DATABASE_URL });
  await monitor.connect();
  const redis = await redisPid();
  try {
    for (const mode of MODES) {
      const prefix = `rhythmc-bench-upload:${randomBytes(4).toString('hex')}:`;
      const service = await startService(mode, 0, prefix);
      const memory = mode === 'redis' ? await redisMemory() : undefined;
      console.log(`service (${mode}) ready in ${(service.startedMs / 1000).toFixed(1)} s${memory ? `, Redis ${memory}` : ''}`);
      const entry = { mode, startupSeconds: service.startedMs / 1000, redisMemory: memory, rounds: [] as Array<Record<string, Measure>> };
      try {
        const base = `http://127.0.0.1:${service.port}`;
        const setup = await setUpSessions(base, ranked);
        let next = 0;
        const pick = () => setup.sessions[next++ % setup.sessions.length];
        const targets: Target[] = [
          { name: 'bare', pid: bare.child.pid as number, url: `http://127.0.0.1:${bare.port}`, headers: {}, body: () => uploadBody(pick(), setup.serverID) },
          {
            name: 'service',
            pid: service.child.pid as number,
            url: base,
            headers: { Authorization: `Bearer ${setup.serverToken}` },
            body: () => uploadBody(pick(), setup.serverID),
          },
        ];
        const probeOf = (target: Target): CpuProbe => ({ httpPid: target.pid, monitor, redisPid: target.name === 'service' && mode === 'redis' ? redis : null });
        for (const target of targets) {
          const warm = await measure(target, WARMUP, 4, probeOf(target));
          if (warm.non200 > 0) throw new Error(`${target.name}: ${warm.non200} of ${WARMUP} warm-up uploads failed`);
        }
        for (let round = 0; round < ROUNDS; round++) {
          const measures: Record<string, Measure> = {};
          for (const target of round % 2 === 0 ? targets : [...targets].reverse()) {
            measures[`${target.name} sequential`] = await measure(target, SEQUENTIAL, 1, probeOf(target));
            measures[`${target.name} c${CONCURRENCY}`] = await measure(target, CONCURRENT, CONCURRENCY, probeOf(target));
          }
          for (const [name, m] of Object.entries(measures)) {
            console.log(
              `  [${mode} r${round + 1}] ${name.padEnd(18)} ${m.rps.toFixed(0).padStart(6)} req/s  p50 ${m.p50.toFixed(2)} ms  p99 ${m.p99.toFixed(2)} ms` +
                `  CPU ms/req http ${m.cpu.http.toFixed(3)} db ${m.cpu.db.toFixed(3)} redis ${m.cpu.redis.toFixed(3)} driver ${m.cpu.driver.toFixed(3)}` +
                `${m.non200 ? `  NON-200: ${m.non200}` : ''}`,
            );
          }
          entry.rounds.push(measures);
        }
        // Ends the game server's session, which logs its players out: the next mode logs them in again.
        await json('POST', `${base}/server/logout`, setup.serverToken);
      } finally {
        await stopChild(service.child);
        if (mode === 'redis') await dropRedisPrefix(prefix);
      }
      result.modes.push(entry);
    }
  } finally {
    await monitor.end();
    await stopChild(bare.child);
  }
  return result;
}

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

/** A markdown table of the means over the rounds, with the two ratios the issue sets targets for. */
function summarise(results: SizeResult[]): string {
  const lines = [
    '| size | mode | target | req/s (c' + CONCURRENCY + ') | p50 / p99 ms (c' + CONCURRENCY + ') | p50 / p99 ms (sequential) | CPU ms/request: HTTP / PostgreSQL / Redis / driver | service ÷ bare: req/s, CPU |',
    '|---|---|---|---|---|---|---|---|',
  ];
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
        lines.push(
          `| ${size.size} | ${mode.mode} | ${target} | ${mean(loaded.map((m) => m.rps)).toFixed(0)} | ${mean(loaded.map((m) => m.p50)).toFixed(2)} / ${mean(loaded.map((m) => m.p99)).toFixed(2)} | ` +
            `${mean(sequential.map((m) => m.p50)).toFixed(2)} / ${mean(sequential.map((m) => m.p99)).toFixed(2)} | ${cpu('http')} / ${cpu('db')} / ${cpu('redis')} / ${cpu('driver')} | ${ratio} |`,
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
    await recreateDatabase();
    await withClient(BENCH_DATABASE_URL, async (client) => {
      await client.query(
        'CREATE TABLE bench_bare_record (id bigserial PRIMARY KEY, uid bigint NOT NULL, level_id int NOT NULL, time_ms bigint NOT NULL, acc float8 NOT NULL, pass boolean NOT NULL, UNIQUE (uid, level_id, time_ms))',
      );
      await loadPlayersAndCharts(client, PLAYERS);
      await loadPlays(client, 1, SMALL_RANKED);
      await deriveRatings(client, 1, SMALL_RANKED);
      await analyze(client);
    });
    console.log(`generated the small size in ${seconds(started)} s`);
    results.push(await measureSize('100k plays', SMALL_RANKED));

    const grown = Date.now();
    await withClient(BENCH_DATABASE_URL, async (client) => {
      await loadPlays(client, SMALL_RANKED + 1, LARGE_RANKED);
      console.log(`  plays loaded in ${seconds(grown)} s`);
      await deriveRatings(client, SMALL_RANKED + 1, LARGE_RANKED);
      console.log(`  bests and ratings derived in ${seconds(grown)} s`);
      await analyze(client);
    });
    console.log(`grew to the large size in ${seconds(grown)} s`);
  }
  results.push(await measureSize(`${(LARGE_RANKED * 10).toLocaleString('en')} plays`, LARGE_RANKED));

  const table = summarise(results);
  console.log(`\n${table}`);
  mkdirSync(join(ROOT, 'bench', '.out'), { recursive: true });
  writeFileSync(join(ROOT, 'bench', '.out', 'upload.json'), JSON.stringify({ date: new Date().toISOString(), results, table }, null, 2));
  console.log(`\ndone in ${seconds(started)} s; results in bench/.out/upload.json`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
