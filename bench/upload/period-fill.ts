/**
 * Board periods of bench/upload/periods.ts at scale: fills the open periods' boards before the
 * measurement (PERIOD_FILL=1), so the 4 open periods of a big network already hold most of its
 * active players, as a month or a season would; and clears the periods a previous run left
 * (SKIP_GENERATE=1), which the period job would otherwise archive at the service's start and
 * which would keep the calendar periods of the day closed.
 */
import type { Client } from 'pg';
import type { PeriodKind } from '../../src/ranking/entities/board-period.entity';
import { secondsSince } from '../harness/env';

/**
 * Every n-th player (uid % n = 0) has its bests on a period's board: the whole network for the
 * season and the month, a half for the week, a tenth for the day (the day's players are among
 * the week's).
 */
export const FILL_EVERY: Record<PeriodKind, number> = { season: 1, month: 1, week: 2, day: 10 };

/** The periods' rows and their archives (nothing references board_period). */
const PERIOD_TABLES = [
  'period_chart_best',
  'period_rating',
  'period_atp_rank_block',
  'period_atp_uid_block',
  'period_chart_rank_block',
  'period_chart_uid_block',
  'board_period',
];

/** Empties every period table (a bench database only: the caller checked its name). */
export async function clearPeriods(client: Client): Promise<void> {
  await client.query(`TRUNCATE ${PERIOD_TABLES.join(', ')}`);
}

export interface FilledPeriod {
  id: string;
  kind: PeriodKind;
  every: number;
  bests: number;
  ratings: number;
}

export interface PeriodTableSize {
  table: string;
  rows: number;
  heap: string;
  indexes: string;
  total: string;
}

/**
 * Copies into each period of `ids` the all-time bests and ATP of every FILL_EVERY[kind]-th player
 * (one INSERT … SELECT per period and table, in primary-key order): a player's period ATP is then
 * its all-time ATP, the ATP of exactly the bests copied. Checks each count against its source,
 * then VACUUM ANALYZE and a checkpoint. The foreign-key checks of the copy (uid → player, one
 * queued trigger event and one probe per row) are skipped with session_replication_role = replica
 * for the copy's transaction only: the uids come from player_chart_best and player_rating, which
 * hold the same foreign key.
 */
export async function fillPeriods(
  client: Client,
  ids: string[],
  log: (line: string) => void,
): Promise<{ periods: FilledPeriod[]; sizes: PeriodTableSize[] }> {
  const { rows: periods } = await client.query<{ id: string; kind: PeriodKind }>(
    'SELECT id, kind FROM board_period WHERE id = ANY($1) ORDER BY id',
    [ids],
  );
  const filled: FilledPeriod[] = [];
  for (const period of periods) {
    const started = Date.now();
    const every = FILL_EVERY[period.kind];
    await client.query('BEGIN');
    try {
      await client.query('SET LOCAL session_replication_role = replica');
      await client.query("SET LOCAL work_mem = '256MB'");
      const bests = await client.query(
        `INSERT INTO period_chart_best (period_id, uid, level_id, acc, first_time_ms, record_id, rating)
         SELECT $1, b.uid, b.level_id, b.acc, b.first_time_ms, b.record_id, b.rating
           FROM player_chart_best b WHERE b.uid % $2 = 0 ORDER BY b.uid, b.level_id`,
        [period.id, every],
      );
      const ratings = await client.query(
        `INSERT INTO period_rating (period_id, uid, atp)
         SELECT $1, r.uid, r.atp FROM player_rating r WHERE r.uid % $2 = 0 ORDER BY r.uid`,
        [period.id, every],
      );
      const { rows } = await client.query<{
        bests: number;
        ratings: number;
        expectedBests: number;
        expectedRatings: number;
      }>(
        `SELECT (SELECT count(*) FROM period_chart_best WHERE period_id = $1)::int AS bests,
                (SELECT count(*) FROM period_rating WHERE period_id = $1)::int AS ratings,
                (SELECT count(*) FROM player_chart_best WHERE uid % $2 = 0)::int AS "expectedBests",
                (SELECT count(*) FROM player_rating WHERE uid % $2 = 0)::int AS "expectedRatings"`,
        [period.id, every],
      );
      const count = rows[0];
      if (
        count.bests !== count.expectedBests ||
        count.ratings !== count.expectedRatings ||
        count.bests !== bests.rowCount ||
        count.ratings !== ratings.rowCount
      )
        throw new Error(`period ${period.id} (${period.kind}): filled ${JSON.stringify(count)}`);
      await client.query('COMMIT');
      filled.push({ id: period.id, kind: period.kind, every, bests: count.bests, ratings: count.ratings });
      log(
        `filled ${period.kind} ${period.id} (players with uid % ${every} = 0): ${count.bests} bests, ${count.ratings} ratings, ${secondsSince(started)} s`,
      );
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    }
  }
  const role = await client.query<{ role: string }>("SELECT current_setting('session_replication_role') AS role");
  if (role.rows[0].role !== 'origin') throw new Error(`session_replication_role left at ${role.rows[0].role}`);
  const started = Date.now();
  await client.query('VACUUM ANALYZE period_chart_best, period_rating, board_period');
  await client.query('CHECKPOINT');
  log(`VACUUM ANALYZE and CHECKPOINT: ${secondsSince(started)} s`);
  const sizes = await client.query<PeriodTableSize>(
    `SELECT t AS table, (SELECT reltuples FROM pg_class WHERE oid = t::regclass)::bigint::int AS rows,
            pg_size_pretty(pg_relation_size(t::regclass)) AS heap, pg_size_pretty(pg_indexes_size(t::regclass)) AS indexes,
            pg_size_pretty(pg_total_relation_size(t::regclass)) AS total
       FROM unnest(ARRAY['period_chart_best', 'period_rating', 'player_chart_best', 'player_rating']) AS t`,
  );
  return { periods: filled, sizes: sizes.rows };
}
