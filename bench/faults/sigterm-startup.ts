/**
 * SIGTERM during start-up, measured on the built service (docs/operations.md "Faults and recovery,
 * measured"): for ROUNDS rounds, `node dist/src/main.js` is sent SIGTERM at one point of its start
 * and the time to its exit and the exit status are recorded; then the next start on the same
 * database must listen (and, embedded, find no lock left behind). The points, found from the log
 * (LOG_LEVEL=info) except the first:
 *
 * - `modules`: SPAWN_DELAY_MS (100) after the spawn, while node loads the modules (or, on a busy
 *   machine, before node runs main.js at all: then the signal's default action ends it);
 * - `embedded start`: at "Starting the embedded database" (embedded only), on a fresh data dir
 *   (PGlite's initdb) and on one a previous start made;
 * - `migrations`: at "Applying pending migrations", on a fresh data dir / a fresh PostgreSQL database.
 *
 * Embedded, or PostgreSQL with BENCH_DATABASE_URL (a server URL; the databases made are named
 * rhythmc_bench_sigterm_*, and dropped).
 *
 *   npm run build && npm run bench:fault:sigterm-startup
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres ROUNDS=5 npm run bench:fault:sigterm-startup
 */
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withClient } from '../harness/database';
import { BENCH_ADMIN_TOKEN, intFromEnv, loadAverage, ROOT, runMain, withDatabase } from '../harness/env';

const ROUNDS = intFromEnv('ROUNDS', 5);
const SPAWN_DELAY_MS = intFromEnv('SPAWN_DELAY_MS', 100);
const SERVER_URL = process.env.BENCH_DATABASE_URL ?? null;

interface Started {
  child: ChildProcess;
  exited: Promise<number | null>;
  line(pattern: RegExp): Promise<void>;
}

function startService(env: Record<string, string>): Started {
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'src', 'main.js')], {
    cwd: ROOT,
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
      ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
      REDIS_URL: '',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const waiting = new Set<() => void>();
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    for (const check of waiting) check();
  });
  child.stderr?.resume();
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const line = (pattern: RegExp) =>
    Promise.race([
      new Promise<void>((resolve) => {
        const check = () => {
          if (!pattern.test(out)) return;
          waiting.delete(check);
          resolve();
        };
        waiting.add(check);
        check();
      }),
      exited.then((code) => {
        throw new Error(`the service exited with ${code} before ${pattern}`);
      }),
    ]);
  return { child, exited, line };
}

/** A database no migration has run on, with the environment that points the service at it. */
async function freshDatabase(dataDir: string): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  if (SERVER_URL === null) return { env: { DATABASE_URL: '', DATA_DIR: dataDir }, drop: () => Promise.resolve() };
  const name = `rhythmc_bench_sigterm_${randomBytes(4).toString('hex')}`;
  await withClient(SERVER_URL, (client) => client.query(`CREATE DATABASE "${name}"`));
  return {
    env: { DATABASE_URL: withDatabase(SERVER_URL, name), DATA_DIR: dataDir },
    drop: () =>
      withClient(SERVER_URL, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(
        () => undefined,
      ),
  };
}

async function main(): Promise<void> {
  const embeddedStart = (service: Started) => service.line(/Starting the embedded database/);
  const points: Array<{ name: string; existing?: boolean; at: (service: Started) => Promise<void> }> = [
    { name: 'modules', at: () => new Promise((resolve) => setTimeout(resolve, SPAWN_DELAY_MS)) },
    ...(SERVER_URL === null
      ? [
          { name: 'embedded start (fresh dir: initdb)', at: embeddedStart },
          { name: 'embedded start (existing dir)', existing: true, at: embeddedStart },
        ]
      : []),
    { name: 'migrations', at: (service: Started) => service.line(/Applying pending migrations/) },
  ];
  const results = new Map<string, Array<{ code: number | null; ms: number }>>(points.map((p) => [p.name, []]));
  const loads: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const point of points) {
      const dir = mkdtempSync(join(tmpdir(), 'rhythmc-sigterm-'));
      const database = await freshDatabase(join(dir, 'data'));
      try {
        if (point.existing === true) {
          // A data dir made and migrated by a start that ran to the end.
          const first = startService(database.env);
          await first.line(/listening on/);
          first.child.kill('SIGTERM');
          await first.exited;
        }
        loads.push(loadAverage());
        const service = startService(database.env);
        await point.at(service);
        const sent = performance.now();
        service.child.kill('SIGTERM');
        const code = await service.exited;
        results.get(point.name)?.push({ code, ms: performance.now() - sent });
        if (SERVER_URL === null && existsSync(join(dir, 'data', 'pglite.lock')))
          throw new Error(`${point.name}: the lock was left behind`);
        // The next start on the same database listens, then stops.
        const next = startService(database.env);
        await next.line(/listening on/);
        next.child.kill('SIGTERM');
        const nextCode = await next.exited;
        if (nextCode !== 0) throw new Error(`${point.name}: the next start exited with ${nextCode}`);
      } finally {
        await database.drop();
        rmSync(dir, { recursive: true, force: true });
      }
    }
  }
  process.stdout.write(
    `SIGTERM during start-up, built service, ${SERVER_URL === null ? 'embedded' : 'PostgreSQL'}, ${ROUNDS} rounds; load average ${Math.min(...loads)}–${Math.max(...loads)}\n`,
  );
  for (const [name, runs] of results) {
    const ms = runs.map((run) => run.ms).sort((a, b) => a - b);
    const codes = [...new Set(runs.map((run) => (run.code === null ? 'none (killed by SIGTERM)' : run.code)))].join(
      ', ',
    );
    process.stdout.write(
      `${name.padEnd(36)} exit ${codes}; SIGTERM to exit ${(ms[0] / 1000).toFixed(2)}–${(ms[ms.length - 1] / 1000).toFixed(2)} s (median ${(ms[Math.floor(ms.length / 2)] / 1000).toFixed(2)} s); next start listened every time\n`,
    );
  }
}

runMain(main);
