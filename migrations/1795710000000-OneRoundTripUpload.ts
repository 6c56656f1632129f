import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The score upload in one round trip (issue #16, docs/decisions.md "Score upload in one round
 * trip"). rhythmc_upload_play runs what the upload's transaction ran (session check, record
 * insert, the rating-row lock, best and ATP) as one statement, with the same locks in the same
 * order; a PL/pgSQL function takes a new snapshot for each of its statements (READ COMMITTED), so
 * what it reads after the lock is the latest committed state, as the transaction's second read was.
 * The rarer cases answer a status with nothing written, and the service takes its transactional
 * path for them: no accepted session ('session': the 401 is worded in TypeScript), no chart row
 * ('chart': a placeholder is created), a note count the record fails ('notes': the flag is added),
 * the record already stored ('duplicate': answered from the stored record).
 *
 * The rules they carry, and their TypeScript twins:
 *   - rhythmc_upload_session_accepted: UploadSessionRule.check (src/auth/upload-session.rule.ts;
 *     the upload statement of the transactional path calls this function too, and
 *     test/e2e/upload-session-rule.e2e-spec.ts checks the two agree row by row);
 *   - rhythmc_play_rating, rhythmc_rating_e4, rhythmc_atp_e4: playRating, toTenThousandths,
 *     atpTenThousandths (src/upload/rating.ts; test/e2e/rating-sql.e2e-spec.ts compares them on
 *     random and adversarial values). The arithmetic is float8 in the same order as in
 *     TypeScript (IEEE 754 on both sides), and the rounding reads the exact decimal value of the
 *     double from its bits: a float8 → numeric cast keeps 15 digits only;
 *   - counted: COUNTED_RECORD / recordCounts (src/upload/counted-record.ts) for a new record
 *     (neither approved nor voided);
 *   - the active ban: activeBan() in src/player/player.repository.ts.
 * Written by hand (the TypeORM CLI does not generate functions); schema-drift ignores functions.
 * Runs on PostgreSQL and on the embedded PGlite (PL/pgSQL is built in; float8 is IEEE there too).
 */
export class OneRoundTripUpload1795710000000 implements MigrationInterface {
  name = 'OneRoundTripUpload1795710000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    // SQL, not PL/pgSQL: the planner inlines it into the statements that call it.
    await queryRunner.query(`
CREATE FUNCTION rhythmc_upload_session_accepted(
  s_uid bigint, s_logged_out_at timestamptz, s_server_session_id uuid, s_token_expires_at timestamptz,
  s_renewed_at timestamptz, p_uid bigint, p_server_session_id uuid, p_now timestamptz, p_live_since timestamptz
) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
  SELECT s_uid = p_uid AND s_logged_out_at IS NULL AND s_server_session_id = p_server_session_id
     AND (s_token_expires_at > p_now OR s_renewed_at > p_live_since)
$$`);

    await queryRunner.query(`
CREATE FUNCTION rhythmc_play_rating(p_constant float8, p_acc float8) RETURNS float8 LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN p_acc >= 100 THEN p_constant + 2::float8
    WHEN p_acc >= 98 THEN p_constant + 1::float8 + (p_acc - 98::float8) / 2::float8
    WHEN p_acc >= 95 THEN p_constant + (p_acc - 95::float8) / 3::float8
    ELSE greatest(0::float8, p_constant - (95::float8 - p_acc) / 5::float8)
  END
$$`);

    await queryRunner.query(`
CREATE FUNCTION rhythmc_rating_e4(p_value float8) RETURNS bigint LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
  v_scaled float8 := p_value * 10000::float8;
  v_bits bigint;
  v_exponent integer;
  v_exact numeric;
  v_probe numeric;
  v_digits integer := 0;
BEGIN
  IF v_scaled = 0 THEN RETURN 0; END IF;
  IF v_scaled < 0 OR v_scaled = 'Infinity'::float8 OR v_scaled = 'NaN'::float8 THEN
    RAISE EXCEPTION 'rhythmc_rating_e4: % is not a rating', p_value;
  END IF;
  -- The exact value of the double: mantissa × 2^(exponent − 1075).
  v_bits := ('x' || encode(float8send(v_scaled), 'hex'))::bit(64)::bigint;
  v_exponent := (v_bits >> 52)::integer;
  v_exact := v_bits & 4503599627370495;
  IF v_exponent = 0 THEN v_exponent := 1; ELSE v_exact := v_exact + 4503599627370496; END IF;
  FOR i IN 1..(1075 - v_exponent) LOOP v_exact := v_exact * 0.5; END LOOP;
  FOR i IN 1..(v_exponent - 1075) LOOP v_exact := v_exact * 2; END LOOP;
  -- 10^(v_digits − 1) ≤ v_exact < 10^v_digits.
  v_probe := v_exact;
  WHILE v_probe >= 1 LOOP v_probe := v_probe * 0.1; v_digits := v_digits + 1; END LOOP;
  WHILE v_probe < 0.1 LOOP v_probe := v_probe * 10; v_digits := v_digits - 1; END LOOP;
  -- toPrecision(12), then Math.round: both half up (numeric round() is half away from zero).
  RETURN round(round(v_exact, 12 - v_digits))::bigint;
END $$`);

