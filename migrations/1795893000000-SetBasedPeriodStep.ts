import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * rhythmc_count_period_play (src/ranking/periods/sql/rhythmc_count_period_play.sql) in one statement
 * for every open period instead of a plpgsql loop of a probe and two upserts per period: the period
 * bests the play improves are found by one join (read, not locked, where it improves none), written
 * by one INSERT … ON CONFLICT, and their periods' ATP by one INSERT … ON CONFLICT from the player's
 * other period bests and the play's rating (as the all-time step does). The same rows and values;
 * about 13 % less of the step's time with 4 open periods (docs/benchmarks.md "Upload with open board
 * periods"). The signature is unchanged, so the release before calls it as before: an expand step
 * with nothing to contract. `down` writes the loop back. Written by hand.
 */
export class SetBasedPeriodStep1795893000000 implements MigrationInterface {
  name = 'SetBasedPeriodStep1795893000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
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
`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
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
`);
  }
}
