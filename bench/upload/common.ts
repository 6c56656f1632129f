/** Shared by the score-upload benchmark scripts. */
import { Client } from 'pg';

export const BENCH_DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/rhythmc_bench_upload';
export const BENCH_REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';

export function intFromEnv(name: string, fallback: number): number {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  if (!/^\d+$/.test(value)) throw new Error(`${name} must be a non-negative integer`);
  return Number(value);
}

export function databaseName(url: string): string {
  return decodeURIComponent(new URL(url).pathname.slice(1));
}

/** Refuses any database whose name does not say it is a benchmark database. */
export function assertBenchDatabase(url: string): void {
  const name = databaseName(url);
  if (!/bench/.test(name)) throw new Error(`Refusing to use "${name}": benchmark databases have "bench" in their name`);
}

export async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export const seconds = (startedMs: number) => ((Date.now() - startedMs) / 1000).toFixed(1);