    await queryRunner.query(`
CREATE FUNCTION rhythmc_atp_e4(p_ratings float8[]) RETURNS bigint LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
  v_sum float8 := 0;
  v_rating float8;
BEGIN
  -- The 30 highest, summed from the highest down (float8, as atpTenThousandths adds them).
  FOR v_rating IN SELECT r FROM unnest(p_ratings) AS r ORDER BY r DESC LIMIT 30 LOOP
    v_sum := v_sum + v_rating;
  END LOOP;
  RETURN rhythmc_rating_e4(v_sum / 30::float8);
END $$`);

    await queryRunner.query(`
CREATE FUNCTION rhythmc_upload_play(
  p_uid bigint, p_level_id integer, p_time_ms bigint, p_player_timestamp_ms bigint, p_acc float8, p_pass boolean,
  p_full_combo boolean, p_all_perfect boolean, p_is_new_record boolean, p_max_combo integer, p_is_rival boolean,
  p_is_win boolean, p_rival_uid bigint, p_rival_acc float8, p_counters integer[], p_player_arena varchar,
  p_server_id integer, p_server_name varchar, p_server_country varchar, p_server_session_id uuid,
  p_token_hash bpchar, p_now timestamptz, p_live_since timestamptz, p_flags text[], p_judged bigint
) RETURNS TABLE (
  outcome text, new_record_id bigint, new_received_ms bigint,
  chart_constant float8, chart_placeholder boolean, chart_notes integer,
  prev_version bigint, prev_atp numeric, prev_acc float8, prev_first_time_ms bigint, prev_record_id bigint,
  prev_rating float8, prev_best_version bigint,
  new_version bigint, new_atp_e4 bigint, new_rating float8,
  self_banned boolean, ban_generation bigint, db_now timestamptz
) LANGUAGE plpgsql AS $$
DECLARE
  v_chart record;
  v_session_id uuid;
  v_rating record;
  v_has_rating boolean;
  v_best record;
  v_has_best boolean;
  v_counted boolean;
BEGIN
  SELECT s.id INTO v_session_id FROM player_session s
    WHERE s.token_hash = p_token_hash
      AND rhythmc_upload_session_accepted(s.uid, s.logged_out_at, s.server_session_id, s.token_expires_at,
            s.renewed_at, p_uid, p_server_session_id, p_now, p_live_since);
  IF NOT FOUND THEN outcome := 'session'; RETURN NEXT; RETURN; END IF;

  -- The rating row's lock before the insert, as the transactional path takes it: two copies of one
  -- record queue on it instead of deadlocking on it and the record key.
  SELECT r.atp, r.version INTO v_rating FROM player_rating r WHERE r.uid = p_uid FOR UPDATE;
  v_has_rating := FOUND;
  -- The chart as it is now (after the lock, as every read below).
  SELECT c.difficulty_constant, c.placeholder, c.notes INTO v_chart FROM chart c WHERE c.level_id = p_level_id;
  IF NOT FOUND THEN outcome := 'chart'; RETURN NEXT; RETURN; END IF;
  chart_constant := v_chart.difficulty_constant;
  chart_placeholder := v_chart.placeholder;
  chart_notes := v_chart.notes;
  -- p_judged: the notes the record judged, null when the noteCount check is off.
  IF v_chart.notes IS NOT NULL AND p_judged IS NOT NULL AND p_judged <> v_chart.notes THEN
    outcome := 'notes'; RETURN NEXT; RETURN;
  END IF;
  INSERT INTO play_record (uid, level_id, time_ms, player_timestamp_ms, acc, pass, full_combo, all_perfect, is_new_record,
    max_combo, is_rival, is_win, rival_uid, rival_acc,
    tap_perfect, tap_great, tap_miss, hold_perfect, hold_great, hold_miss,
    dodge_perfect, dodge_great, dodge_miss, look_perfect, look_great, look_miss,
    player_arena, server_id, server_name, server_country, server_session_id, player_session_id, flags)
  SELECT p_uid, p_level_id, p_time_ms, p_player_timestamp_ms, p_acc, p_pass, p_full_combo, p_all_perfect, p_is_new_record,
    p_max_combo, p_is_rival, p_is_win, p_rival_uid, p_rival_acc,
    p_counters[1], p_counters[2], p_counters[3], p_counters[4], p_counters[5], p_counters[6],
    p_counters[7], p_counters[8], p_counters[9], p_counters[10], p_counters[11], p_counters[12],
    p_player_arena, p_server_id, p_server_name, p_server_country, p_server_session_id, v_session_id, p_flags
  ON CONFLICT (uid, level_id, time_ms) DO NOTHING
  RETURNING id, floor(extract(epoch FROM received_at) * 1000)::bigint INTO new_record_id, new_received_ms;
  IF NOT FOUND THEN
    -- Nothing written: the transactional path answers from the stored record.
    new_record_id := NULL; new_received_ms := NULL; outcome := 'duplicate'; RETURN NEXT; RETURN;
  END IF;
  outcome := 'stored';
  db_now := now();
  SELECT g.generation INTO ban_generation FROM rank_ban_generation g WHERE g.id = 1;
  self_banned := EXISTS (SELECT 1 FROM player_ban b
    WHERE b.uid = p_uid AND b.lifted_at IS NULL AND (b.until IS NULL OR b.until > now()));

  -- Counted: COUNTED_RECORD for a new record (neither approved nor voided). A first counted play
  -- creates the rating row (a concurrent first play may have created it: then it is locked here).
  v_counted := p_pass AND cardinality(p_flags) = 0 AND NOT v_chart.placeholder;
  IF v_counted AND NOT v_has_rating THEN
    INSERT INTO player_rating (uid, atp, version) VALUES (p_uid, 0, 0) ON CONFLICT (uid) DO NOTHING;
    SELECT r.atp, r.version INTO v_rating FROM player_rating r WHERE r.uid = p_uid FOR UPDATE;
    v_has_rating := true;
  END IF;
  -- The lock returned the row's latest version; the reads since take snapshots after it.
  IF v_has_rating THEN prev_version := v_rating.version; prev_atp := v_rating.atp; ELSE prev_version := 0; END IF;
  SELECT b.acc, b.first_time_ms, b.record_id, b.rating, b.version INTO v_best
    FROM player_chart_best b WHERE b.uid = p_uid AND b.level_id = p_level_id;
  v_has_best := FOUND;
  IF v_has_best THEN
    prev_acc := v_best.acc; prev_first_time_ms := v_best.first_time_ms; prev_record_id := v_best.record_id;
    prev_rating := v_best.rating; prev_best_version := v_best.version;
  END IF;
  IF NOT v_counted THEN RETURN NEXT; RETURN; END IF;
  -- A new best: the first, a higher acc, or the same acc reached earlier (improves() in the service).
  IF v_has_best AND NOT (p_acc > v_best.acc OR (p_acc = v_best.acc AND new_received_ms < v_best.first_time_ms)) THEN
    RETURN NEXT; RETURN;
  END IF;

  new_rating := rhythmc_play_rating(v_chart.difficulty_constant, p_acc);
  new_atp_e4 := rhythmc_atp_e4(ARRAY(
    SELECT o.rating FROM player_chart_best o WHERE o.uid = p_uid AND o.level_id <> p_level_id
     ORDER BY o.rating DESC LIMIT 30) || new_rating);
  new_version := nextval('rank_version_seq');
  INSERT INTO player_chart_best (uid, level_id, acc, first_time_ms, record_id, rating, version, updated_at)
  VALUES (p_uid, p_level_id, p_acc, new_received_ms, new_record_id, new_rating, new_version, now())
  ON CONFLICT (uid, level_id) DO UPDATE
    SET acc = EXCLUDED.acc, first_time_ms = EXCLUDED.first_time_ms, record_id = EXCLUDED.record_id,
        rating = EXCLUDED.rating, version = EXCLUDED.version, updated_at = now();
  UPDATE player_rating r SET atp = new_atp_e4 * 0.0001, version = new_version, updated_at = now() WHERE r.uid = p_uid;
  -- A banned player's keys changed (an upload that raced its ban): every ban view must reload.
  IF self_banned THEN
    UPDATE rank_ban_generation g SET generation = g.generation + 1 WHERE g.id = 1;
  END IF;
  RETURN NEXT;
END $$`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP FUNCTION rhythmc_upload_play');
    await queryRunner.query('DROP FUNCTION rhythmc_atp_e4');
    await queryRunner.query('DROP FUNCTION rhythmc_rating_e4');
    await queryRunner.query('DROP FUNCTION rhythmc_play_rating');
    await queryRunner.query('DROP FUNCTION rhythmc_upload_session_accepted');
  }
}
