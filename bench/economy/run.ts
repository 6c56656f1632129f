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
 * bench/.out/economy-baltop.json. Each measured window of the service also reports its event-loop
 * delay (p99, max), read from its own /metrics (`rhythmc_event_loop_delay_seconds`): scraped right
 * before the window (which resets it) and right after.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { TOP_BALANCES_SQL } from '../../src/economy/economy.repository';
import { AdminApi, call, expectCall } from '../harness/api';
import { alternate, ratio } from '../harness/compare';
import { CpuPerRequest, cpuPerRequest, sampleCpu, totalCpu } from '../harness/cpu';
import { EventLoopDelay, eventLoopDelay } from '../harness/event-loop';
import { assertBenchDatabase, databaseName, fmt, intFromEnv, loadAverage, OUT_DIR, runMain } from '../harness/env';
import { closedLoop, LoadResult, mean } from '../harness/load';
import { Child, startBareServer, startServiceProcess, stopAllChildren, stopChild } from '../harness/process';
import { ECONOMY_DATABASE_URL } from './generate';

const BENCH_DATABASE_URL = ECONOMY_DATABASE_URL;
const CONNECTIONS = intFromEnv('CONNECTIONS', 16);
const SECONDS = intFromEnv('DURATION_SECONDS', 10);
const WARMUP_SECONDS = intFromEnv('WARMUP_SECONDS', 3);
const ROUNDS = intFromEnv('ROUNDS', 3);
const LIMIT = intFromEnv('LIMIT', 100);

