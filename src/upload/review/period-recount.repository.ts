import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { PERIOD_LOCK_KEY } from '../../ranking/rank-sql';
import { COUNTED_RECORD } from '../counted-record.rule';

/**
 * The bests of players $1 (uids) in every open period, on chart $2 or, with $2 null, on every
 * chart, from the counted plays received inside each period: the best by the upload's order (higher
 * acc, then the earlier play: rhythmc_best_improves), removed where none is left, a row left alone
 * where it is already right. Answers the (period, player) pairs whose rows it wrote or removed.
 * The instant of a stored play is its received_at.
 */
const RECOUNT_BESTS_SQL = `WITH open AS (
    SELECT p.id, p.starts_at, p.ends_at FROM board_period p WHERE p.closed_at IS NULL
  ), best AS (
    SELECT DISTINCT ON (o.id, r.uid, r.level_id) o.id AS period_id, r.uid, r.level_id, r.acc,
           floor(extract(epoch FROM r.received_at) * 1000)::bigint AS first_time_ms, r.id AS record_id,
           rhythmc_play_rating(c.difficulty_constant, r.acc) AS rating
      FROM open o
      JOIN play_record r ON r.uid = ANY($1::bigint[]) AND ($2::int IS NULL OR r.level_id = $2::int)
                        AND r.received_at >= o.starts_at AND r.received_at < o.ends_at
      JOIN chart c ON c.level_id = r.level_id
     WHERE ${COUNTED_RECORD('r', 'c')}
     ORDER BY o.id, r.uid, r.level_id, r.acc DESC, r.received_at ASC, r.id ASC
  ), gone AS (
    DELETE FROM period_chart_best b USING open o
     WHERE b.period_id = o.id AND b.uid = ANY($1::bigint[]) AND ($2::int IS NULL OR b.level_id = $2::int)
       AND NOT EXISTS (SELECT 1 FROM best WHERE best.period_id = o.id AND best.uid = b.uid AND best.level_id = b.level_id)
    RETURNING b.period_id, b.uid
  ), kept AS (
    INSERT INTO period_chart_best AS b (period_id, uid, level_id, acc, first_time_ms, record_id, rating)
    SELECT period_id, uid, level_id, acc, first_time_ms, record_id, rating FROM best
    ON CONFLICT (period_id, uid, level_id) DO UPDATE
      SET acc = EXCLUDED.acc, first_time_ms = EXCLUDED.first_time_ms, record_id = EXCLUDED.record_id, rating = EXCLUDED.rating
      WHERE (b.acc, b.first_time_ms, b.record_id, b.rating)
            IS DISTINCT FROM (EXCLUDED.acc, EXCLUDED.first_time_ms, EXCLUDED.record_id, EXCLUDED.rating)
    RETURNING b.period_id, b.uid
  )
SELECT period_id::text AS period_id, uid::text AS uid FROM gone
 UNION SELECT period_id::text, uid::text FROM kept`;

/** The ATP of the (period $1[i], player $2[i]) pairs from their period bests (rhythmc_atp_e4, as the upload's period step), removed without any. */
const RECOUNT_ATP_SQL = `WITH atp AS (
    SELECT t.period_id, t.uid,
           rhythmc_atp_e4(ARRAY(SELECT o.rating FROM period_chart_best o
             WHERE o.period_id = t.period_id AND o.uid = t.uid ORDER BY o.rating DESC LIMIT 30)) AS e4,
           EXISTS (SELECT 1 FROM period_chart_best o WHERE o.period_id = t.period_id AND o.uid = t.uid) AS has
      FROM unnest($1::bigint[], $2::bigint[]) AS t(period_id, uid)
  ), gone AS (
    DELETE FROM period_rating r USING atp a WHERE r.period_id = a.period_id AND r.uid = a.uid AND NOT a.has
    RETURNING r.period_id
  )
INSERT INTO period_rating (period_id, uid, atp)
SELECT period_id, uid, e4 * 0.0001 FROM atp WHERE has
ON CONFLICT (period_id, uid) DO UPDATE SET atp = EXCLUDED.atp`;

/**
 * The period boards' side of a review (ranking/periods writes the boards; which plays count is the
 * upload's rule, COUNTED_RECORD, so the recount after a review lives here).
 */
@Injectable()
export class PeriodRecountRepository {
  /**
   * Counts players' plays again in every open period (in the caller's transaction, the players'
   * rating rows locked): of one chart after a review approved or voided a play of it, or of every
   * chart (`levelId` null) in a recompute of all ratings (a chart defined or its constant changed).
   * The period bests and the period ATP as the counted plays now give them, in SQL. Holds the period
   * lock shared, as an upload's period step does, so a close waits for it and an archive never sees
   * it half done.
   */
  async recount(uids: string[], levelId: number | null, manager: EntityManager): Promise<void> {
    await manager.query('SELECT pg_advisory_xact_lock_shared($1)', [PERIOD_LOCK_KEY]);
    const touched = await manager.query<Array<{ period_id: string; uid: string }>>(RECOUNT_BESTS_SQL, [uids, levelId]);
    if (touched.length === 0) return;
    await manager.query(RECOUNT_ATP_SQL, [touched.map((row) => row.period_id), touched.map((row) => row.uid)]);
  }
}
