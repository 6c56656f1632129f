/**
 * Data of the leaderboard benchmark: PLAYERS (1,000,000) players, each with an ATP and a best on
 * chart 1 (the 1M-entry board), every tenth also on charts 2-4, and 1 % banned, loaded set-wise
 * (INSERT … SELECT generate_series) into BENCH_DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/rhythmc_bench_leaderboards), dropped and recreated first.
 * About a minute. ATP has 4 decimals over 0-17 (about six players share each value), 15 % of the
 * bests are 100 % with first-reached times in whole seconds of one day, so the boards' tie-breaks
 * (uid; first reached, then uid) do real work.
 *
 *   npm run bench:leaderboards -- --generate      # or GENERATE=1; run.ts generates when the database is empty
 */
import { recreateDatabase, withClient } from '../harness/database';
import { benchDatabaseUrl, databaseName, intFromEnv, runMain, secondsSince } from '../harness/env';
import { analyze, GENERATED_TIME_BASE, loadBans, loadCharts, loadPlayers } from '../harness/generate';

export const LEADERBOARDS_DATABASE_URL = benchDatabaseUrl('rhythmc_bench_leaderboards');
/** The chart every player has a best on. */
export const BIG_CHART = 1;
export const CHARTS = 4;

/** decisions.md §5's play rating in SQL (the values are shown, never ordered by). */
const RATING_SQL = (c: string, acc: string) => `CASE
  WHEN ${acc} >= 100 THEN ${c} + 2
  WHEN ${acc} >= 98 THEN ${c} + 1 + (${acc} - 98) / 2
  WHEN ${acc} >= 95 THEN ${c} + (${acc} - 95) / 3
  ELSE greatest(0, ${c} - (95 - ${acc}) / 5) END`;

export async function generateLeaderboardData(
  url: string,
  players: number,
  log: (line: string) => void = console.log,
): Promise<void> {
  const started = Date.now();
  await recreateDatabase(url);
  await withClient(url, async (client) => {
    await loadPlayers(client, players);
    await loadCharts(client, CHARTS);
    await loadBans(client, players, 100);
    log(`players, charts, bans: ${secondsSince(started)} s`);
    await client.query(
      `INSERT INTO player_rating (uid, atp, version, updated_at)
       SELECT g, round((random() * 17)::numeric, 4), 1, now() FROM generate_series(1, $1::bigint) AS g`,
      [players],
    );
    log(`ratings: ${secondsSince(started)} s`);
    for (let level = 1; level <= CHARTS; level++) {
      // Chart 1: every player; charts 2-4: every tenth.
      const step = level === BIG_CHART ? 1 : 10;
      await client.query(
        `INSERT INTO player_chart_best (uid, level_id, acc, first_time_ms, record_id, rating, version, updated_at)
         SELECT s.uid, $2::int, s.acc, s.time_ms, s.uid, ${RATING_SQL('c.difficulty_constant', 's.acc')}, 1, now()
           FROM (SELECT g AS uid,
                        CASE WHEN random() < 0.15 THEN 100 ELSE round((80 + 20 * sqrt(random()))::numeric, 2)::float8 END AS acc,
                        $4::bigint + floor(random() * 86400)::bigint * 1000 AS time_ms
                   FROM generate_series($2::bigint, $1::bigint, $3::bigint) AS g) AS s
           JOIN chart c ON c.level_id = $2`,
        [players, level, step, GENERATED_TIME_BASE],
      );
      log(`bests on chart ${level}: ${secondsSince(started)} s`);
    }
    await analyze(client, ['player', 'player_rating', 'player_chart_best', 'player_ban', 'chart']);
  });
  log(
    `Loaded ${players.toLocaleString('en')} players (1 % banned) into ${databaseName(url)} in ${secondsSince(started)} s`,
  );
}

if (require.main === module) {
  runMain(() => generateLeaderboardData(LEADERBOARDS_DATABASE_URL, intFromEnv('PLAYERS', 1_000_000)));
}
