/**
 * The plugin's cached and authenticated reads against a bare Express + pg server doing the same
 * queries (bench/reads/bare-server.ts), in the same run, alternating within each round (issue #15):
 *   GET /server/ping                 bare: answers `true`, no database
 *   GET /server/baltop?limit=10      bare: the token lookup + the service's ranking SQL (1,000,000 players)
 *   GET /server/charts               bare: the token lookup + the chart query (CHARTS active charts)
 *   GET /server/collections          bare: the token lookup + the collection query (COLLECTIONS)
 *   GET /resources/manifest?lang=true   bare: the token lookup + the index query, serialised (RESOURCE_FILES files)
 *   GET /resources/packmanifest      bare: the token lookup + the pack query + the signed links (10 packs)
 * The service is the build (dist) with its default logging (info: one JSON line per request, to a
 * file) and metrics. After each measured window its event-loop delay p99 is read from its own
 * /metrics (prom-client's `nodejs_eventloop_lag_p99_seconds`, reset at every scrape).
 *
 *   npm run build
 *   npm run bench:economy:generate      # the 1,000,000 players with balances (rhythmc_bench_economy)
 *   npm run bench:reads
 *
 * Environment: BENCH_DATABASE_URL, CONNECTIONS (32), DURATION_SECONDS (8), WARMUP_SECONDS (2),
 * ROUNDS (3), CHARTS (450), COLLECTIONS (300), RESOURCE_FILES (20000),
 * READS (ping,baltop,charts,collections,manifest,packmanifest).
 * Results: bench/.out/reads.json and a markdown table on stdout.
 */
import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdminApi, call, expectCall } from '../harness/api';
import { alternate, ratio } from '../harness/compare';
import { assertBenchDatabase, fmt, intFromEnv, listFromEnv, loadAverage, OUT_DIR, runMain } from '../harness/env';
import { closedLoop, LoadResult, mean } from '../harness/load';
import { Child, startBareServer, startServiceProcess, stopAllChildren, stopChild } from '../harness/process';
import { ECONOMY_DATABASE_URL } from '../economy/generate';
import { generateResourceTree } from '../harness/generate';

const CONNECTIONS = intFromEnv('CONNECTIONS', 32);
const SECONDS = intFromEnv('DURATION_SECONDS', 8);
const WARMUP_SECONDS = intFromEnv('WARMUP_SECONDS', 2);
const ROUNDS = intFromEnv('ROUNDS', 3);
const CHARTS = intFromEnv('CHARTS', 450);
const COLLECTIONS = intFromEnv('COLLECTIONS', 300);
const RESOURCE_FILES = intFromEnv('RESOURCE_FILES', 20_000);
const READS = listFromEnv('READS', ['ping', 'baltop', 'charts', 'collections', 'manifest', 'packmanifest']);

const PATHS: Record<string, string> = {
  ping: '/server/ping',
  baltop: '/server/baltop?limit=10',
  charts: '/server/charts',
  collections: '/server/collections',
  manifest: '/resources/manifest?lang=true',
  packmanifest: '/resources/packmanifest',
};
/** The issue's goal for service ÷ bare. */
const GOALS: Record<string, number> = { ping: 0.7, baltop: 0.8, charts: 1.5, collections: 1.5, manifest: 0.7, packmanifest: 0.7 };

/** The service's event-loop delay p99 since its last scrape, in ms. */
async function eventLoopP99(baseUrl: string): Promise<number> {
  const metrics = await call(baseUrl, 'GET', '/metrics', null);
  const line = metrics.text.split('\n').find((l) => l.startsWith('nodejs_eventloop_lag_p99_seconds'));
  return line ? Number(line.split(' ').pop()) * 1000 : NaN;
}

