/** Benchmark databases on a real PostgreSQL: create, migrate, drop. Every name must contain "bench". */
import 'reflect-metadata';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions } from '../../src/database/database-options';
import { runMigrations } from '../../src/database/migrate';
import { assertBenchDatabase, databaseName, withDatabase } from './env';

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

export async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function withServer<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  return withClient(withDatabase(url, 'postgres'), work);
}

export async function databaseExists(url: string): Promise<boolean> {
  const result = await withServer(url, (client) =>
    client.query('SELECT 1 FROM pg_database WHERE datname = $1', [databaseName(url)]),
  );
  return (result.rowCount ?? 0) > 0;
}

export async function migrate(url: string): Promise<void> {
  const dataSource = await new DataSource(buildDataSourceOptions({ url, embedded: false })).initialize();
  try {
    await runMigrations(dataSource, false);
  } finally {
    await dataSource.destroy();
  }
}

/** Creates the database when missing (dropping it first with `reset`), then applies the migrations. */
export async function ensureDatabase(url: string, reset = false): Promise<void> {
  assertBenchDatabase(url);
  const name = databaseName(url);
  await withServer(url, async (client) => {
    if (reset) await client.query(`DROP DATABASE IF EXISTS ${quoted(name)} WITH (FORCE)`);
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${quoted(name)}`);
  });
  await migrate(url);
}

/** Drops and recreates the database, migrated. */
export function recreateDatabase(url: string): Promise<void> {
  return ensureDatabase(url, true);
}

export async function dropDatabase(url: string): Promise<void> {
  assertBenchDatabase(url);
  await withServer(url, (client) => client.query(`DROP DATABASE IF EXISTS ${quoted(databaseName(url))} WITH (FORCE)`));
}

/** A fresh, migrated `rhythmc_bench_<tag>_<time>` on the server of `serverUrl`, for one run. */
export async function scratchDatabase(serverUrl: string, tag: string): Promise<{ url: string; drop(): Promise<void> }> {
  const url = withDatabase(serverUrl, `rhythmc_bench_${tag}_${Date.now().toString(36)}`);
  await ensureDatabase(url);
  return { url, drop: () => dropDatabase(url) };
}

/**
 * The server's write-ahead-log counters (PostgreSQL ≥ 14), cumulative since its statistics reset;
 * server-wide, so whatever else writes on the server counts too.
 */
export interface WalCounters {
  bytes: number;
  /** Full-page images: the first change of a page after a checkpoint logs the whole 8 kB page. */
  fullPageImages: number;
  /** Checkpoints started, on schedule or because max_wal_size was reached. */
  checkpoints: number;
  /** Of those, started because max_wal_size was reached. */
  requestedCheckpoints: number;
}

export async function walCounters(client: Client): Promise<WalCounters> {
  const version = await client.query<{ v: number }>(`SELECT current_setting('server_version_num')::int AS v`);
  // PostgreSQL 17 moved the checkpoint counters from pg_stat_bgwriter to pg_stat_checkpointer.
  const checkpoints =
    version.rows[0].v >= 170000
      ? 'SELECT num_timed AS timed, num_requested AS requested FROM pg_stat_checkpointer'
      : 'SELECT checkpoints_timed AS timed, checkpoints_req AS requested FROM pg_stat_bgwriter';
  const { rows } = await client.query<{ bytes: string; fpi: string; timed: string; requested: string }>(
    `SELECT w.wal_bytes AS bytes, w.wal_fpi AS fpi, c.timed, c.requested FROM pg_stat_wal w, (${checkpoints}) c`,
  );
  const row = rows[0];
  return {
    bytes: Number(row.bytes),
    fullPageImages: Number(row.fpi),
    checkpoints: Number(row.timed) + Number(row.requested),
    requestedCheckpoints: Number(row.requested),
  };
}

export function walDelta(after: WalCounters, before: WalCounters): WalCounters {
  return {
    bytes: after.bytes - before.bytes,
    fullPageImages: after.fullPageImages - before.fullPageImages,
    checkpoints: after.checkpoints - before.checkpoints,
    requestedCheckpoints: after.requestedCheckpoints - before.requestedCheckpoints,
  };
}

/**
 * The server settings that decide a write's cost: how much WAL it makes and how often that is
 * flushed, and how much of the working set stays in PostgreSQL's buffers (with the default 128 MB
 * the backends evict dirty pages themselves, docs/benchmarks-archive.md "Network day").
 */
export async function writePathSettings(client: Client): Promise<string> {
  const { rows } = await client.query<{ name: string; setting: string }>(
    `SELECT name, current_setting(name) AS setting FROM pg_settings
      WHERE name IN ('shared_buffers', 'max_wal_size', 'checkpoint_timeout', 'wal_compression', 'synchronous_commit', 'full_page_writes')
      ORDER BY name`,
  );
  return rows.map((row) => `${row.name}=${row.setting}`).join(', ');
}
