/**
 * Child processes of a benchmark: the service (built dist/, or src/ through ts-node), bare
 * handlers, and their memory. Readiness is polled over HTTP, never read from log lines, so a
 * change of the log format cannot break a benchmark.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { OUT_DIR, ROOT } from './env';

export interface Child {
  name: string;
  child: ChildProcess;
  pid: number;
  port: number;
  url: string;
  /** Milliseconds from spawn to ready. */
  startedMs: number;
}

/** A free loopback port (bound and released; the child binds it right after). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface SpawnOptions {
  name: string;
  /** Arguments of `node`: a script path, optionally preceded by `-r ts-node/register/transpile-only`. */
  args: string[];
  env: Record<string, string>;
  port: number;
  /** Path answered with 2xx once the process is ready. */
  readyPath: string;
  timeoutMs?: number;
  /** Write the child's output to bench/.out/<log> (appending) instead of discarding it. */
  log?: string;
  /** The child's working directory (default: this checkout). */
  cwd?: string;
}

/** Children still running, so an interrupted benchmark does not leave services behind (stopAllChildren). */
const running = new Set<ChildProcess>();

/** SIGTERM to every child still running (for signal handlers: synchronous, no waiting). */
export function stopAllChildren(): void {
  for (const child of running) child.kill('SIGTERM');
}

/** Spawns `node …` and waits until `readyPath` answers 2xx; the child's exit fails the wait. */
export async function spawnReady(options: SpawnOptions): Promise<Child> {
  const started = Date.now();
  const child = spawn(process.execPath, options.args, {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, TS_NODE_TRANSPILE_ONLY: 'true', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-4000);
  };
  if (options.log) {
    mkdirSync(OUT_DIR, { recursive: true });
    const stream = createWriteStream(join(OUT_DIR, options.log), { flags: 'a' });
    child.stdout?.pipe(stream);
    child.stderr?.pipe(stream);
  }
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited: number | null | undefined;
  child.once('exit', (code) => (exited = code));

  const url = `http://127.0.0.1:${options.port}`;
  const deadline = Date.now() + (options.timeoutMs ?? 600_000);
  while (Date.now() < deadline) {
    if (exited !== undefined) throw new Error(`${options.name} exited with ${exited}:\n${tail}`);
    try {
      const response = await fetch(`${url}${options.readyPath}`, { signal: AbortSignal.timeout(2_000) });
      if (response.ok)
        return {
          name: options.name,
          child,
          pid: child.pid as number,
          port: options.port,
          url,
          startedMs: Date.now() - started,
        };
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  child.kill('SIGKILL');
  throw new Error(`${options.name} was not ready within ${options.timeoutMs ?? 600_000} ms:\n${tail}`);
}

/** SIGTERM, then SIGKILL after `graceMs`. */
export async function stopChild(started: Child | null | undefined, graceMs = 15_000): Promise<void> {
  if (!started || started.child.exitCode !== null || started.child.signalCode !== null) return;
  const exited = new Promise((resolve) => started.child.once('exit', resolve));
  started.child.kill('SIGTERM');
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, graceMs))]);
  if (started.child.exitCode === null && started.child.signalCode === null) {
    started.child.kill('SIGKILL');
    await exited;
  }
}

export interface ServiceOptions {
  /** DATABASE_URL; empty: embedded database in DATA_DIR. */
  databaseUrl: string;
  redisUrl?: string;
  adminToken: string;
  /** `dist` (the build, default when present) or `src` (ts-node, transpile-only: the same JavaScript). */
  source?: 'dist' | 'src';
  /**
   * Another checkout whose build (`<buildRoot>/dist/src/main.js`) to start instead of this one's,
   * in that directory (the rolling-upgrade check starts the previous release on the current schema).
   */
  buildRoot?: string;
  port?: number;
  /** Further variables (decisions.md §1); they win over the defaults here. */
  env?: Record<string, string>;
  name?: string;
  log?: string;
}

export function serviceSource(preferred?: 'dist' | 'src'): 'dist' | 'src' {
  if (preferred) return preferred;
  return existsSync(join(ROOT, 'dist', 'src', 'main.js')) ? 'dist' : 'src';
}

/**
 * SERVICE_PG_SOCKET_DIR (e.g. /var/run/postgresql): the service reaches PostgreSQL through its
 * Unix-domain socket in that directory instead of TCP, as a deployment with PostgreSQL on the
 * same host would (`DATABASE_URL=postgres://user@localhost/db?host=/var/run/postgresql`).
 */
export function overSocket(databaseUrl: string): string {
  const dir = process.env.SERVICE_PG_SOCKET_DIR;
  if (!dir || databaseUrl === '') return databaseUrl;
  const url = new URL(databaseUrl);
  url.searchParams.set('host', dir);
  return url.toString();
}

/**
 * Starts the real service as a child process (`node dist/src/main.js`, or src/main.ts) and waits
 * for /health/ready, then checks that the service answering is this one: its admin token opens
 * `GET /admin/servers`. A free port can be taken by another process (a parallel test's app)
 * between freePort and the child's listen; the child then fails to bind while the other process
 * answers /health/ready. Then the child is stopped and the start tried again on another port (a
 * port the caller chose is not changed: that fails).
 */
