/** Shared settings of the economy benchmark (bench/economy/*.ts). */
export const BENCH_DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/rhythmc_bench_economy';

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export function databaseName(url: string): string {
  return decodeURIComponent(new URL(url).pathname.slice(1));
}

/** Refuses to load or drop data in a database whose name does not say it is a benchmark's. */
export function assertBenchDatabase(url: string): void {
  const name = databaseName(url);
  if (!/bench/.test(name)) throw new Error(`Refusing to use database "${name}": its name must contain "bench"`);
}

export function intFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return value;
}
