import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { PERIOD_LOCK_KEY } from '../../ranking/rank-sql';
import { COUNTED_RECORD } from '../counted-record.rule';

/**
 * A player's bests on chart $2 in every open period, from the counted plays ($1 the uid) received
 * inside each (after a review changed which plays count): the best by the upload's order (higher
 * acc, then the earlier play: rhythmc_best_improves), removed where none is left. Answers the
 * periods whose row it wrote or removed. The instant of a stored play is its received_at.
 */
const RECOUNT_BESTS_SQL = `WITH open AS (
    SELECT p.id, p.starts_at, p.ends_at FROM board_period p WHERE p.closed_at IS NULL
  ), best AS (
    SELECT DISTINCT ON (o.id) o.id AS period_id, r.acc,
           floor(extract(epoch FROM r.received_at) * 1000)::bigint AS first_time_ms, r.id AS record_id,
           rhythmc_play_rating(c.difficulty_constant, r.acc) AS rating
      FROM open o
      JOIN play_record r ON r.uid = $1 AND r.level_id = $2 AND r.received_at >= o.starts_at AND r.received_at < o.ends_at
      JOIN chart c ON c.level_id = r.level_id
     WHERE ${COUNTED_RECORD('r', 'c')}
     ORDER BY o.id, r.acc DESC, r.received_at ASC, r.id ASC
  ), gone AS (
    DELETE FROM period_chart_best b USING open o
     WHERE b.period_id = o.id AND b.uid = $1 AND b.level_id = $2
       AND NOT EXISTS (SELECT 1 FROM best WHERE best.period_id = o.id)
    RETURNING b.period_id
  ), kept AS (
    INSERT INTO period_chart_best (period_id, uid, level_id, acc, first_time_ms, record_id, rating)
    SELECT period_id, $1, $2, acc, first_time_ms, record_id, rating FROM best
    ON CONFLICT (period_id, uid, level_id) DO UPDATE
      SET acc = EXCLUDED.acc, first_time_ms = EXCLUDED.first_time_ms, record_id = EXCLUDED.record_id, rating = EXCLUDED.rating
    RETURNING period_id
  )
SELECT period_id::text AS period_id FROM gone UNION SELECT period_id::text FROM kept`;

/** Player $1's ATP in periods $2 from its period bests (rhythmc_atp_e4, as the upload's period step), removed without any. */
const RECOUNT_ATP_SQL = `WITH atp AS (
    SELECT t.period_id,
           rhythmc_atp_e4(ARRAY(SELECT o.rating FROM period_chart_best o
             WHERE o.period_id = t.period_id AND o.uid = $1 ORDER BY o.rating DESC LIMIT 30)) AS e4,
           EXISTS (SELECT 1 FROM period_chart_best o WHERE o.period_id = t.period_id AND o.uid = $1) AS has
      FROM unnest($2::bigint[]) AS t(period_id)
  ), gone AS (
    DELETE FROM period_rating r USING atp a WHERE r.period_id = a.period_id AND r.uid = $1 AND NOT a.has
    RETURNING r.period_id
  )
INSERT INTO period_rating (period_id, uid, atp)
SELECT period_id, $1, e4 * 0.0001 FROM atp WHERE has
ON CONFLICT (period_id, uid) DO UPDATE SET atp = EXCLUDED.atp`;

/**
 * The period boards' side of a review (ranking/periods writes the boards; which plays count is the
 * upload's rule, COUNTED_RECORD, so the recount after a review lives here).
 */
@Injectable()
export class PeriodRecountRepository {
  /**
   * Counts a player's plays of one chart again in every open period (in the caller's transaction,
   * after a review approved or voided one of them): the period bests and the period ATP as the
   * counted plays now give them, in SQL. Holds the period lock shared, as an upload's period step
   * does, so a close waits for it and an archive never sees it half done.
   */
  async recountPlayer(uid: string, levelId: number, manager: EntityManager): Promise<void> {
    await manager.query('SELECT pg_advisory_xact_lock_shared($1)', [PERIOD_LOCK_KEY]);
    const touched = await manager.query<Array<{ period_id: string }>>(RECOUNT_BESTS_SQL, [uid, levelId]);
    if (touched.length === 0) return;
    await manager.query(RECOUNT_ATP_SQL, [uid, touched.map((row) => row.period_id)]);
  }
}
