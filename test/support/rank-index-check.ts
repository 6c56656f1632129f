import type { Type } from '@nestjs/common';
import { RankIndex } from '../../src/ranking/rank-index/rank-index';
import type { TestApp } from './test-app';

const rankIndexOf = (app: TestApp) => app.get(RankIndex as unknown as Type<RankIndex>);

/**
 * Every player's site position and every best's chart position, from the index and from SQL
 * (entries ahead in each order; no bans here), plus the index's counts against the tables.
 */
export async function indexAgainstSql(app: TestApp): Promise<{ index: unknown[]; sql: unknown[] }> {
  const rows = await app.sql<{
    uid: string;
    atp_e4: string;
    site_ahead: number;
    level_id: number;
    acc: number;
    first_time_ms: string;
    track_ahead: number;
  }>(
    `SELECT r.uid, (r.atp * 10000)::bigint AS atp_e4, r.site_ahead, c.level_id, c.acc, c.first_time_ms, c.track_ahead
       FROM (SELECT uid, atp, (row_number() OVER (ORDER BY atp DESC, uid) - 1)::int AS site_ahead FROM player_rating) r
       JOIN (SELECT uid, level_id, acc, first_time_ms,
                    (row_number() OVER (PARTITION BY level_id ORDER BY acc DESC, first_time_ms, uid) - 1)::int AS track_ahead
               FROM player_chart_best) c ON c.uid = r.uid
      ORDER BY r.uid, c.level_id`,
  );
  const index = rankIndexOf(app);
  const fromIndex: unknown[] = [];
  const fromSql: unknown[] = [];
  for (const row of rows) {
    const positions = await index.positions(
      {
        uid: row.uid,
        version: 0,
        atpE4: Number(row.atp_e4),
        levelId: row.level_id,
        best: { acc: row.acc, firstTimeMs: Number(row.first_time_ms), recordId: '0', version: 0 },
      },
      null,
    );
    fromIndex.push([row.uid, row.level_id, positions]);
    fromSql.push([row.uid, row.level_id, { siteAhead: row.site_ahead, trackAhead: row.track_ahead }]);
  }
  const [counts] = await app.sql<{ ratings: number; bests: number }>(
    'SELECT (SELECT count(*) FROM player_rating)::int AS ratings, (SELECT count(*) FROM player_chart_best)::int AS bests',
  );
  fromIndex.push(await index.stats());
  // The Redis index does not count chart entries (it would need a key scan).
  fromSql.push({
    ready: true,
    rankedPlayers: counts.ratings,
    chartEntries: index.kind === 'redis' ? null : counts.bests,
  });
  return { index: fromIndex, sql: fromSql };
}

/** The samples of rhythmc_rank_index_mismatches_total, as `reason count` lines. */
export async function rankIndexMismatches(app: TestApp): Promise<string[]> {
  const metrics = (await app.http.get('/metrics', { token: null })).text;
  return [...metrics.matchAll(/^rhythmc_rank_index_mismatches_total\{reason="(\w+)"\} (\d+)$/gm)].map(
    ([, reason, count]) => `${reason} ${count}`,
  );
}
