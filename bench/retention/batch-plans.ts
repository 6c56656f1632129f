/**
 * Retention batches and their plans (docs/benchmarks.md "Retention: a batch's plan"): a whole purge
 * of ROWS old rows, with as many young rows kept beside them, of `ws_connection` and
 * `webhook_delivery`, each batch as RetentionRepository runs it (PURGE_BATCH_SETTINGS, then the
 * map's batch SQL) and with the planner's defaults (only the lock timeout set), alternated. Each
 * variant gets a new database; its tables are never analyzed unless ANALYZE=1 (a new deployment,
 * the embedded database before its upkeep, or a backlog grown since autovacuum's last ANALYZE).
 *
 *   npm run bench:retention:plans
 *
 * Environment: BENCH_DATABASE_URL (dropped and recreated; its name must contain "bench"), ROWS
 * (200000), BATCH (2000, the service's default), ROUNDS (1 pair), ANALYZE (0). Writes
 * bench/.out/retention-batch-plans.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from 'pg';
import { recreateDatabase, withClient } from '../harness/database';
import { benchDatabaseUrl, fmt, intFromEnv, loadAverage, OUT_DIR, runMain } from '../harness/env';
import { PURGE_BATCH_SETTINGS, purgeBatchSql, RETENTION_PURGES } from '../../src/retention/retention.map';

const DATABASE_URL = benchDatabaseUrl('rhythmc_bench_retention_plans');
const ROWS = intFromEnv('ROWS', 200_000);
const BATCH = intFromEnv('BATCH', 2_000);
const ROUNDS = intFromEnv('ROUNDS', 1);
const ANALYZE = intFromEnv('ANALYZE', 0) === 1;

const VARIANTS = {
  service: PURGE_BATCH_SETTINGS,
  'planner defaults': `SELECT set_config('lock_timeout', '2s', true)`,
} as const;
type Variant = keyof typeof VARIANTS;

const TABLES = ['ws_connection', 'webhook_delivery'] as const;

/** ROWS rows ended 40 days ago, oldest first, and ROWS young ones (kept) after them. */
async function generate(client: Client): Promise<void> {
  for (const days of [40, 1]) {
    await client.query(
      `INSERT INTO ws_connection (id, instance_id, server_id, server_session_id, connected_at, last_seen_at, closed_at, close_code)
       SELECT gen_random_uuid(), 'bench', 1, gen_random_uuid(), t - interval '1 hour', t, t, 1000
         FROM (SELECT now() - make_interval(days => $2) - make_interval(secs => ($1 - g) * 0.01) AS t
                 FROM generate_series(1, $1) g) x`,
      [ROWS, days],
    );
  }
  const [hook] = (
    await client.query<{ id: number }>(
      `INSERT INTO webhook (name, url, events, secret, enabled)
       VALUES ('bench', 'https://example.invalid/h', '{play.flagged}', 'bench-secret', false) RETURNING id`,
    )
  ).rows;
  for (const days of [40, 1]) {
    await client.query(
      `INSERT INTO webhook_delivery (webhook_id, event_id, event_type, payload, state, attempts, created_at, delivered_at)
       SELECT $1, gen_random_uuid(), 'play.flagged', '{"playId": "1"}', 'delivered', 1, t, t
         FROM (SELECT now() - make_interval(days => $3) - make_interval(secs => ($2 - g) * 0.01) AS t
                 FROM generate_series(1, $2) g) x`,
      [hook.id, ROWS, days],
    );
  }
  if (ANALYZE) await client.query('ANALYZE');
}

interface PurgeFigures {
  table: string;
  deleted: number;
  batches: number;
  ms: number;
  firstBatchMs: number;
  meanBatchMs: number;
  maxBatchMs: number;
}

/** The whole purge of one table: batches until one is not full (as RetentionService runs them, without its pause). */
async function purge(client: Client, table: string, variant: Variant): Promise<PurgeFigures> {
  const map = RETENTION_PURGES.find((p) => p.table === table)!;
  const cutoff = new Date(Date.now() - 30 * 86_400_000);
  const times: number[] = [];
  let deleted = 0;
  const started = performance.now();
  for (;;) {
    const batchStarted = performance.now();
    await client.query('BEGIN');
    await client.query(VARIANTS[variant]);
    const { rows } = await client.query<{ deleted: number }>(purgeBatchSql(map), [cutoff, BATCH]);
    await client.query('COMMIT');
    times.push(performance.now() - batchStarted);
    deleted += rows[0].deleted;
    if (rows[0].deleted < BATCH) break;
  }
  const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
  if (deleted !== ROWS || rows[0].n !== ROWS) {
    throw new Error(`${table}: deleted ${deleted} and kept ${rows[0].n}, expected ${ROWS} each`);
  }
  return {
    table,
    deleted,
    batches: times.length,
    ms: performance.now() - started,
    firstBatchMs: times[0],
    meanBatchMs: times.reduce((a, b) => a + b, 0) / times.length,
    maxBatchMs: Math.max(...times),
  };
}

async function main(): Promise<void> {
  const results: Array<{ variant: Variant; load: number } & PurgeFigures> = [];
  const order: Variant[] = [];
  for (let round = 0; round < ROUNDS; round++) order.push(...(Object.keys(VARIANTS) as Variant[]));
  console.log(
    `retention batch plans: ${ROWS} doomed + ${ROWS} kept rows a table, batches of ${BATCH}, ${ANALYZE ? 'analyzed' : 'never analyzed'}`,
  );
  for (const variant of order) {
    await recreateDatabase(DATABASE_URL);
    await withClient(DATABASE_URL, async (client) => {
      await generate(client);
      for (const table of TABLES) {
        const figures = await purge(client, table, variant);
        results.push({ variant, load: loadAverage(), ...figures });
        console.log(
          `${variant.padEnd(16)} ${table.padEnd(16)} ${figures.batches} batches, ${fmt(figures.ms)} ms; ` +
            `batch first ${fmt(figures.firstBatchMs, 1)}, mean ${fmt(figures.meanBatchMs, 1)}, max ${fmt(figures.maxBatchMs, 1)} ms ` +
            `(load ${loadAverage().toFixed(2)})`,
        );
      }
    });
  }
  mkdirSync(OUT_DIR, { recursive: true });
  writeFileSync(
    join(OUT_DIR, 'retention-batch-plans.json'),
    JSON.stringify({ rows: ROWS, batch: BATCH, analyzed: ANALYZE, results }, null, 2),
  );
}

runMain(main);
