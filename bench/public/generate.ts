/**
 * Data of the public API benchmark (bench/public/run.ts): the score-upload data at network scale
 * (bench/upload/generate.ts: 1,000,000 players, 2,000 charts, 10,000,000 plays, their bests and
 * ratings), plus what the public routes and the baltop comparison read: every 100th player banned,
 * a balance for every player, two unlocked titles each, and 1 % of the plays that are not a best
 * flagged by a score check (stored, not counted: the public reads must leave them out).
 *
 *   npm run bench:public:generate          # about 15-30 min on 2 shared cores
 *   PLAYERS=100000 npm run bench:public:generate
 *
 * The database (BENCH_DATABASE_URL, default rhythmc_bench_public) is dropped and recreated.
 */
import { withClient } from '../harness/database';
import { benchDatabaseUrl, intFromEnv, runMain, secondsSince } from '../harness/env';
import { analyze, counts, loadBalances, loadBans } from '../harness/generate';
import { GENERATED_TITLES, generateUploadData } from '../upload/generate';

export const PUBLIC_DATABASE_URL = benchDatabaseUrl('rhythmc_bench_public');
/** Every BAN_EVERY-th player is under a permanent ban. */
export const BAN_EVERY = 100;

export async function generatePublicData(url: string, players: number): Promise<void> {
  const started = Date.now();
  await generateUploadData(url, players, players);
  await withClient(url, async (client) => {
    await loadBans(client, players, BAN_EVERY);
    await loadBalances(client, players);
    // Two title unlocks per player (the profile lists them).
    await client.query(
      `INSERT INTO player_collection (uid, collection_key)
       SELECT g, 'bench:titles.t' || (g % $2::int) FROM generate_series(1, $1::bigint) AS g
       UNION ALL
       SELECT g, 'bench:titles.t' || ((g * 7 + 1) % $2::int) FROM generate_series(1, $1::bigint) AS g
        WHERE (g * 7 + 1) % $2::int <> g % $2::int`,
      [players, GENERATED_TITLES],
    );
    // Flagged plays that are nobody's best: the bests stay as the service would keep them.
    await client.query(
      `UPDATE play_record r SET flags = ARRAY['accuracy']
        WHERE r.id % 100 = 7 AND NOT EXISTS (SELECT 1 FROM player_chart_best b WHERE b.record_id = r.id)`,
    );
    console.log(`bans, balances, titles, flags: ${secondsSince(started)} s`);
    await analyze(client, [
      'play_record',
      'player_chart_best',
      'player_rating',
      'player',
      'player_ban',
      'player_balance',
      'player_collection',
    ]);
    console.log(`${JSON.stringify(await counts(client))}, total ${secondsSince(started)} s`);
  });
}

if (require.main === module) {
  runMain(() => generatePublicData(PUBLIC_DATABASE_URL, intFromEnv('PLAYERS', 1_000_000)));
}
