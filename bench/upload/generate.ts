/**
 * Data of the score-upload benchmark, loaded in bulk into PostgreSQL: players, charts, play
 * records (INSERT … SELECT generate_series, in uid order so every index is appended to), then the
 * derived tables exactly as the service keeps them: the best per player and chart (SQL with the
 * same arithmetic as src/upload/rating.ts) and the ATP (computed by rating.ts itself, in Node).
 *
 *   npx ts-node --transpile-only bench/upload/generate.ts            # 1,000,000 players, 10,000,000 plays
 *   PLAYERS=100000 RANKED=100000 npx ts-node --transpile-only bench/upload/generate.ts
 *
 * The database (BENCH_DATABASE_URL) is dropped and recreated. run.ts uses these functions to grow
 * the same database from 100k plays to 10M plays in one run.
 */
import 'reflect-metadata';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions } from '../../src/database/database-options';
import { runMigrations } from '../../src/database/migrate';
import { atpTenThousandths } from '../../src/upload/rating';
import { assertBenchDatabase, BENCH_DATABASE_URL, databaseName, intFromEnv, seconds, withClient } from './common';

export const CHARTS = 2_000;
export const PLAYS_PER_PLAYER = 10;
/** payload.time of generated plays: 2026-01-01 plus one second per play. */
export const GENERATED_TIME_BASE = Date.UTC(2026, 0, 1);
const CHUNK = 50_000;

export async function recreateDatabase(url = BENCH_DATABASE_URL): Promise<void> {
  assertBenchDatabase(url);
  const name = databaseName(url);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  await withClient(admin.toString(), async (client) => {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await client.query(`CREATE DATABASE "${name}"`);
  });
  const dataSource = await new DataSource(buildDataSourceOptions({ url, embedded: false })).initialize();
  try {
    await runMigrations(dataSource, false);
  } finally {
    await dataSource.destroy();
  }
}

/** `count` players (uids 1..count) and CHARTS active charts with constants from 1 to 15. */
export async function loadPlayersAndCharts(client: Client, count: number): Promise<void> {
  await client.query(
    `INSERT INTO player (username, display_name, extra_options) SELECT 'bench_' || g, '', '{}'::jsonb FROM generate_series(1, $1) AS g`,
    [count],
  );
  await client.query(
    `INSERT INTO chart (level_id, name, difficulty_constant, version, active)
     SELECT g, 'Bench chart ' || g, round((1 + 14 * ((g * 7919) % 1000) / 1000.0)::numeric, 1)::float8, '1.0', true
       FROM generate_series(1, $1) AS g`,
    [CHARTS],
  );
}

/**
 * PLAYS_PER_PLAYER plays for each player of uids [from, to]: charts skewed towards low level ids
 * (popular charts have many players), 15 % at 100 %, the rest between 80 and 100, 10 % failed.
 */
export async function loadPlays(client: Client, from: number, to: number): Promise<void> {
  for (let start = from; start <= to; start += CHUNK) {
    const end = Math.min(to, start + CHUNK - 1);
    await client.query(
      `INSERT INTO play_record (uid, level_id, time_ms, player_timestamp_ms, acc, pass, full_combo, all_perfect, is_new_record,
         max_combo, is_rival, is_win, rival_uid, rival_acc, tap_perfect, tap_great, tap_miss, hold_perfect, hold_great, hold_miss,
         dodge_perfect, dodge_great, dodge_miss, look_perfect, look_great, look_miss, player_arena, server_id, server_name,
         server_country, server_session_id, player_session_id)
       SELECT p.uid, p.level_id, p.time_ms, p.time_ms + 250, p.acc, p.pass, p.acc = 100, p.acc = 100, false,
              300, false, false, 0, 0, 300, 5, 1, 40, 2, 0, 10, 1, 0, 8, 0, 0, 'bench', 1, 'bench', 'DE',
              '00000000-0000-4000-8000-000000000000', '00000000-0000-4000-8000-000000000000'
         FROM (SELECT u AS uid,
                      1 + floor($3 * power(random(), 2))::int AS level_id,
                      $4::bigint + ((u - 1) * $5 + k) * 1000 AS time_ms,
                      CASE WHEN random() < 0.15 THEN 100 ELSE round((80 + 20 * sqrt(random()))::numeric, 2)::float8 END AS acc,
                      random() > 0.1 AS pass
                 FROM generate_series($1::bigint, $2::bigint) AS u, generate_series(0, $5 - 1) AS k
                ORDER BY u, k) AS p
       ON CONFLICT (uid, level_id, time_ms) DO NOTHING`,
      [start, end, CHARTS, GENERATED_TIME_BASE, PLAYS_PER_PLAYER],
    );
  }
}

