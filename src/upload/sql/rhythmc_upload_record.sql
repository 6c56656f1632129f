-- The score upload in one statement (PlayRecordRepository.uploadInOneStatement): session, record, best,
-- ATP and the open periods. A refused session answers outcome 'refused' and the reason (refusal: the
-- upload-session rule's, or 'erased'), which the service only words; the other rare cases answer an
-- outcome and the service takes its transactional path. Replaced rhythmc_upload_play (dropped by
-- migration DropUploadPlay, docs/decisions.md "Rolling upgrades").
CREATE OR REPLACE FUNCTION public.rhythmc_upload_record(p_uid bigint, p_level_id integer, p_time_ms bigint, p_player_timestamp_ms bigint, p_acc double precision, p_pass boolean, p_full_combo boolean, p_all_perfect boolean, p_is_new_record boolean, p_max_combo integer, p_is_rival boolean, p_is_win boolean, p_rival_uid bigint, p_rival_acc double precision, p_counters integer[], p_player_arena character varying, p_server_id integer, p_server_name character varying, p_server_country character varying, p_server_session_id uuid, p_token_hash character, p_now timestamp with time zone, p_live_since timestamp with time zone, p_flags text[], p_judged bigint, p_period_at timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS TABLE(outcome text, refusal text, new_record_id bigint, new_received_ms bigint, chart_constant double precision, chart_placeholder boolean, chart_notes integer, prev_version bigint, prev_atp numeric, prev_acc double precision, prev_first_time_ms bigint, prev_record_id bigint, prev_rating double precision, prev_best_version bigint, new_version bigint, new_atp_e4 bigint, new_rating double precision, self_banned boolean, ban_generation bigint, db_now timestamp with time zone)
 LANGUAGE plpgsql
 SET lock_timeout TO '5s'
AS $function$
DECLARE
  v_chart record;
  v_session_id uuid;
  v_rating record;
  v_has_rating boolean;
  v_best record;
  v_has_best boolean;
  v_counted boolean;
BEGIN
  -- The session of the token, or why it is refused (no row: all nulls, 'no_session').
  SELECT s.id, rhythmc_upload_session_refusal(s.uid, s.logged_out_at, s.server_session_id, s.token_expires_at,
           s.renewed_at, p_uid, p_server_session_id, p_now, p_live_since)
    INTO v_session_id, refusal
    FROM (SELECT) AS one LEFT JOIN player_session s ON s.token_hash = p_token_hash;
  IF refusal IS NOT NULL THEN
    -- An erased player's sessions went with it: the refusal says it was erased.
    IF EXISTS (SELECT 1 FROM player_erasure e WHERE e.uid = p_uid) THEN refusal := 'erased'; END IF;
    outcome := 'refused'; RETURN NEXT; RETURN;
  END IF;

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
  PERFORM rhythmc_count_period_play(p_uid, p_level_id, p_acc, new_received_ms, new_record_id,
    v_chart.difficulty_constant, coalesce(p_period_at, p_now));
  IF v_has_best AND NOT rhythmc_best_improves(p_acc, new_received_ms, v_best.acc, v_best.first_time_ms) THEN
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
END $function$
