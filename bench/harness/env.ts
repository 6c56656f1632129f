/** Settings shared by every benchmark: environment parsing, database names and small formatting helpers. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The repository root (bench scripts run from anywhere). */
export const ROOT = join(__dirname, '..', '..');
/** Where benchmarks write their JSON results and service logs (git-ignored). */
export const OUT_DIR = join(ROOT, 'bench', '.out');

export const BENCH_REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const BENCH_ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';

/** BENCH_DATABASE_URL, or the benchmark's own database on the local PostgreSQL. */
export function benchDatabaseUrl(defaultName: string): string {
  return process.env.BENCH_DATABASE_URL ?? `postgres://postgres@127.0.0.1:5432/${defaultName}`;
}

export function intFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw)))
    throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return Number(raw);
}

export function listFromEnv(name: string, fallback: string[]): string[] {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  return raw
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

export function databaseName(url: string): string {
  return decodeURIComponent(new URL(url).pathname.slice(1));
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** Refuses to load or drop data in a database whose name does not say it is a benchmark's. */
export function assertBenchDatabase(url: string): void {
  const name = databaseName(url);
  if (!/bench/.test(name))
    throw new Error(`Refusing to use database "${name}": benchmark databases have "bench" in their name`);
}

/** Seconds since `startedMs`, one decimal. */
export const secondsSince = (startedMs: number) => ((Date.now() - startedMs) / 1000).toFixed(1);

/** The 1-minute load average (Linux), recorded next to every figure: the machine is shared. */
export function loadAverage(): number {
  try {
    return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
  } catch {
    return NaN;
  }
}

export const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits });

export function errorText(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

/**
 * Runs a benchmark's main and exits non-zero with the error on failure. `onSignal` (e.g. stopping
 * the child processes) runs on SIGINT/SIGTERM before the process exits.
 */
export function runMain(main: () => Promise<void>, onSignal?: () => void): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      onSignal?.();
      process.exit(130);
    });
  }
  main().catch((error: unknown) => {
    process.stderr.write(`${errorText(error)}\n`);
    process.exit(1);
  });
}
