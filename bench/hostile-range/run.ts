/**
 * Hostile `Range` headers against the event loop (issue 40). The service runs as a child process
 * (the build; embedded database in a temp dir, or a scratch database on DATABASE_URL's PostgreSQL)
 * with one pack and one data file. CLIENTS clients (32) each send, on their own keep-alive
 * connection, HEAD and GET to the pack link and to a download link (`/resources/files/...`) in
 * turn, one request every CLIENT_INTERVAL_MS (100: 10 a second each, 320 in all; 0 = each sends
 * its next request as soon as the previous one is answered, which saturates the service whatever
 * the header), while a worker thread of this process times GET /server/ping every
 * PING_INTERVAL_MS (10) on its own connection. Three phases of SECONDS (20) each:
 *   1. idle: the pings alone;
 *   2. benign: the clients send `Range: bytes=0-1` (the same load with an ordinary header);
 *   3. hostile: the clients send `Range: bytes=` + 15,500 tabs + `!` (the issue's header).
 * Each phase reports the ping latency (p50, p99, max), the clients' requests per second and
 * statuses, the service process's CPU (per second, and per client request: unlike latency, not
 * moved by other load on a shared machine) and its event-loop delay (its /metrics); the goal is
 * a ping p99 under 20 ms in the hostile phase (the exit code is 1 when it is missed).
 *
 *   npm run build && npm run bench:hostile-range
 *   SERVICE_SOURCE=src npm run bench:hostile-range   # src/ through ts-node (no build needed)
 *   CLIENTS=32 CLIENT_INTERVAL_MS=100 SECONDS=20 PING_INTERVAL_MS=10 TABS=15500 FILE_BYTES=4096 \
 *     PHASES=idle,benign,hostile npm run bench:hostile-range
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { AdminApi, expectCall } from '../harness/api';
import { cpuMs } from '../harness/cpu';
import { scratchDatabase } from '../harness/database';
import { BENCH_ADMIN_TOKEN, fmt, intFromEnv, listFromEnv, loadAverage, OUT_DIR, runMain } from '../harness/env';
import { eventLoopDelay, EventLoopDelay } from '../harness/event-loop';
import { LatencySummary, send, summarize } from '../harness/load';
import { Child, startServiceProcess, stopAllChildren, stopChild } from '../harness/process';

const CLIENTS = intFromEnv('CLIENTS', 32);
const CLIENT_INTERVAL_MS = intFromEnv('CLIENT_INTERVAL_MS', 100);
const SECONDS = intFromEnv('SECONDS', 20);
const PING_INTERVAL_MS = intFromEnv('PING_INTERVAL_MS', 10);
const TABS = intFromEnv('TABS', 15_500);
const FILE_BYTES = intFromEnv('FILE_BYTES', 4096);
const PHASES = listFromEnv('PHASES', ['idle', 'benign', 'hostile']);
const GOAL_P99_MS = 20;

const HOSTILE_RANGE = `bytes=${'\t'.repeat(TABS)}!`;
const BENIGN_RANGE = 'bytes=0-1';

/**
 * The ping timer, in a worker thread: its own event loop, so the 32 clients of the main thread
 * cannot delay the timing. Sends GET /server/ping every `interval` ms (the next one waits for the
 * answer), until told to stop; answers the latencies in ms.
 */
