/**
 * GET /server/baltop?limit=100: the service (built dist/, PostgreSQL) against a bare Express + pg
 * handler running the same SQL (and that handler plus the service's token lookup), on the same
 * database, in the same run, over loopback. Targets alternate within each round.
 *
 *   npm run build
 *   npm run bench:economy:generate     # 1,000,000 players (PLAYERS=…; RESET=1 recreates the database)
 *   npm run bench:economy
 *
 * Environment: BENCH_DATABASE_URL, CONNECTIONS (16), DURATION_SECONDS per measurement (10), WARMUP_SECONDS
 * (3), ROUNDS (3; bare and service alternate), LIMIT (100). Results are printed and written to
 * bench/.out/economy-baltop.json.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { TOP_BALANCES_SQL } from '../../src/economy/economy.repository';
import { assertBenchDatabase, BENCH_DATABASE_URL, databaseName, intFromEnv } from './common';
import { drive, LoadResult } from './load';

const ROOT = join(__dirname, '..', '..');
const CONNECTIONS = intFromEnv('CONNECTIONS', 16);
const SECONDS = intFromEnv('DURATION_SECONDS', 10);
const WARMUP_SECONDS = intFromEnv('WARMUP_SECONDS', 3);
const ROUNDS = intFromEnv('ROUNDS', 3);
const LIMIT = intFromEnv('LIMIT', 100);

interface Started {
  child: ChildProcess;
  port: number;
}

function startProcess(command: string, args: string[], env: Record<string, string>, ready: RegExp): Promise<Started> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not start:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = ready.exec(output);
      if (match) {
        clearTimeout(timer);
        // The service logs a line per request at LOG_LEVEL=info: stop collecting (and re-scanning) them.
        child.stdout?.off('data', onData);
        child.stdout?.resume();
        resolve({ child, port: Number(match[1]) });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${args.join(' ')} exited with ${code}:\n${output}`));
    });
  });
}

function stop(started: Started | null): Promise<void> {
  if (!started || started.child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    started.child.removeAllListeners('exit');
    started.child.once('exit', () => resolve());
    started.child.kill('SIGTERM');
  });
}

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, { ...init, headers: { 'Content-Type': 'application/json', ...(init.headers as Record<string, string>) } });
  return { status: response.status, body: await response.json() };
}

/** The plan of the ranking query and its own execution time, straight from PostgreSQL. */
async function explain(url: string): Promise<{ plan: string; executionMs: number; players: number; banned: number }> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const counts = await client.query<{ players: string; banned: string }>(
      `SELECT (SELECT count(*) FROM player_balance) AS players, (SELECT count(*) FROM player_ban WHERE lifted_at IS NULL) AS banned`,
    );
    const result = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${TOP_BALANCES_SQL}`, [LIMIT]);
    const lines = result.rows.map((row) => row['QUERY PLAN']);
    const execution = lines.find((line) => line.startsWith('Execution Time'));
    return {
      plan: lines.join('\n'),
      executionMs: execution ? Number(/([\d.]+) ms/.exec(execution)?.[1]) : NaN,
      players: Number(counts.rows[0].players),
      banned: Number(counts.rows[0].banned),
    };
  } finally {
    await client.end();
  }
}

/** User + system CPU time of a process so far, in ms (Linux /proc; NaN elsewhere). */
function cpuMs(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    // utime and stime are fields 14 and 15 of the whole line, in clock ticks (100 per second on Linux).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return NaN;
  }
}

function cpuOf(pids: number[]): Map<number, number> {
  return new Map(pids.map((pid) => [pid, cpuMs(pid)]));
}

/** CPU used between two readings by the processes alive at both (pool connections come and go). */
function cpuDelta(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, start] of before) {
    const end = after.get(pid);
    if (end !== undefined && Number.isFinite(start) && Number.isFinite(end) && end >= start) sum += end - start;
  }
  return sum;
}

/** The server processes of every connection to the benchmark database but the monitor's own. */
async function backendPids(monitor: Client): Promise<number[]> {
  const { rows } = await monitor.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
  return rows.map((row) => row.pid);
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits });

async function main(): Promise<void> {
  assertBenchDatabase(BENCH_DATABASE_URL);
  const mainJs = join(ROOT, 'dist', 'src', 'main.js');
  if (!existsSync(mainJs)) throw new Error('dist/src/main.js is missing: run `npm run build` first');

  const analysed = await explain(BENCH_DATABASE_URL);
  if (analysed.players === 0) throw new Error('The benchmark database has no balances: run `npm run bench:economy:generate` first');

  const adminToken = randomBytes(24).toString('hex');
  let service: Started | null = null;
  let bare: Started | null = null;
  try {
    service = await startProcess(
      process.execPath,
      [mainJs],
      {
        DATABASE_URL: BENCH_DATABASE_URL,
        REDIS_URL: '',
        HOST: '127.0.0.1',
        PORT: '0',
        ADMIN_TOKEN: adminToken,
        LOG_LEVEL: 'info',
        SERVER_TOKEN_TTL_SECONDS: '3600',
        DATA_DIR: mkdtempSync(join(tmpdir(), 'rhythmc-bench-')),
        RESOURCE_DIR: mkdtempSync(join(tmpdir(), 'rhythmc-bench-res-')),
      },
      /listening on [\d.]+:(\d+)/,
    );
    bare = await startProcess(process.execPath, ['-r', 'ts-node/register/transpile-only', join(__dirname, 'bare-server.ts')], { PORT: '0' }, /listening (\d+)/);

    const serviceUrl = `http://127.0.0.1:${service.port}`;
    const admin = { Authorization: `Bearer ${adminToken}` };
    const created = await json(`${serviceUrl}/admin/servers`, { method: 'POST', headers: admin, body: JSON.stringify({ name: `bench-${randomBytes(3).toString('hex')}`, country: 'DE' }) });
    const { bootstrapToken } = created.body as { bootstrapToken: string };
    const login = await json(`${serviceUrl}/server/login`, { method: 'POST', headers: { Authorization: `Bearer ${bootstrapToken}` }, body: JSON.stringify({ pluginVersion: 1, pluginSHA: 'bench' }) });
    const { accessToken } = login.body as { accessToken: string };
    const auth = { Authorization: `Bearer ${accessToken}` };

    const targets = {
      bare: { url: `http://127.0.0.1:${bare.port}/server/baltop?limit=${LIMIT}`, headers: {} as Record<string, string> },
      bareToken: { url: `http://127.0.0.1:${bare.port}/with-token-check/server/baltop?limit=${LIMIT}`, headers: auth },
      service: { url: `${serviceUrl}/server/baltop?limit=${LIMIT}`, headers: auth },
    };
    // Same SQL, same data: the two answers must be identical.
    const fromService = await json(targets.service.url, { headers: auth });
    const fromBare = await json(targets.bare.url);
    const fromBareToken = await json(targets.bareToken.url, { headers: auth });
    const same = JSON.stringify(fromService.body) === JSON.stringify(fromBare.body) && JSON.stringify(fromBareToken.body) === JSON.stringify(fromBare.body);
    if (fromService.status !== 200 || !same) {
      throw new Error(`The answers differ: service ${fromService.status} ${JSON.stringify(fromService.body).slice(0, 200)}`);
    }

    type Target = keyof typeof targets;
    type Measured = LoadResult & { cpuMsPerRequest: number; dbCpuMsPerRequest: number; driverCpuMsPerRequest: number };
    const results: Record<Target, Measured[]> = { bare: [], bareToken: [], service: [] };
    const monitor = new Client({ connectionString: BENCH_DATABASE_URL });
    await monitor.connect();
    for (let round = 1; round <= ROUNDS; round++) {
      for (const name of ['bare', 'bareToken', 'service'] as const) {
        await drive({ ...targets[name], connections: CONNECTIONS, seconds: WARMUP_SECONDS });
        const pid = (name === 'service' ? service : bare).child.pid;
        const backends = await backendPids(monitor);
        const before = { http: cpuMs(pid), db: cpuOf(backends), driver: process.cpuUsage() };
        const load = await drive({ ...targets[name], connections: CONNECTIONS, seconds: SECONDS });
        const driverUsage = process.cpuUsage(before.driver);
        // CPU spent per answered request by the HTTP process, by the PostgreSQL backends of the
        // benchmark database and by the load driver: unlike req/s, not skewed by other load on the machine.
        const result = {
          ...load,
          cpuMsPerRequest: (cpuMs(pid) - before.http) / load.requests,
          dbCpuMsPerRequest: cpuDelta(before.db, cpuOf(backends)) / load.requests,
          driverCpuMsPerRequest: (driverUsage.user + driverUsage.system) / 1000 / load.requests,
        };
        results[name].push(result);
        process.stdout.write(
          `round ${round} ${name.padEnd(9)} ${fmt(result.rps).padStart(7)} req/s  p50 ${fmt(result.p50, 2)} ms  p99 ${fmt(result.p99, 2)} ms  ` +
            `CPU ms/request: http ${fmt(result.cpuMsPerRequest, 3)} db ${fmt(result.dbCpuMsPerRequest, 3)} driver ${fmt(result.driverCpuMsPerRequest, 3)}  ` +
            `non-200 ${result.non200}  errors ${result.errors}\n`,
        );
      }
    }

    await monitor.end();
    const mean = (list: Measured[], key: keyof Measured) => list.reduce((sum, r) => sum + Number(r[key]), 0) / list.length;
    const summary = (name: Target) => ({
      rps: mean(results[name], 'rps'),
      p50: mean(results[name], 'p50'),
      p90: mean(results[name], 'p90'),
      p99: mean(results[name], 'p99'),
      cpuMsPerRequest: mean(results[name], 'cpuMsPerRequest'),
      dbCpuMsPerRequest: mean(results[name], 'dbCpuMsPerRequest'),
      driverCpuMsPerRequest: mean(results[name], 'driverCpuMsPerRequest'),
      requests: results[name].reduce((sum, r) => sum + r.requests, 0),
      failures: results[name].reduce((sum, r) => sum + r.non200 + r.errors, 0),
    });
    const bareSummary = summary('bare');
    const bareTokenSummary = summary('bareToken');
    const serviceSummary = summary('service');
    const ratio = serviceSummary.rps / bareSummary.rps;
    // Each round measures both back to back, so its ratio is the least disturbed by other load on the machine.
    const roundRatios = results.service.map((result, i) => result.rps / results.bare[i].rps);
    const medianRatio = [...roundRatios].sort((a, b) => a - b)[Math.floor(roundRatios.length / 2)];
    const ratioToTokenCheck = serviceSummary.rps / bareTokenSummary.rps;
    // Throughput a CPU-bound machine would give, from the CPU each request costs end to end.
    const totalCpu = (x: ReturnType<typeof summary>) => x.cpuMsPerRequest + x.dbCpuMsPerRequest + x.driverCpuMsPerRequest;
    const cpuRatio = totalCpu(bareSummary) / totalCpu(serviceSummary);

    const report = {
      database: databaseName(BENCH_DATABASE_URL),
      players: analysed.players,
      banned: analysed.banned,
      limit: LIMIT,
      connections: CONNECTIONS,
      seconds: SECONDS,
      rounds: ROUNDS,
      node: process.version,
      queryExecutionMs: analysed.executionMs,
      plan: analysed.plan,
      bare: bareSummary,
      bareWithTokenCheck: bareTokenSummary,
      service: serviceSummary,
      ratioToTokenCheck,
      cpuRatio,
      ratio,
      roundRatios,
      medianRatio,
      runs: results,
    };
    mkdirSync(join(ROOT, 'bench', '.out'), { recursive: true });
    writeFileSync(join(ROOT, 'bench', '.out', 'economy-baltop.json'), `${JSON.stringify(report, null, 2)}\n`);

    process.stdout.write(`\n${analysed.plan}\n\n`);
    process.stdout.write(
      `| target | req/s | p50 ms | p90 ms | p99 ms | CPU ms/request: HTTP process | PostgreSQL | load driver | requests | failures |\n|---|---|---|---|---|---|---|---|---|---|\n`,
    );
    for (const [name, s] of [
      ['bare Express + pg', bareSummary],
      ['bare Express + pg, plus the token lookup', bareTokenSummary],
      ['rhythmc-backend', serviceSummary],
    ] as const) {
      process.stdout.write(
        `| ${name} | ${fmt(s.rps)} | ${fmt(s.p50, 2)} | ${fmt(s.p90, 2)} | ${fmt(s.p99, 2)} | ${fmt(s.cpuMsPerRequest, 3)} | ${fmt(s.dbCpuMsPerRequest, 3)} | ${fmt(s.driverCpuMsPerRequest, 3)} | ${fmt(s.requests)} | ${s.failures} |\n`,
      );
    }
    process.stdout.write(
      `\nservice / bare throughput: ${(ratio * 100).toFixed(1)} % of the means; per round ${roundRatios.map((r) => `${(r * 100).toFixed(1)} %`).join(', ')} (median ${(medianRatio * 100).toFixed(1)} %); target ≥ 60 %\n` +
        `service / bare with the token lookup: ${(ratioToTokenCheck * 100).toFixed(1)} %\n` +
        `CPU per request, bare / service (the throughput ratio of a CPU-bound machine): ${(cpuRatio * 100).toFixed(1)} %\n`,
    );
  } finally {
    await stop(bare);
    await stop(service);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
