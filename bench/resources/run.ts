/**
 * Resource index and manifest benchmark (issue 6). Starts the real service (embedded database,
 * or a scratch database on the PostgreSQL of DATABASE_URL), then over loopback HTTP:
 *   1. first index of 20,000 files (POST /admin/resources/rescan, every file hashed),
 *   2. a rescan with nothing changed (target: no file re-hashed, under 10 % of the first),
 *   3. GET /resources/manifest?lang=true throughput (bounded loop, fixed concurrency; the body is
 *      counted and dropped, not decoded, so the client costs the shared event loop little), with
 *      the event-loop delay of the process (service and client: p50, p99 and max) during the loop,
 *      measured as the service's own metric (`rhythmc_event_loop_delay_seconds`: same resolution,
 *      the resolution taken off),
 *   4. POST /resources/down for 1,000 paths.
 *
 *   npm run bench:resources                      # embedded PGlite
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench:resources
 *   BENCH_FILES=5000 BENCH_REQUESTS=100 npm run bench:resources
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { startService } from '../../src/app.factory';
import { loadConfig } from '../../src/config/app-config';
import { EVENT_LOOP_RESOLUTION_MS } from '../../src/observability/process-metrics';
import { scratchDatabase } from '../harness/database';
import { BENCH_ADMIN_TOKEN as ADMIN_TOKEN, intFromEnv, loadAverage, runMain } from '../harness/env';
import { generateResourceTree } from '../harness/generate';

const FILES = intFromEnv('BENCH_FILES', 20_000);
const REQUESTS = intFromEnv('BENCH_REQUESTS', 200);
const CONCURRENCY = intFromEnv('BENCH_CONCURRENCY', 4);

async function call(base: string, method: string, path: string, token: string, body?: unknown): Promise<{ status: number; text: string }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'User-Agent': 'rhythmc-bench/1.0 node/20' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 200)}`);
  return { status: response.status, text };
}

/** GET whose body is counted and dropped (no decoding): the client's share of the event loop stays small. */
function getDiscarding(base: string, path: string, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpGet(`${base}${path}`, { headers: { Authorization: `Bearer ${token}`, 'User-Agent': 'rhythmc-bench/1.0 node/20' } }, (response) => {
      let bytes = 0;
      response.on('data', (chunk: Buffer) => (bytes += chunk.length));
      response.on('end', () => (response.statusCode === 200 ? resolve(bytes) : reject(new Error(`GET ${path}: ${response.statusCode}`))));
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const started = process.hrtime.bigint();
  const result = await fn();
  return [result, Number(process.hrtime.bigint() - started) / 1e6];
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'rhythmc-bench-'));
  const resourceDir = join(work, 'resources');
  const serverUrl = process.env.DATABASE_URL?.trim() || null;
  const database = serverUrl ? await scratchDatabase(serverUrl, 'resources') : null;
  try {
    // The service starts on a RESOURCE_DIR that does not exist yet, so the first index is timed alone.
    const config = loadConfig({
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
      ADMIN_TOKEN,
      DATA_DIR: join(work, 'data'),
      DATABASE_URL: database?.url ?? '',
      RESOURCE_DIR: resourceDir,
      THROTTLE_LOGIN_LIMIT: '100000',
    });
    const service = await startService(config);
    const base = `http://127.0.0.1:${service.port}`;
    const sql = new Client({ connectionString: service.databaseUrl });
    try {
      const [tree, generateMs] = await timed(() => Promise.resolve(generateResourceTree(resourceDir, FILES)));
      console.log(`generated ${tree.files} files, ${(tree.bytes / 1024 / 1024).toFixed(1)} MiB in ${generateMs.toFixed(0)} ms`);

      const [first, firstMs] = await timed(() => call(base, 'POST', '/admin/resources/rescan', ADMIN_TOKEN));
      console.log(`first index: ${firstMs.toFixed(0)} ms ${first.text}`);

      await sql.connect();
      const marker = (await sql.query<{ now: Date }>('SELECT now() AS now')).rows[0].now;
      const [, rescanMs] = await timed(() => call(base, 'POST', '/admin/resources/rescan', ADMIN_TOKEN));
      const rehashed = (await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM resource_file WHERE hashed_at >= $1', [marker])).rows[0].n;
      console.log(`unchanged rescan: ${rescanMs.toFixed(0)} ms (${((rescanMs / firstMs) * 100).toFixed(1)} % of the first index), ${rehashed} files re-hashed`);

      const server = JSON.parse((await call(base, 'POST', '/admin/servers', ADMIN_TOKEN, { name: 'bench', country: 'DE' })).text) as { bootstrapToken: string };
      const login = JSON.parse((await call(base, 'POST', '/server/login', server.bootstrapToken, { pluginVersion: 1, pluginSHA: 'bench' })).text) as { accessToken: string };
      const token = login.accessToken;

      const sample = await call(base, 'GET', '/resources/manifest?lang=true', token);
      const manifest = JSON.parse(sample.text) as { Data: Array<{ path: string }>; Lang: unknown[] };
      let issued = 0;
      // As the service's metric (src/observability/process-metrics.ts): perf_hooks records the whole
      // interval between two runs of its timer, so an idle loop would read the resolution; it is
      // taken off, and the same resolution keeps the figure comparable with the other benchmarks'.
      const delay = monitorEventLoopDelay({ resolution: EVENT_LOOP_RESOLUTION_MS });
      delay.enable();
      const [, manifestMs] = await timed(() =>
        Promise.all(
          Array.from({ length: CONCURRENCY }, async () => {
            while (issued < REQUESTS) {
              issued++;
              await getDiscarding(base, '/resources/manifest?lang=true', token);
            }
          }),
        ),
      );
      delay.disable();
      const ms = (ns: number) => Math.max(0, ns / 1e6 - EVENT_LOOP_RESOLUTION_MS).toFixed(1);
      console.log(
        `manifest (${manifest.Data.length} Data + ${manifest.Lang.length} Lang entries, ${(sample.text.length / 1024).toFixed(0)} KiB): ` +
          `${REQUESTS} requests at concurrency ${CONCURRENCY} in ${manifestMs.toFixed(0)} ms = ${((REQUESTS / manifestMs) * 1000).toFixed(1)} requests/s; ` +
          `event-loop delay p50 ${ms(delay.percentile(50))} ms, p99 ${ms(delay.percentile(99))} ms, max ${ms(delay.max)} ms`,
      );

      const paths = manifest.Data.slice(0, 1_000).map((entry) => entry.path);
      const [, downMs] = await timed(() => call(base, 'POST', '/resources/down', token, paths));
      console.log(`down of ${paths.length} paths: ${downMs.toFixed(0)} ms`);
      console.log(`load average ${loadAverage()}`);
    } finally {
      await sql.end();
      await service.close();
    }
  } finally {
    await database?.drop();
    rmSync(work, { recursive: true, force: true });
  }
}

runMain(main);
