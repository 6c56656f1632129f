/**
 * The data of bench/periods/close.ts, written directly in SQL on a database built by the service's
 * migrations: PLAYERS players (1 % banned, every 100th: bench/harness/generate.ts loadBans), CHARTS
 * charts and one title collection, and two open seasons A and B holding the same rows: period bests
 * on charts 1..5 (chart 1: every player; charts 2..5: about 30 %, 10 %, 3 % and 1 % of them) and
 * the period ATP of each player with bests (rhythmc_atp_e4 over its period ratings, the SQL rule
 * the upload's rhythmc_count_period_play uses). Accuracies are 100 for 15 % of the bests and two
 * decimals otherwise, first times on a 100,000-value grid: ties on ATP, accuracy and time occur,
 * so the boards' uid tie-breaks decide ranks. Both seasons have a close rule (the title to the top
 * GRANT_TOP of the ATP board).
 */
import type { Client } from 'pg';
import {
  analyze,
  generatedCollectionKey,
  loadBans,
  loadCharts,
  loadCollections,
  loadPlayers,
} from '../harness/generate';

/** Level ids of the period's charts and the share of the players with a best on each (per mille). */
export const PERIOD_CHARTS: ReadonlyArray<{ levelId: number; perMille: number }> = [
  { levelId: 1, perMille: 1000 },
  { levelId: 2, perMille: 300 },
  { levelId: 3, perMille: 100 },
  { levelId: 4, perMille: 30 },
  { levelId: 5, perMille: 10 },
];

export const GRANT_TOP = 100;
export const GRANT_COLLECTION = generatedCollectionKey(0, 1);

export interface GeneratedPeriods {
  /** The season closed by the admin route (one transaction). */
  a: string;
  /** The same rows, closed by the period job's path (close, then freeze), each phase timed. */
  b: string;
  bests: number;
  ranked: number;
}

const CHUNK = 250_000;

export async function generatePeriods(
  client: Client,
  players: number,
  log: (line: string) => void,
): Promise<GeneratedPeriods> {
  await loadPlayers(client, players);
  await loadBans(client, players, 100);
  await loadCharts(client, 10);
  await loadCollections(client, 1, 0);
  log(`players ${players}, ${Math.floor(players / 100)} banned`);
  const seasons = await client.query<{ id: string }>(
    `INSERT INTO board_period (kind, slug, name, starts_at, ends_at, grant_collection, grant_top)
     SELECT 'season', s.slug, s.name, now() - interval '1 day', now() + interval '30 days', $1, $2
       FROM (VALUES ('bench-close-a', 'Bench close A'), ('bench-close-b', 'Bench close B')) AS s(slug, name)
     RETURNING id`,
    [GRANT_COLLECTION, GRANT_TOP],
  );
  const [a, b] = seasons.rows.map((row) => row.id);
  // Period A's bests, in primary-key order (period, uid, level) so the indexes are appended to.
  for (let start = 1; start <= players; start += CHUNK) {
    const end = Math.min(players, start + CHUNK - 1);
    await client.query(
      `INSERT INTO period_chart_best (period_id, uid, level_id, acc, first_time_ms, record_id, rating)
       SELECT $1, x.uid, x.level_id, x.acc, x.t, x.uid * 16 + x.level_id, rhythmc_play_rating(c.difficulty_constant, x.acc)
         FROM (SELECT g AS uid, l.level_id,
                      CASE WHEN random() < 0.15 THEN 100 ELSE round((80 + 20 * sqrt(random()))::numeric, 2)::float8 END AS acc,
                      1767225600000 + floor(random() * 100000)::bigint * 1000 AS t
                 FROM generate_series($2::bigint, $3::bigint) AS g,
                      unnest($4::int[], $5::int[]) AS l(level_id, per_mille)
                WHERE (g * 7919 + l.level_id * 104729) % 1000 < l.per_mille
                ORDER BY g, l.level_id) AS x
         JOIN chart c ON c.level_id = x.level_id
        ORDER BY x.uid, x.level_id`,
      [a, start, end, PERIOD_CHARTS.map((c) => c.levelId), PERIOD_CHARTS.map((c) => c.perMille)],
    );
  }
  await client.query(
    `INSERT INTO period_rating (period_id, uid, atp)
     SELECT $1, b.uid, rhythmc_atp_e4(array_agg(b.rating ORDER BY b.rating DESC)) * 0.0001
       FROM period_chart_best b WHERE b.period_id = $1 GROUP BY b.uid ORDER BY b.uid`,
    [a],
  );
  // Period B: the same rows.
  await client.query(
    `INSERT INTO period_chart_best (period_id, uid, level_id, acc, first_time_ms, record_id, rating)
     SELECT $2, uid, level_id, acc, first_time_ms, record_id, rating FROM period_chart_best WHERE period_id = $1 ORDER BY uid, level_id`,
    [a, b],
  );
  await client.query(
    `INSERT INTO period_rating (period_id, uid, atp) SELECT $2, uid, atp FROM period_rating WHERE period_id = $1 ORDER BY uid`,
    [a, b],
  );
  await analyze(client, [
    'player',
    'player_ban',
    'chart',
    'collection',
    'board_period',
    'period_chart_best',
    'period_rating',
  ]);
  const { rows } = await client.query<{ bests: number; ranked: number }>(
    `SELECT (SELECT count(*) FROM period_chart_best WHERE period_id = $1)::int AS bests,
            (SELECT count(*) FROM period_rating WHERE period_id = $1)::int AS ranked`,
    [a],
  );
  return { a, b, ...rows[0] };
}