async function main(): Promise<void> {
  assertBenchDatabase(ECONOMY_DATABASE_URL);
  const adminToken = randomBytes(24).toString('hex');
  const work = mkdtempSync(join(tmpdir(), 'rhythmc-bench-'));
  let service: Child | null = null;
  let bare: Child | null = null;
  try {
    // The service indexes RESOURCE_DIR at start: the files are there before it.
    generateResourceTree(join(work, 'resources'), RESOURCE_FILES, 64 * 1024);
    service = await startServiceProcess({
      databaseUrl: ECONOMY_DATABASE_URL,
      adminToken,
      source: 'dist',
      log: 'reads-service.log',
      env: { LOG_LEVEL: 'info', SERVER_TOKEN_TTL_SECONDS: '3600', DATA_DIR: join(work, 'data'), RESOURCE_DIR: join(work, 'resources') },
    });
    bare = await startBareServer('bench/reads/bare-server.ts', { ASSET_SERVER_URL: service.url }, '/health/ready');

    const admin = new AdminApi(service.url, adminToken);
    const charts = Array.from({ length: CHARTS + 50 }, (_, i) => ({ levelId: 900_000 + i, name: `Bench chart ${i}`, difficultyConstant: 1 + (i % 15), version: '1.0', active: i < CHARTS }));
    await admin.putCharts(charts);
    await admin.putCollections(
      Array.from({ length: COLLECTIONS }, (_, i) => ({
        key: `rhythmc:titles.bench${i}`,
        type: 'title',
        unlockMethod: { type: 'MANUAL' },
        properties: { title: `Bench title ${i}`, description: ['A title of the reads benchmark'], rarity: 'RARE', position: i % 2 === 0 },
      })),
    );
    await admin.putPacks(
      Array.from({ length: 10 }, (_, i) => ({ name: `bench-pack-${i}`, displayName: `Bench pack ${i}`, type: 'FULL', availableSongs: [1, 2, 3], file: `packs/pack-${i}.zip` })),
    );
    const created = await admin.createServer(`bench-${randomBytes(3).toString('hex')}`);
    const { accessToken } = await expectCall<{ accessToken: string }>(200, service.url, 'POST', '/server/login', created.bootstrapToken, { pluginVersion: 1, pluginSHA: 'bench' });
    const auth = { Authorization: `Bearer ${accessToken}` };

    const rows: Array<Record<string, unknown>> = [];
    for (const read of READS) {
      const path = PATHS[read];
      if (!path) throw new Error(`READS: unknown read ${read}`);
      // Same data, same shapes: the answers must be equal.
      const [a, b] = await Promise.all([call(bare.url, 'GET', path, accessToken), call(service.url, 'GET', path, accessToken)]);
      if (a.status !== 200 || b.status !== 200 || !isDeepStrictEqual(JSON.parse(a.text), JSON.parse(b.text))) {
        throw new Error(`${read}: the answers differ: bare ${a.status} ${a.text.slice(0, 200)} | service ${b.status} ${b.text.slice(0, 200)}`);
      }
      const targets = { bare: bare.url, service: service.url };
      type Measured = LoadResult & { eventLoopP99Ms: number | null };
      const results = await alternate<Measured>(['bare', 'service'], ROUNDS, async (name, round) => {
        const baseUrl = targets[name as keyof typeof targets];
        const load = (seconds: number) => closedLoop({ baseUrl, connections: CONNECTIONS, seconds, request: () => ({ method: 'GET', path, headers: auth }) });
        await load(WARMUP_SECONDS);
        if (name === 'service') await eventLoopP99(baseUrl);
        const measured = await load(SECONDS);
        const eventLoopP99Ms = name === 'service' ? await eventLoopP99(baseUrl) : null;
        console.log(
          `${read} round ${round + 1} ${name.padEnd(7)} ${fmt(measured.rps).padStart(7)} req/s  p50 ${fmt(measured.p50, 2)} ms  p99 ${fmt(measured.p99, 2)} ms` +
            `${eventLoopP99Ms === null ? '' : `  event-loop p99 ${fmt(eventLoopP99Ms, 1)} ms`}  non-200 ${measured.unexpected}  errors ${measured.errors}  load average ${loadAverage()}`,
        );
        return { ...measured, eventLoopP99Ms };
      });
      const throughput = ratio(results.service.map((r) => r.rps), results.bare.map((r) => r.rps));
      rows.push({
        read,
        path,
        bytes: Buffer.byteLength(b.text),
        bareRps: mean(results.bare.map((r) => r.rps)),
        serviceRps: mean(results.service.map((r) => r.rps)),
        ratio: throughput.ofMeans,
        roundRatios: throughput.perRound,
        medianRatio: throughput.median,
        goal: GOALS[read],
        serviceP99Ms: mean(results.service.map((r) => r.p99)),
        bareP99Ms: mean(results.bare.map((r) => r.p99)),
        eventLoopP99Ms: Math.max(...results.service.map((r) => r.eventLoopP99Ms ?? 0)),
        failures: [...results.bare, ...results.service].reduce((sum, r) => sum + r.unexpected + r.errors, 0),
        loadAverage: loadAverage(),
        runs: results,
      });
    }

    mkdirSync(OUT_DIR, { recursive: true });
    writeFileSync(join(OUT_DIR, 'reads.json'), `${JSON.stringify({ date: new Date().toISOString(), node: process.version, connections: CONNECTIONS, seconds: SECONDS, rounds: ROUNDS, rows }, null, 2)}\n`);
    console.log('\n| request | bytes | bare req/s | service req/s | service ÷ bare (median of rounds; rounds) | goal | p99 ms bare / service | service event-loop p99 | load average |');
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const row of rows) {
      const r = row as { path: string; bytes: number; bareRps: number; serviceRps: number; medianRatio: number; roundRatios: number[]; goal: number; bareP99Ms: number; serviceP99Ms: number; eventLoopP99Ms: number; loadAverage: number };
      console.log(
        `| \`GET ${r.path}\` | ${fmt(r.bytes)} | ${fmt(r.bareRps)} | ${fmt(r.serviceRps)} | ${fmt(r.medianRatio, 2)} (${r.roundRatios.map((x) => fmt(x, 2)).join(', ')}) | ≥ ${r.goal} | ${fmt(r.bareP99Ms, 1)} / ${fmt(r.serviceP99Ms, 1)} | ${fmt(r.eventLoopP99Ms, 1)} ms | ${r.loadAverage} |`,
      );
    }
  } finally {
    await stopChild(bare);
    await stopChild(service);
    rmSync(work, { recursive: true, force: true });
  }
}

runMain(main, stopAllChildren);