const PING_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { Agent, request } = require('node:http');
const agent = new Agent({ keepAlive: true, maxSockets: 1 });
const latencies = [];
let failures = 0;
let running = true;
parentPort.on('message', () => (running = false));
const ping = () => new Promise((resolve) => {
  const t0 = process.hrtime.bigint();
  const outgoing = request(workerData.url + '/server/ping', { agent }, (response) => {
    response.resume();
    response.on('end', () => {
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      if (response.statusCode !== 200) failures++;
      resolve();
    });
  });
  outgoing.on('error', () => { failures++; resolve(); });
  outgoing.end();
});
(async () => {
  while (running) {
    const started = Date.now();
    await ping();
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, workerData.interval - (Date.now() - started))));
  }
  agent.destroy();
  parentPort.postMessage({ latencies, failures });
})();
`;

interface Phase {
  name: string;
  range: string | null;
  ping: LatencySummary & { failures: number };
  clientRps: number;
  /** CPU of the service process (every thread, the embedded database's included) per second of the phase, ms. */
  serviceCpuMsPerSecond: number;
  statuses: Record<string, number>;
  loop: EventLoopDelay;
  loadAverage: number;
}

async function runPhase(service: Child, name: string, range: string | null, targets: string[]): Promise<Phase> {
  await eventLoopDelay(service.url); // starts the service's event-loop window
  const worker = new Worker(PING_WORKER, { eval: true, workerData: { url: service.url, interval: PING_INTERVAL_MS } });
  const pinged = new Promise<{ latencies: number[]; failures: number }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  const statuses: Record<string, number> = {};
  let requests = 0;
  const deadline = Date.now() + SECONDS * 1000;
  const client = async (index: number) => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    // Spread over the interval, so the clients do not all send at once.
    await new Promise((resolve) => setTimeout(resolve, (index * CLIENT_INTERVAL_MS) / CLIENTS));
    for (let turn = index; Date.now() < deadline; turn++) {
      const sent = Date.now();
      const method = turn % 2 === 0 ? 'HEAD' : 'GET';
      const path = targets[Math.floor(turn / 2) % targets.length];
      try {
        const answer = await send(agent, service.url, {
          method: method as 'GET',
          path,
          headers: { Range: range as string },
        });
        statuses[`${method} ${answer.status}`] = (statuses[`${method} ${answer.status}`] ?? 0) + 1;
      } catch {
        statuses[`${method} error`] = (statuses[`${method} error`] ?? 0) + 1;
      }
      requests++;
      const wait = CLIENT_INTERVAL_MS - (Date.now() - sent);
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
    agent.destroy();
  };
  const started = Date.now();
  const cpuBefore = cpuMs(service.pid);
  if (range === null) await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
  else await Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i)));
  const seconds = (Date.now() - started) / 1000;
  const serviceCpuMsPerSecond = (cpuMs(service.pid) - cpuBefore) / seconds;
  worker.postMessage('stop');
  const { latencies, failures } = await pinged;
  await worker.terminate();
  const loop = await eventLoopDelay(service.url);
  return {
    name,
    range: range === null ? null : range.length > 20 ? `bytes= + ${TABS} tabs + !` : range,
    ping: { ...summarize(latencies), failures },
    clientRps: requests / seconds,
    serviceCpuMsPerSecond,
    statuses,
    loop,
    loadAverage: loadAverage(),
  };
}

function report(phase: Phase): void {
  const ping = phase.ping;
  const statuses = Object.entries(phase.statuses)
    .sort()
    .map(([key, count]) => `${key}: ${fmt(count)}`)
    .join(', ');
  console.log(
    `${phase.name.padEnd(8)} ping ${fmt(ping.count)} × p50 ${ping.p50.toFixed(1)} ms, p99 ${ping.p99.toFixed(1)} ms, ` +
      `max ${ping.max.toFixed(1)} ms${ping.failures > 0 ? `, ${ping.failures} failed` : ''}; ` +
      (phase.range === null ? 'no clients' : `${CLIENTS} clients ${fmt(phase.clientRps)} requests/s (${statuses})`) +
      `; service CPU ${fmt(phase.serviceCpuMsPerSecond)} ms/s` +
      (phase.range === null ? '' : ` (${(phase.serviceCpuMsPerSecond / phase.clientRps).toFixed(2)} ms a request)`) +
      `, event loop p99 ${phase.loop.p99Ms.toFixed(1)} ms, max ${phase.loop.maxMs.toFixed(1)} ms; load average ${phase.loadAverage}`,
  );
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'rhythmc-bench-range-'));
  const serverUrl = process.env.DATABASE_URL?.trim() || null;
  const database = serverUrl ? await scratchDatabase(serverUrl, 'hostile_range') : null;
  let service: Child | null = null;
  try {
    const resourceDir = join(work, 'resources');
    mkdirSync(join(resourceDir, 'data'), { recursive: true });
    mkdirSync(join(resourceDir, 'packs'), { recursive: true });
    writeFileSync(join(resourceDir, 'data', 'range.bin'), Buffer.alloc(FILE_BYTES, 1));
    writeFileSync(join(resourceDir, 'packs', 'range.zip'), Buffer.alloc(FILE_BYTES, 2));
    service = await startServiceProcess({
      databaseUrl: database?.url ?? '',
      adminToken: BENCH_ADMIN_TOKEN,
      source: process.env.SERVICE_SOURCE === 'src' ? 'src' : 'dist',
      log: 'hostile-range-service.log',
      env: { DATA_DIR: join(work, 'data'), RESOURCE_DIR: resourceDir, THROTTLE_LOGIN_LIMIT: '100000' },
    });
    const admin = new AdminApi(service.url, BENCH_ADMIN_TOKEN);
    await admin.putPacks([
      { name: 'range', displayName: 'Range', type: 'FULL', availableSongs: [], file: 'packs/range.zip' },
    ]);
    const created = await admin.createServer('bench-range');
    const { accessToken } = await expectCall<{ accessToken: string }>(
      200,
      service.url,
      'POST',
      '/server/login',
      created.bootstrapToken,
      {
        pluginVersion: 1,
        pluginSHA: 'bench',
      },
    );
    const links = await expectCall<Array<{ url: string }>>(200, service.url, 'POST', '/resources/down', accessToken, [
      'data/range.bin',
    ]);
    const packs = await expectCall<Array<{ url: string }>>(
      200,
      service.url,
      'GET',
      '/resources/packmanifest',
      accessToken,
    );
    const local = (url: string) => {
      const parsed = new URL(url);
      return parsed.pathname + parsed.search;
    };
    const targets = [local(packs[0].url), local(links[0].url)];

    console.log(
      `service: ${process.env.SERVICE_SOURCE === 'src' ? 'src (ts-node)' : 'dist'}, ${serverUrl ? 'PostgreSQL' : 'embedded database'}; ` +
        `${CLIENTS} clients, ${CLIENT_INTERVAL_MS > 0 ? `one request every ${CLIENT_INTERVAL_MS} ms each` : 'closed loop'}, ` +
        `HEAD and GET in turn to a pack link and a download link of ${FILE_BYTES} bytes; ` +
        `ping every ${PING_INTERVAL_MS} ms; ${SECONDS} s per phase`,
    );
    const phases: Phase[] = [];
    const ranges: Record<string, string | null> = { idle: null, benign: BENIGN_RANGE, hostile: HOSTILE_RANGE };
    for (const name of PHASES) {
      if (!(name in ranges)) throw new Error(`PHASES: "${name}" is not one of ${Object.keys(ranges).join(', ')}`);
      const phase = await runPhase(service, name, ranges[name], targets);
      report(phase);
      phases.push(phase);
    }
    const hostile = phases.find((phase) => phase.name === 'hostile');
    const met = hostile === undefined || (hostile.ping.p99 < GOAL_P99_MS && hostile.ping.failures === 0);
    if (hostile)
      console.log(
        `goal: ping p99 under ${GOAL_P99_MS} ms with ${CLIENTS} hostile clients: ${met ? 'met' : 'MISSED'} (${hostile.ping.p99.toFixed(1)} ms)`,
      );
    mkdirSync(OUT_DIR, { recursive: true });
    writeFileSync(
      join(OUT_DIR, 'hostile-range.json'),
      JSON.stringify(
        { clients: CLIENTS, clientIntervalMs: CLIENT_INTERVAL_MS, seconds: SECONDS, tabs: TABS, phases },
        null,
        2,
      ),
    );
    if (!met) process.exitCode = 1;
  } finally {
    await stopChild(service);
    await database?.drop();
    rmSync(work, { recursive: true, force: true });
  }
}

runMain(main, stopAllChildren);
