-- A counted play into every period open at p_at, under the shared period lock (advisory 727044,
-- PERIOD_LOCK_KEY of period.repository.ts). Called by rhythmc_upload_record and the transactional upload.
CREATE OR REPLACE FUNCTION public.rhythmc_count_period_play(p_uid bigint, p_level_id integer, p_acc double precision, p_time_ms bigint, p_record_id bigint, p_constant double precision, p_at timestamp with time zone)
 RETURNS void
 LANGUAGE plpgsql
 SET lock_timeout TO '5s'
AS $function$
DECLARE
  v_period bigint;
  v_best record;
  v_rating float8 := rhythmc_play_rating(p_constant, p_acc);
BEGIN
  -- Held to the commit; a close takes it exclusively, so no play lands in a period after its close.
  PERFORM pg_advisory_xact_lock_shared(727044);
  FOR v_period IN SELECT p.id FROM board_period p
      WHERE p.closed_at IS NULL AND p.starts_at <= p_at AND p.ends_at > p_at LOOP
    SELECT b.acc, b.first_time_ms INTO v_best FROM period_chart_best b
      WHERE b.period_id = v_period AND b.uid = p_uid AND b.level_id = p_level_id;
    IF FOUND AND NOT rhythmc_best_improves(p_acc, p_time_ms, v_best.acc, v_best.first_time_ms) THEN CONTINUE; END IF;
    INSERT INTO period_chart_best (period_id, uid, level_id, acc, first_time_ms, record_id, rating)
    VALUES (v_period, p_uid, p_level_id, p_acc, p_time_ms, p_record_id, v_rating)
    ON CONFLICT (period_id, uid, level_id) DO UPDATE
      SET acc = EXCLUDED.acc, first_time_ms = EXCLUDED.first_time_ms, record_id = EXCLUDED.record_id, rating = EXCLUDED.rating;
    INSERT INTO period_rating (period_id, uid, atp)
    VALUES (v_period, p_uid, rhythmc_atp_e4(ARRAY(SELECT o.rating FROM period_chart_best o
      WHERE o.period_id = v_period AND o.uid = p_uid ORDER BY o.rating DESC LIMIT 30)) * 0.0001)
    ON CONFLICT (period_id, uid) DO UPDATE SET atp = EXCLUDED.atp;
  END LOOP;
END $function$
