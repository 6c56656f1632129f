/**
 * The plugin's cached and authenticated reads against a bare Express + pg server doing the same
 * queries (bench/reads/bare-server.ts), in the same run, alternating within each round (issue #15):
 *   GET /server/ping                 bare: answers `true`, no database
 *   GET /server/baltop?limit=10      bare: the token lookup + the service's ranking SQL (1,000,000 players)
 *   GET /server/charts               bare: the token lookup + the chart query (CHARTS active charts)
 *   GET /server/collections          bare: the token lookup + the collection query (COLLECTIONS)
 *   GET /resources/manifest?lang=true   bare: the token lookup + the index query, serialised (RESOURCE_FILES files)
 *   GET /resources/packmanifest      bare: the token lookup + the pack query + the signed links (10 packs)
 *   POST /resources/down (DOWN_PATHS paths)  bare: the token lookup + the file query + the expiring signed links
 * GET /server/refresh is not here: it rotates the token (a write).
 * The service is the build (dist) with its default logging (info: one JSON line per request, to a
 * file) and metrics. After each measured window its event-loop delay p99 is read from its own
 * /metrics (`rhythmc_event_loop_delay_seconds`, since the previous scrape), and the CPU time per
 * answer of both HTTP processes from /proc.
 *
 *   npm run build
 *   npm run bench:economy:generate      # the 1,000,000 players with balances (rhythmc_bench_economy)
 *   npm run bench:reads
 *
 * Environment: BENCH_DATABASE_URL, CONNECTIONS (32), DURATION_SECONDS (8), WARMUP_SECONDS (2),
 * ROUNDS (3), CHARTS (450), COLLECTIONS (300), RESOURCE_FILES (20000),
 * DOWN_PATHS (50), READS (ping,baltop,charts,collections,manifest,packmanifest,down).
 * Results: bench/.out/reads.json and a markdown table on stdout.
 */
import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdminApi, call, expectCall } from '../harness/api';
import { alternate, ratio } from '../harness/compare';
import { cpuMs } from '../harness/cpu';
import { eventLoopDelay } from '../harness/event-loop';
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
const DOWN_PATHS = intFromEnv('DOWN_PATHS', 50);
const READS = listFromEnv('READS', ['ping', 'baltop', 'charts', 'collections', 'manifest', 'packmanifest', 'down']);

const PATHS: Record<string, string> = {
  ping: '/server/ping',
  baltop: '/server/baltop?limit=10',
  charts: '/server/charts',
  collections: '/server/collections',
  manifest: '/resources/manifest?lang=true',
  packmanifest: '/resources/packmanifest',
  down: '/resources/down',
};
/** POST reads and their body; every other read is a GET without one. */
const METHODS: Record<string, 'GET' | 'POST'> = { down: 'POST' };
/** The issue's goal for service ÷ bare. */
const GOALS: Record<string, number> = {
  ping: 0.7,
  baltop: 0.8,
  charts: 1.5,
  collections: 1.5,
  manifest: 0.7,
  packmanifest: 0.7,
  down: 0.7,
};

/** Download links differ only in their expiry (whole seconds from now) and its signature. */
const withoutExpiry = (text: string) => text.replace(/expires=\d+&sig=[A-Za-z0-9_-]+/g, 'expires=…');

