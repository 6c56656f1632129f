-- A counted play into every period open at p_at, under the shared period lock (advisory 727044,
-- PERIOD_LOCK_KEY of period.repository.ts). Called by rhythmc_upload_record and the transactional upload.
CREATE OR REPLACE FUNCTION public.rhythmc_count_period_play(p_uid bigint, p_level_id integer, p_acc double precision, p_time_ms bigint, p_record_id bigint, p_constant double precision, p_at timestamp with time zone)
 RETURNS void
 LANGUAGE plpgsql
 SET lock_timeout TO '5s'
AS $function$
DECLARE
  v_rating float8 := rhythmc_play_rating(p_constant, p_acc);
BEGIN
  -- Held to the commit; a close takes it exclusively, so no play lands in a period after its close.
  PERFORM pg_advisory_xact_lock_shared(727044);
  -- One statement for every period open at p_at: the period bests this play improves (read, not
  -- locked, where it improves none) are written, then the ATP of each of those periods, from the
  -- player's other bests there and this play's rating (the statement's snapshot holds this chart's
  -- old best, left out).
  WITH improved AS (
    SELECT p.id FROM board_period p
      LEFT JOIN period_chart_best b ON b.period_id = p.id AND b.uid = p_uid AND b.level_id = p_level_id
     WHERE p.closed_at IS NULL AND p.starts_at <= p_at AND p.ends_at > p_at
       AND rhythmc_best_improves(p_acc, p_time_ms, b.acc, b.first_time_ms)
  ), written AS (
    INSERT INTO period_chart_best AS b (period_id, uid, level_id, acc, first_time_ms, record_id, rating)
    SELECT i.id, p_uid, p_level_id, p_acc, p_time_ms, p_record_id, v_rating FROM improved i
    ON CONFLICT (period_id, uid, level_id) DO UPDATE
      SET acc = EXCLUDED.acc, first_time_ms = EXCLUDED.first_time_ms, record_id = EXCLUDED.record_id, rating = EXCLUDED.rating
      WHERE rhythmc_best_improves(EXCLUDED.acc, EXCLUDED.first_time_ms, b.acc, b.first_time_ms)
    RETURNING b.period_id
  )
  INSERT INTO period_rating (period_id, uid, atp)
  SELECT w.period_id, p_uid, rhythmc_atp_e4(ARRAY(SELECT o.rating FROM period_chart_best o
      WHERE o.period_id = w.period_id AND o.uid = p_uid AND o.level_id <> p_level_id
      ORDER BY o.rating DESC LIMIT 30) || v_rating) * 0.0001
    FROM written w
  ON CONFLICT (period_id, uid) DO UPDATE SET atp = EXCLUDED.atp;
END $function$