/** The rating of src/upload/rating.ts written in SQL with the same operations in the same order. */
const RATING_SQL = (c: string, acc: string) => `CASE
  WHEN ${acc} >= 100 THEN ${c} + 2
  WHEN ${acc} >= 98 THEN ${c} + 1 + (${acc} - 98) / 2
  WHEN ${acc} >= 95 THEN ${c} + (${acc} - 95) / 3
  ELSE greatest(0, ${c} - (95 - ${acc}) / 5) END`;

/** player_chart_best and player_rating of the players [from, to], from their records, as the service would hold them. */
export async function deriveRatings(client: Client, from: number, to: number): Promise<void> {
  for (let start = from; start <= to; start += CHUNK) {
    const end = Math.min(to, start + CHUNK - 1);
    await client.query(
      `INSERT INTO player_chart_best (uid, level_id, acc, first_time_ms, record_id, rating, version, updated_at)
       SELECT DISTINCT ON (r.uid, r.level_id) r.uid, r.level_id, r.acc, r.time_ms, r.id, ${RATING_SQL('c.difficulty_constant', 'r.acc')}, 1, now()
         FROM play_record r JOIN chart c ON c.level_id = r.level_id
        WHERE r.uid BETWEEN $1 AND $2 AND r.pass
        ORDER BY r.uid, r.level_id, r.acc DESC, r.time_ms, r.id`,
      [start, end],
    );
    const { rows } = await client.query<{ uid: string; ratings: number[] }>(
      'SELECT uid, array_agg(rating) AS ratings FROM player_chart_best WHERE uid BETWEEN $1 AND $2 GROUP BY uid ORDER BY uid',
      [start, end],
    );
    await client.query(
      `INSERT INTO player_rating (uid, atp, version, updated_at) SELECT u, a, 1, now() FROM unnest($1::bigint[], $2::numeric[]) AS t(u, a)`,
      [rows.map((row) => row.uid), rows.map((row) => (atpTenThousandths(row.ratings) / 10_000).toFixed(4))],
    );
  }
}

/** Statistics and visibility maps up to date, and the dirty pages written now rather than during a measurement. */
export async function analyze(client: Client): Promise<void> {
  await client.query('VACUUM ANALYZE play_record, player_chart_best, player_rating, player, chart');
  await client.query('CHECKPOINT');
}

/** Counts of the generated state. */
export async function counts(client: Client): Promise<{ players: number; plays: number; bests: number; ranked: number }> {
  const { rows } = await client.query<{ players: number; plays: number; bests: number; ranked: number }>(
    `SELECT (SELECT count(*) FROM player)::int AS players, (SELECT count(*) FROM play_record)::int AS plays,
            (SELECT count(*) FROM player_chart_best)::int AS bests, (SELECT count(*) FROM player_rating)::int AS ranked`,
  );
  return rows[0];
}

async function main(): Promise<void> {
  const players = intFromEnv('PLAYERS', 1_000_000);
  const ranked = intFromEnv('RANKED', players);
  const started = Date.now();
  await recreateDatabase();
  await withClient(BENCH_DATABASE_URL, async (client) => {
    await loadPlayersAndCharts(client, players);
    console.log(`players and charts: ${seconds(started)} s`);
    await loadPlays(client, 1, ranked);
    console.log(`plays: ${seconds(started)} s`);
    await deriveRatings(client, 1, ranked);
    console.log(`bests and ratings: ${seconds(started)} s`);
    await analyze(client);
    console.log(JSON.stringify(await counts(client)), `total ${seconds(started)} s`);
  });
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
