/**
 * Loads PLAYERS (default 1,000,000) players with random balances into the benchmark database
 * (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/rhythmc_bench_economy): creates
 * it if missing, applies the migrations, replaces every player, and bans 1 % of them so the
 * ranking's ban filter does real work. Set-based SQL (generate_series), so a million rows take
 * seconds. RESET=1 drops and recreates the database first (after the migrations changed).
 *
 *   npm run bench:economy:generate
 */
import 'reflect-metadata';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions } from '../../src/database/database-options';
import { runMigrations } from '../../src/database/migrate';
import { assertBenchDatabase, BENCH_DATABASE_URL, databaseName, intFromEnv, withDatabase } from './common';

export async function generate(url: string, players: number, reset: boolean): Promise<void> {
  assertBenchDatabase(url);
  const admin = new Client({ connectionString: withDatabase(url, 'postgres') });
  await admin.connect();
  try {
    const name = databaseName(url);
    if (reset) await admin.query(`DROP DATABASE IF EXISTS "${name.replace(/"/g, '""')}" WITH (FORCE)`);
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
  } finally {
    await admin.end();
  }

  const dataSource = await new DataSource(buildDataSourceOptions({ url, embedded: false })).initialize();
  try {
    await runMigrations(dataSource, false);
  } finally {
    await dataSource.destroy();
  }

  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const started = Date.now();
    await client.query('BEGIN');
    await client.query('TRUNCATE player RESTART IDENTITY CASCADE');
    // Every fourth player has a display name; the others fall back to their username.
    await client.query(
      `INSERT INTO player (uid, username, display_name)
       SELECT g, 'player_' || g, CASE WHEN g % 4 = 0 THEN 'Player ' || g ELSE '' END
         FROM generate_series(1, $1::bigint) AS g`,
      [players],
    );
    await client.query(`SELECT setval(pg_get_serial_sequence('player', 'uid'), GREATEST($1::bigint, 1))`, [players]);
    // Balances up to 10^9 Wh: at a million players there are many equal values, so the uid tie-break matters.
    await client.query(
      `INSERT INTO player_balance (uid, watt_hour, updated_at)
       SELECT g, floor(random() * 1e9)::bigint, now() FROM generate_series(1, $1::bigint) AS g`,
      [players],
    );
    await client.query(`INSERT INTO player_ban (uid, reason) SELECT g, 'bench' FROM generate_series(100, $1::bigint, 100) AS g`, [players]);
    await client.query('COMMIT');
    // What autovacuum would have done on a live database: statistics, and a visibility map so
    // the ranking index is scanned index-only.
    await client.query('VACUUM ANALYZE player');
    await client.query('VACUUM ANALYZE player_balance');
    await client.query('VACUUM ANALYZE player_ban');
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    process.stdout.write(`Loaded ${players.toLocaleString('en')} players with balances (1 % banned) in ${seconds} s into ${databaseName(url)}\n`);
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    await client.end();
  }
}

if (require.main === module) {
  generate(BENCH_DATABASE_URL, intFromEnv('PLAYERS', 1_000_000), process.env.RESET === '1').catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