export async function startServiceProcess(options: ServiceOptions): Promise<Child> {
  for (let attempt = 1; ; attempt++) {
    const service = await spawnService(options);
    const answer = await fetch(`${service.url}/admin/servers`, {
      headers: { Authorization: `Bearer ${options.adminToken}` },
      signal: AbortSignal.timeout(10_000),
    }).catch(() => null);
    if (answer?.status !== 401) return service;
    await stopChild(service);
    if (options.port !== undefined || attempt === 3)
      throw new Error(`${service.name}: another process answers on port ${service.port}`);
  }
}

async function spawnService(options: ServiceOptions): Promise<Child> {
  const port = options.port ?? (await freePort());
  const root = options.buildRoot ?? ROOT;
  const source = options.buildRoot ? 'dist' : serviceSource(options.source);
  if (source === 'dist' && !existsSync(join(root, 'dist', 'src', 'main.js')))
    throw new Error(`${join(root, 'dist', 'src', 'main.js')} is missing: run \`npm run build\` there first`);
  // SERVICE_NODE_ARGS: extra flags for the service's node only (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`,
  // which NODE_OPTIONS does not accept), so a profile covers the service and not the load driver.
  const nodeArgs = (process.env.SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  // SERVICE_ENV: `NAME=value` pairs (space-separated) for the service's environment only, e.g. a
  // different malloc (`LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 MALLOC_CONF=…`), so
  // the load driver and a bare handler of the same run keep theirs.
  const serviceEnv = Object.fromEntries(
    (process.env.SERVICE_ENV ?? '')
      .split(' ')
      .filter(Boolean)
      .map((pair) => {
        const at = pair.indexOf('=');
        if (at < 1) throw new Error(`SERVICE_ENV: "${pair}" is not NAME=value`);
        return [pair.slice(0, at), pair.slice(at + 1)];
      }),
  );
  const args =
    source === 'dist'
      ? [...nodeArgs, join(root, 'dist', 'src', 'main.js')]
      : [...nodeArgs, '-r', 'ts-node/register/transpile-only', join(ROOT, 'src', 'main.ts')];
  return spawnReady({
    name: options.name ?? `service (${source})`,
    args,
    cwd: root,
    port,
    readyPath: '/health/ready',
    log: options.log,
    env: {
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      DATABASE_URL: overSocket(options.databaseUrl),
      REDIS_URL: options.redisUrl ?? '',
      ADMIN_TOKEN: options.adminToken,
      LOG_LEVEL: 'warn',
      ...serviceEnv,
      ...options.env,
    },
  });
}

/** A bare Express + pg handler of bench/<feature>/bare-server.ts (ts-node), ready when `readyPath` answers. */
export async function startBareServer(script: string, env: Record<string, string>, readyPath: string): Promise<Child> {
  const port = await freePort();
  return spawnReady({
    name: `bare ${script}`,
    args: ['-r', 'ts-node/register/transpile-only', join(ROOT, script)],
    env: { ...env, PORT: String(port) },
    port,
    readyPath,
  });
}

/** Resident and peak resident memory of a process, in bytes (Linux /proc: VmRSS, VmHWM). */
export function memoryOf(pid: number): { rss: number; peakRss: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    return { rss: kib('VmRSS'), peakRss: kib('VmHWM') };
  } catch {
    return { rss: NaN, peakRss: NaN };
  }
}

/**
 * CPU seconds (user + system) a process has used, and its main thread alone (Linux /proc: the
 * thread whose id is the pid runs the event loop; worker threads and libuv's pool are the rest).
 */
export function cpuOf(pid: number): { process: number; mainThread: number } {
  const seconds = (path: string) => {
    try {
      // Fields after the parenthesised command name: utime and stime are the 12th and 13th.
      const fields = readFileSync(path, 'utf8').split(') ')[1].split(' ');
      return (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      return NaN;
    }
  };
  return { process: seconds(`/proc/${pid}/stat`), mainThread: seconds(`/proc/${pid}/task/${pid}/stat`) };
}

/**
 * CPU seconds (user + system) of every PostgreSQL process on this machine, by pid: with
 * `postgresCoresSince`, what the database spent over a window (backends, autovacuum, the WAL
 * writer). A process that exits inside the window is not counted; one that starts in it counts whole.
 */
export function postgresCpu(): Map<number, number> {
  const byPid = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const open = stat.indexOf('(');
      const close = stat.lastIndexOf(') ');
      if (stat.slice(open + 1, close) !== 'postgres') continue;
      const fields = stat.slice(close + 2).split(' ');
      byPid.set(Number(entry), (Number(fields[11]) + Number(fields[12])) / 100);
    } catch {
      // The process ended while it was read.
    }
  }
  return byPid;
}

/** The CPU seconds PostgreSQL used since `before` (postgresCpu()). */
export function postgresCpuSecondsSince(before: Map<number, number>): number {
  let used = 0;
  for (const [pid, cpu] of postgresCpu()) used += cpu - (before.get(pid) ?? 0);
  return used;
}

/** The cores PostgreSQL used since `before` (postgresCpu()), over `seconds`. */
export function postgresCoresSince(before: Map<number, number>, seconds: number): number {
  return Math.round((postgresCpuSecondsSince(before) / seconds) * 1000) / 1000;
}

export const mib = (bytes: number) => Math.round(bytes / 1024 / 1024);
