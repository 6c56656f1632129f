-- Where the upload's period step spends its time (issue #44: upload with 4 open periods >= 0.9 x).
-- psql only, on the data of `npm run bench:upload:periods` (rhythmc_bench_upload, after a run with
-- PERIOD_FILL=1); everything happens in one transaction that is rolled back.
--
--   psql -X -q -h 127.0.0.1 -U postgres -d rhythmc_bench_upload -v n=3000 -f bench/periods/period-step.sql
--
-- Opens the run's four periods, then times n calls (random player, random chart, acc 90-100, one
-- instant; each pass its own plays, so nearly every call writes a new best, as in the HTTP bench) of:
-- the service's rhythmc_count_period_play (one statement for every open period, since migration
-- SetBasedPeriodStep); the plpgsql loop it replaced (a probe and two upserts per period); the
-- service's statement with a constant ATP (no top-30 read, no rhythmc_atp_e4); and with no
-- period_rating write at all. Each is run twice, in turn. The differences say what the loop, the
-- chart bests, the ATP and the rating row cost. Then the service's statement without the period
-- tables' foreign keys, and without them and the top-30 index (below). The copies are pg_temp
-- functions (gone with the session), not proposals for the schema.
\set ON_ERROR_STOP 1
BEGIN;
UPDATE board_period SET closed_at = NULL, archived_at = NULL, archived_in_blocks = false;
CREATE TEMP TABLE bench_plays AS
  SELECT g AS i,
         (SELECT min(uid) FROM player_rating) + (random() * ((SELECT count(*) FROM player_rating) - 1))::bigint AS uid,
         (SELECT min(level_id) FROM chart) + (random() * ((SELECT count(*) FROM chart) - 1))::int AS level_id,
         90 + random() * 10 AS acc, 1800000000000 + g AS time_ms, 1 + random() * 12 AS c
    FROM generate_series(1, 14 * :n) g;

CREATE FUNCTION pg_temp.loop_step(p_uid bigint, p_level_id integer, p_acc double precision, p_time_ms bigint,
  p_record_id bigint, p_constant double precision, p_at timestamptz)
 RETURNS void LANGUAGE plpgsql AS $function$
DECLARE
  v_period bigint;
  v_best record;
  v_rating float8 := rhythmc_play_rating(p_constant, p_acc);
BEGIN
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
END $function$;

CREATE FUNCTION pg_temp.set_based(p_uid bigint, p_level_id integer, p_acc double precision, p_time_ms bigint,
  p_record_id bigint, p_constant double precision, p_at timestamptz, p_atp boolean, p_rating_row boolean)
 RETURNS void LANGUAGE plpgsql AS $function$
DECLARE
  v_rating float8 := rhythmc_play_rating(p_constant, p_acc);
BEGIN
  PERFORM pg_advisory_xact_lock_shared(727044);
  -- The service's statement; a data-modifying WITH always runs whole, so without the rating row
  -- the bests are still written.
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
    RETURNING b.period_id)
  INSERT INTO period_rating (period_id, uid, atp)
  SELECT w.period_id, p_uid,
         CASE WHEN p_atp THEN rhythmc_atp_e4(ARRAY(SELECT o.rating FROM period_chart_best o
                WHERE o.period_id = w.period_id AND o.uid = p_uid AND o.level_id <> p_level_id
                ORDER BY o.rating DESC LIMIT 30) || v_rating) * 0.0001
              ELSE 1 END
    FROM written w
   WHERE p_rating_row
  ON CONFLICT (period_id, uid) DO UPDATE SET atp = EXCLUDED.atp;
END $function$;

CREATE TEMP TABLE bench_fks AS
  SELECT conrelid::regclass::text AS tbl, conname, pg_get_constraintdef(oid) AS def FROM pg_constraint
   WHERE contype = 'f' AND conrelid IN ('period_chart_best'::regclass, 'period_rating'::regclass);
CREATE TEMP TABLE bench_top AS
  SELECT pg_get_indexdef('"IDX_period_chart_best_top"'::regclass) AS def;
DO $$
DECLARE
  v_variant text;
  v_play record;
  v_started timestamptz;
  v_count integer := (SELECT count(*) FROM bench_plays) / 14;
  v_pass integer := 0;
  v_fk record;
  v_has_fks boolean := true;
  v_has_top boolean := true;
BEGIN
  FOR v_round IN 1..2 LOOP
    FOREACH v_variant IN ARRAY ARRAY['service', 'the loop before', 'service, constant ATP', 'service, no rating row'] LOOP
      v_started := clock_timestamp();
      FOR v_play IN SELECT * FROM bench_plays WHERE i > v_pass * v_count AND i <= (v_pass + 1) * v_count ORDER BY i LOOP
        IF v_variant = 'service' THEN
          PERFORM rhythmc_count_period_play(v_play.uid, v_play.level_id, v_play.acc, v_play.time_ms, 0, v_play.c, now());
        ELSIF v_variant = 'the loop before' THEN
          PERFORM pg_temp.loop_step(v_play.uid, v_play.level_id, v_play.acc, v_play.time_ms, 0, v_play.c, now());
        ELSE
          PERFORM pg_temp.set_based(v_play.uid, v_play.level_id, v_play.acc, v_play.time_ms, 0, v_play.c, now(),
            false, v_variant <> 'service, no rating row');
        END IF;
      END LOOP;
      RAISE NOTICE 'round %, %: % us a call (% calls, % open periods)', v_round, v_variant,
        round(extract(epoch FROM clock_timestamp() - v_started) * 1e6 / v_count),
        v_count, (SELECT count(*) FROM board_period WHERE closed_at IS NULL AND starts_at <= now() AND ends_at > now());
      v_pass := v_pass + 1;
    END LOOP;
  END LOOP;
  -- What the period tables' foreign keys (to player, for the erasure's cascade) and the top-30 index
  -- (period_id, uid, rating: the ATP's read) cost the service's statement: dropped and put back
  -- between variants (the keys NOT VALID: new rows are still checked), in turn, passes 8 to 13.
  FOR v_round IN 1..2 LOOP
    FOREACH v_variant IN ARRAY ARRAY['service', 'service, no foreign keys', 'service, no foreign keys, no top-30 index'] LOOP
      IF (v_variant = 'service') <> v_has_fks THEN
        FOR v_fk IN SELECT * FROM bench_fks LOOP
          IF v_has_fks THEN EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', v_fk.tbl, v_fk.conname);
          ELSE EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I %s NOT VALID', v_fk.tbl, v_fk.conname, v_fk.def);
          END IF;
        END LOOP;
        v_has_fks := NOT v_has_fks;
      END IF;
      IF (v_variant <> 'service, no foreign keys, no top-30 index') <> v_has_top THEN
        IF v_has_top THEN DROP INDEX "IDX_period_chart_best_top"; ELSE EXECUTE (SELECT def FROM bench_top); END IF;
        v_has_top := NOT v_has_top;
      END IF;
      v_started := clock_timestamp();
      FOR v_play IN SELECT * FROM bench_plays WHERE i > v_pass * v_count AND i <= (v_pass + 1) * v_count ORDER BY i LOOP
        PERFORM rhythmc_count_period_play(v_play.uid, v_play.level_id, v_play.acc, v_play.time_ms, 0, v_play.c, now());
      END LOOP;
      RAISE NOTICE 'round %, %: % us a call (% calls)', v_round, v_variant,
        round(extract(epoch FROM clock_timestamp() - v_started) * 1e6 / v_count), v_count;
      v_pass := v_pass + 1;
    END LOOP;
  END LOOP;
END $$;
ROLLBACK;
