/**
 * Loads PLAYERS (default 1,000,000) players with random balances into the benchmark database
 * (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/rhythmc_bench_economy): creates
 * it if missing, applies the migrations, replaces every player, and bans 1 % of them so the
 * ranking's ban filter does real work. Set-based SQL (bench/harness/generate.ts), so a million
 * rows take seconds. RESET=1 drops and recreates the database first (after the migrations changed).
 *
 *   npm run bench:economy:generate
 */
import { ensureDatabase, withClient } from '../harness/database';
import { benchDatabaseUrl, databaseName, intFromEnv, runMain, secondsSince } from '../harness/env';
import { analyze, loadBalances, loadBans, loadPlayers } from '../harness/generate';

export const ECONOMY_DATABASE_URL = benchDatabaseUrl('rhythmc_bench_economy');

export async function generate(url: string, players: number, reset: boolean): Promise<void> {
  await ensureDatabase(url, reset);
  const started = Date.now();
  await withClient(url, async (client) => {
    try {
      await client.query('BEGIN');
      await client.query('TRUNCATE player RESTART IDENTITY CASCADE');
      await loadPlayers(client, players);
      await loadBalances(client, players);
      await loadBans(client, players, 100);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
    // Statistics, and a visibility map so the ranking index is scanned index-only.
    await analyze(client, ['player', 'player_balance', 'player_ban']);
  });
  console.log(
    `Loaded ${players.toLocaleString('en')} players with balances (1 % banned) in ${secondsSince(started)} s into ${databaseName(url)}`,
  );
}

if (require.main === module) {
  runMain(() => generate(ECONOMY_DATABASE_URL, intFromEnv('PLAYERS', 1_000_000), process.env.RESET === '1'));
}
