/**
 * CPU time spent per request by the HTTP process, the PostgreSQL backends of the benchmark
 * database, Redis and the load driver (Linux /proc). Unlike requests per second, CPU per
 * request is not moved by other load on a shared machine.
 */
import { readFileSync } from 'node:fs';
import Redis from 'ioredis';
import type { Client } from 'pg';

/** User + system CPU time of a process so far, in ms (fields 14 and 15 of /proc/<pid>/stat, in 1/100 s); NaN when unreadable. */
export function cpuMs(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return NaN;
  }
}

/** CPU so far of every server process connected to the monitor's database but the monitor's own. */
export async function backendCpu(monitor: Client): Promise<Map<number, number>> {
  const { rows } = await monitor.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
  );
  return new Map(rows.map((row) => [row.pid, cpuMs(row.pid)]));
}

/**
 * CPU used between two readings of backendCpu: the growth of the backends alive at both, plus all
 * of those that connected in between (pools open connections lazily and close idle ones).
 */
export function cpuDelta(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, end] of after) {
    const start = before.get(pid) ?? 0;
    if (Number.isFinite(start) && Number.isFinite(end) && end >= start) sum += end - start;
  }
  return sum;
}

/** The pid of the Redis server when it runs on this machine (readable in /proc), else null. */
export async function redisPid(redisUrl: string): Promise<number | null> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    const pid = Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1]);
    return Number.isFinite(pid) && cpuMs(pid) >= 0 ? pid : null;
  } catch {
    return null;
  } finally {
    redis.disconnect();
  }
}

export interface CpuSample {
  http: number;
  db: Map<number, number>;
  redis: number;
  driver: NodeJS.CpuUsage;
}

/** What a measurement reads CPU time from. */
export interface CpuProbe {
  /** The HTTP processes measured (one per instance). */
  httpPids: number[];
  monitor: Client;
  redisPid: number | null;
}

export async function sampleCpu(probe: CpuProbe): Promise<CpuSample> {
  return {
    http: probe.httpPids.reduce((sum, pid) => sum + cpuMs(pid), 0),
    db: await backendCpu(probe.monitor),
    redis: probe.redisPid === null ? 0 : cpuMs(probe.redisPid),
    driver: process.cpuUsage(),
  };
}

/** CPU ms per request between `before` and now. */
export interface CpuPerRequest {
  http: number;
  db: number;
  redis: number;
  driver: number;
}

export async function cpuPerRequest(probe: CpuProbe, before: CpuSample, requests: number): Promise<CpuPerRequest> {
  const after = await sampleCpu(probe);
  const driver = process.cpuUsage(before.driver);
  const per = (ms: number) => ms / Math.max(1, requests);
  return {
    http: per(after.http - before.http),
    db: per(cpuDelta(before.db, after.db)),
    redis: probe.redisPid === null ? 0 : per(after.redis - before.redis),
    driver: per((driver.user + driver.system) / 1000),
  };
}

export const totalCpu = (cpu: CpuPerRequest) => cpu.http + cpu.db + cpu.redis + cpu.driver;

/** CPU of a stretch of a run by who used it: the service process(es), PostgreSQL, Redis, the simulator or driver (this process). */
export interface Cores {
  service: number;
  db: number;
  redis: number;
  simulator: number;
}

/** Runs `work` and reports the CPU the deployment and the simulator used meanwhile: in core-seconds, and in cores (÷ wall time). */
export async function measureCpu<T>(
  probe: CpuProbe,
  work: () => Promise<T>,
): Promise<{ result: T; cpuSeconds: Cores; cores: Cores; seconds: number }> {
  const before = await sampleCpu(probe);
  const started = performance.now();
  const result = await work();
  const seconds = (performance.now() - started) / 1000;
  const after = await sampleCpu(probe);
  const simulator = process.cpuUsage(before.driver);
  const cpuSeconds: Cores = {
    service: (after.http - before.http) / 1000,
    db: cpuDelta(before.db, after.db) / 1000,
    redis: (after.redis - before.redis) / 1000,
    simulator: (simulator.user + simulator.system) / 1e6,
  };
  const cores: Cores = {
    service: cpuSeconds.service / seconds,
    db: cpuSeconds.db / seconds,
    redis: cpuSeconds.redis / seconds,
    simulator: cpuSeconds.simulator / seconds,
  };
  return { result, cpuSeconds, cores, seconds };
}

/** What the deployment used (service + PostgreSQL + Redis), without the simulator. */
export const deploymentCores = (cores: Cores) => cores.service + cores.db + cores.redis;