/** The service's event-loop delay p99 since its last scrape, in ms. */
const eventLoopP99 = async (baseUrl: string) => (await eventLoopDelay(baseUrl)).p99Ms;

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
      env: {
        LOG_LEVEL: 'info',
        SERVER_TOKEN_TTL_SECONDS: '3600',
        DATA_DIR: join(work, 'data'),
        RESOURCE_DIR: join(work, 'resources'),
      },
    });
    bare = await startBareServer('bench/reads/bare-server.ts', { ASSET_SERVER_URL: service.url }, '/health/ready');

    const admin = new AdminApi(service.url, adminToken);
    const charts = Array.from({ length: CHARTS + 50 }, (_, i) => ({
      levelId: 900_000 + i,
      name: `Bench chart ${i}`,
      difficultyConstant: 1 + (i % 15),
      version: '1.0',
      active: i < CHARTS,
    }));
    await admin.putCharts(charts);
    await admin.putCollections(
      Array.from({ length: COLLECTIONS }, (_, i) => ({
        key: `rhythmc:titles.bench${i}`,
        type: 'title',
        unlockMethod: { type: 'MANUAL' },
        properties: {
          title: `Bench title ${i}`,
          description: ['A title of the reads benchmark'],
          rarity: 'RARE',
          position: i % 2 === 0,
        },
      })),
    );
    await admin.putPacks(
      Array.from({ length: 10 }, (_, i) => ({
        name: `bench-pack-${i}`,
        displayName: `Bench pack ${i}`,
        type: 'FULL',
        availableSongs: [1, 2, 3],
        file: `packs/pack-${i}.zip`,
      })),
    );
    const created = await admin.createServer(`bench-${randomBytes(3).toString('hex')}`);
    const { accessToken } = await expectCall<{ accessToken: string }>(
      200,
      service.url,
      'POST',
      '/server/login',
      created.bootstrapToken,
      { pluginVersion: 1, pluginSHA: 'bench' },
    );
    const auth = { Authorization: `Bearer ${accessToken}` };

    // POST /resources/down asks for DOWN_PATHS data files spread over the manifest.
    const manifest = await expectCall<{ Data: Array<{ path: string }> }>(
      200,
      service.url,
      'GET',
      '/resources/manifest',
      accessToken,
    );
    const step = Math.max(1, Math.floor(manifest.Data.length / DOWN_PATHS));
    const downPaths = manifest.Data.filter((_, i) => i % step === 0)
      .slice(0, DOWN_PATHS)
      .map((file) => file.path);
    const bodies: Record<string, unknown> = { down: downPaths };

    const rows: Array<Record<string, unknown>> = [];
    for (const read of READS) {
      const path = PATHS[read];
      if (!path) throw new Error(`READS: unknown read ${read}`);
      const method = METHODS[read] ?? 'GET';
      const body = bodies[read];
      const bodyText = body === undefined ? undefined : JSON.stringify(body);
      const headers = bodyText === undefined ? auth : { ...auth, 'Content-Type': 'application/json' };
      // Same data, same shapes: the answers must be equal.
      const [a, b] = await Promise.all([
        call(bare.url, method, path, accessToken, body),
        call(service.url, method, path, accessToken, body),
      ]);
      if (
        a.status !== 200 ||
        b.status !== 200 ||
        !isDeepStrictEqual(JSON.parse(withoutExpiry(a.text)), JSON.parse(withoutExpiry(b.text)))
      ) {
        throw new Error(
          `${read}: the answers differ: bare ${a.status} ${a.text.slice(0, 200)} | service ${b.status} ${b.text.slice(0, 200)}`,
        );
      }
      const targets = { bare, service };
      type Measured = LoadResult & { eventLoopP99Ms: number | null; cpuUsPerRequest: number };
      const results = await alternate<Measured>(['bare', 'service'], ROUNDS, async (name, round) => {
        const target = targets[name as keyof typeof targets];
        const baseUrl = target.url;
        const load = (seconds: number) =>
          closedLoop({
            baseUrl,
            connections: CONNECTIONS,
            seconds,
            request: () => ({ method, path, headers, body: bodyText }),
          });
        await load(WARMUP_SECONDS);
        if (name === 'service') await eventLoopP99(baseUrl);
        const cpuBefore = cpuMs(target.pid);
        const measured = await load(SECONDS);
        // CPU per answer of the HTTP process: unlike req/s, not moved by other load on the machine.
        const cpuUsPerRequest = ((cpuMs(target.pid) - cpuBefore) * 1000) / measured.requests;
        const eventLoopP99Ms = name === 'service' ? await eventLoopP99(baseUrl) : null;
        console.log(
          `${read} round ${round + 1} ${name.padEnd(7)} ${fmt(measured.rps).padStart(7)} req/s  p50 ${fmt(measured.p50, 2)} ms  p99 ${fmt(measured.p99, 2)} ms  CPU ${fmt(cpuUsPerRequest)} µs/req` +
            `${eventLoopP99Ms === null ? '' : `  event-loop p99 ${fmt(eventLoopP99Ms, 1)} ms`}  non-200 ${measured.unexpected}  errors ${measured.errors}  load average ${loadAverage()}`,
        );
        return { ...measured, eventLoopP99Ms, cpuUsPerRequest };
      });
      const throughput = ratio(
        results.service.map((r) => r.rps),
        results.bare.map((r) => r.rps),
      );
      // bare CPU per answer ÷ service CPU per answer: the req/s ratio if each had a core of its own.
      const cpu = ratio(
        results.bare.map((r) => r.cpuUsPerRequest),
        results.service.map((r) => r.cpuUsPerRequest),
      );
      rows.push({
        read,
        path: `${method} ${path}`,
        bytes: Buffer.byteLength(b.text),
        bareRps: mean(results.bare.map((r) => r.rps)),
        serviceRps: mean(results.service.map((r) => r.rps)),
        ratio: throughput.ofMeans,
        roundRatios: throughput.perRound,
        medianRatio: throughput.median,
        goal: GOALS[read],
        bareCpuUs: mean(results.bare.map((r) => r.cpuUsPerRequest)),
        serviceCpuUs: mean(results.service.map((r) => r.cpuUsPerRequest)),
        cpuRatio: cpu.median,
        serviceP99Ms: mean(results.service.map((r) => r.p99)),
        bareP99Ms: mean(results.bare.map((r) => r.p99)),
        eventLoopP99Ms: Math.max(...results.service.map((r) => r.eventLoopP99Ms ?? 0)),
        failures: [...results.bare, ...results.service].reduce((sum, r) => sum + r.unexpected + r.errors, 0),
        loadAverage: loadAverage(),
        runs: results,
      });
    }

    mkdirSync(OUT_DIR, { recursive: true });
    writeFileSync(
      join(OUT_DIR, 'reads.json'),
      `${JSON.stringify({ date: new Date().toISOString(), node: process.version, connections: CONNECTIONS, seconds: SECONDS, rounds: ROUNDS, rows }, null, 2)}\n`,
    );
    console.log(
      '\n| request | bytes | bare req/s | service req/s | service ÷ bare (median of rounds; rounds) | goal | CPU µs/req bare / service (ratio) | p99 ms bare / service | service event-loop p99 | load average |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|---|');
    for (const row of rows) {
      const r = row as {
        path: string;
        bytes: number;
        bareRps: number;
        serviceRps: number;
        medianRatio: number;
        roundRatios: number[];
        goal: number;
        bareCpuUs: number;
        serviceCpuUs: number;
        cpuRatio: number;
        bareP99Ms: number;
        serviceP99Ms: number;
        eventLoopP99Ms: number;
        loadAverage: number;
      };
      console.log(
        `| \`${r.path}\` | ${fmt(r.bytes)} | ${fmt(r.bareRps)} | ${fmt(r.serviceRps)} | ${fmt(r.medianRatio, 2)} (${r.roundRatios.map((x) => fmt(x, 2)).join(', ')}) | ≥ ${r.goal} | ${fmt(r.bareCpuUs)} / ${fmt(r.serviceCpuUs)} (${fmt(r.cpuRatio, 2)}) | ${fmt(r.bareP99Ms, 1)} / ${fmt(r.serviceP99Ms, 1)} | ${fmt(r.eventLoopP99Ms, 1)} ms | ${r.loadAverage} |`,
      );
    }
  } finally {
    await stopChild(bare);
    await stopChild(service);
    rmSync(work, { recursive: true, force: true });
  }
}

runMain(main, stopAllChildren);