/** The plan of the ranking query and its own execution time, straight from PostgreSQL. */
async function explain(url: string): Promise<{ plan: string; executionMs: number; players: number; banned: number }> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const counts = await client.query<{ players: string; banned: string }>(
      `SELECT (SELECT count(*) FROM player_balance) AS players, (SELECT count(*) FROM player_ban WHERE lifted_at IS NULL) AS banned`,
    );
    const result = await client.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${TOP_BALANCES_SQL}`,
      [LIMIT],
    );
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

async function main(): Promise<void> {
  assertBenchDatabase(BENCH_DATABASE_URL);
  const analysed = await explain(BENCH_DATABASE_URL);
  if (analysed.players === 0)
    throw new Error('The benchmark database has no balances: run `npm run bench:economy:generate` first');

  const adminToken = randomBytes(24).toString('hex');
  const work = mkdtempSync(join(tmpdir(), 'rhythmc-bench-'));
  let service: Child | null = null;
  let bare: Child | null = null;
  try {
    service = await startServiceProcess({
      databaseUrl: BENCH_DATABASE_URL,
      adminToken,
      source: 'dist',
      log: 'economy-service.log',
      env: {
        LOG_LEVEL: 'info',
        SERVER_TOKEN_TTL_SECONDS: '3600',
        DATA_DIR: join(work, 'data'),
        RESOURCE_DIR: join(work, 'resources'),
      },
    });
    bare = await startBareServer('bench/economy/bare-server.ts', {}, '/health/ready');
    const serviceUrl = service.url;

    const created = await new AdminApi(service.url, adminToken).createServer(`bench-${randomBytes(3).toString('hex')}`);
    const { accessToken } = await expectCall<{ accessToken: string }>(
      200,
      service.url,
      'POST',
      '/server/login',
      created.bootstrapToken,
      { pluginVersion: 1, pluginSHA: 'bench' },
    );
    const auth = { Authorization: `Bearer ${accessToken}` };

    const targets = {
      bare: { baseUrl: bare.url, path: `/server/baltop?limit=${LIMIT}`, headers: {} as Record<string, string> },
      bareToken: { baseUrl: bare.url, path: `/with-token-check/server/baltop?limit=${LIMIT}`, headers: auth },
      service: { baseUrl: service.url, path: `/server/baltop?limit=${LIMIT}`, headers: auth },
    };
    type Target = keyof typeof targets;
    // Same SQL, same data: the three answers must be identical.
    const answers = await Promise.all(
      (Object.keys(targets) as Target[]).map((name) =>
        call(targets[name].baseUrl, 'GET', targets[name].path, name === 'bare' ? null : accessToken),
      ),
    );
    const same = answers.every((answer) => answer.status === 200 && answer.text === answers[0].text);
    if (!same)
      throw new Error(
        `The answers differ: ${answers.map((answer) => `${answer.status} ${answer.text.slice(0, 120)}`).join(' | ')}`,
      );

    /** eventLoop: the service's, over the measured window; null for the bare handler (no /metrics). */
    type Measured = LoadResult & { cpu: CpuPerRequest; eventLoop: EventLoopDelay | null };
    const monitor = new Client({ connectionString: BENCH_DATABASE_URL });
    await monitor.connect();
    const load = (name: Target, seconds: number) =>
      closedLoop({
        baseUrl: targets[name].baseUrl,
        connections: CONNECTIONS,
        seconds,
        request: () => ({ method: 'GET', path: targets[name].path, headers: targets[name].headers }),
      });
    const results = await alternate<Measured>(['bare', 'bareToken', 'service'], ROUNDS, async (name, round) => {
      const target = name as Target;
      await load(target, WARMUP_SECONDS);
      // CPU spent per answered request by the HTTP process, by the PostgreSQL backends of the
      // benchmark database and by the load driver: unlike req/s, not skewed by other load on the machine.
      const probe = { httpPids: [(target === 'service' ? service : bare)!.pid], monitor, redisPid: null };
      // The scrape resets the service's window: the warm-up stays out of it.
      if (target === 'service') await eventLoopDelay(serviceUrl);
      const before = await sampleCpu(probe);
      const measured = await load(target, SECONDS);
      const cpu = await cpuPerRequest(probe, before, measured.requests);
      const eventLoop = target === 'service' ? await eventLoopDelay(serviceUrl) : null;
      const result = { ...measured, cpu, eventLoop };
      console.log(
        `round ${round + 1} ${name.padEnd(9)} ${fmt(result.rps).padStart(7)} req/s  p50 ${fmt(result.p50, 2)} ms  p99 ${fmt(result.p99, 2)} ms  ` +
          `CPU ms/request: http ${fmt(result.cpu.http, 3)} db ${fmt(result.cpu.db, 3)} driver ${fmt(result.cpu.driver, 3)}  ` +
          `${eventLoop ? `event-loop p99 ${fmt(eventLoop.p99Ms, 1)} ms max ${fmt(eventLoop.maxMs, 1)} ms  ` : ''}` +
          `non-200 ${result.unexpected}  errors ${result.errors}  load average ${loadAverage()}`,
      );
      return result;
    });
    await monitor.end();

    const summary = (name: Target) => {
      const runs = results[name];
      const of = (pick: (r: Measured) => number) => mean(runs.map(pick));
      const eventLoops = runs.flatMap((r) => (r.eventLoop ? [r.eventLoop] : []));
      return {
        rps: of((r) => r.rps),
        p50: of((r) => r.p50),
        p90: of((r) => r.p90),
        p99: of((r) => r.p99),
        cpuMsPerRequest: of((r) => r.cpu.http),
        dbCpuMsPerRequest: of((r) => r.cpu.db),
        driverCpuMsPerRequest: of((r) => r.cpu.driver),
        cpuTotal: of((r) => totalCpu(r.cpu)),
        requests: runs.reduce((sum, r) => sum + r.requests, 0),
        failures: runs.reduce((sum, r) => sum + r.unexpected + r.errors, 0),
        // The worst round, like bench:reads: one stalled round is what the figure is for. Null for the bare handler.
        eventLoopP99Ms: eventLoops.length > 0 ? Math.max(...eventLoops.map((e) => e.p99Ms)) : null,
        eventLoopMaxMs: eventLoops.length > 0 ? Math.max(...eventLoops.map((e) => e.maxMs)) : null,
      };
    };
    const bareSummary = summary('bare');
    const bareTokenSummary = summary('bareToken');
    const serviceSummary = summary('service');
    const throughput = ratio(
      results.service.map((r) => r.rps),
      results.bare.map((r) => r.rps),
    );
    const ratioToTokenCheck = serviceSummary.rps / bareTokenSummary.rps;
    // Throughput a CPU-bound machine would give, from the CPU each request costs end to end.
    const cpuRatio = bareSummary.cpuTotal / serviceSummary.cpuTotal;

    const report = {
      database: databaseName(BENCH_DATABASE_URL),
      players: analysed.players,
      banned: analysed.banned,
      limit: LIMIT,
      connections: CONNECTIONS,
      seconds: SECONDS,
      rounds: ROUNDS,
      node: process.version,
      loadAverage: loadAverage(),
      queryExecutionMs: analysed.executionMs,
      plan: analysed.plan,
      bare: bareSummary,
      bareWithTokenCheck: bareTokenSummary,
      service: serviceSummary,
      ratioToTokenCheck,
      cpuRatio,
      ratio: throughput.ofMeans,
      roundRatios: throughput.perRound,
      medianRatio: throughput.median,
      runs: results,
    };
    mkdirSync(OUT_DIR, { recursive: true });
    writeFileSync(join(OUT_DIR, 'economy-baltop.json'), `${JSON.stringify(report, null, 2)}\n`);

    console.log(`\n${analysed.plan}\n`);
    console.log(
      '| target | req/s | p50 ms | p90 ms | p99 ms | CPU ms/request: HTTP process | PostgreSQL | load driver | event-loop p99 ms (highest round) | requests | failures |\n|---|---|---|---|---|---|---|---|---|---|---|',
    );
    for (const [name, s] of [
      ['bare Express + pg', bareSummary],
      ['bare Express + pg, plus the token lookup', bareTokenSummary],
      ['rhythmc-backend', serviceSummary],
    ] as const) {
      console.log(
        `| ${name} | ${fmt(s.rps)} | ${fmt(s.p50, 2)} | ${fmt(s.p90, 2)} | ${fmt(s.p99, 2)} | ${fmt(s.cpuMsPerRequest, 3)} | ${fmt(s.dbCpuMsPerRequest, 3)} | ${fmt(s.driverCpuMsPerRequest, 3)} | ${s.eventLoopP99Ms === null ? '–' : fmt(s.eventLoopP99Ms, 1)} | ${fmt(s.requests)} | ${s.failures} |`,
      );
    }
    console.log(
      `\nservice / bare throughput: ${(throughput.ofMeans * 100).toFixed(1)} % of the means; per round ${throughput.perRound.map((r) => `${(r * 100).toFixed(1)} %`).join(', ')} (median ${(throughput.median * 100).toFixed(1)} %); target ≥ 60 %\n` +
        `service / bare with the token lookup: ${(ratioToTokenCheck * 100).toFixed(1)} %\n` +
        `CPU per request, bare / service (the throughput ratio of a CPU-bound machine): ${(cpuRatio * 100).toFixed(1)} %`,
    );
  } finally {
    await stopChild(bare);
    await stopChild(service);
    rmSync(work, { recursive: true, force: true });
  }
}

runMain(main, stopAllChildren);
