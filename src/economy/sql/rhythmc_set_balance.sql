-- The balance sync in one statement (EconomyRepository): writes only a changed balance, with its history row.
CREATE OR REPLACE FUNCTION public.rhythmc_set_balance(p_token_hash character, p_uid bigint, p_server_session_id uuid, p_now timestamp with time zone, p_watt_hour bigint, p_expected bigint, p_server_id integer)
 RETURNS TABLE(status text, stored bigint)
 LANGUAGE plpgsql
 SET lock_timeout TO '5s'
AS $function$
#variable_conflict use_column
DECLARE
  v_previous bigint;
  v_free boolean;
BEGIN
  -- 404 for a uid that names no player comes before the token check.
  PERFORM 1 FROM player p WHERE p.uid = p_uid;
  IF NOT FOUND THEN status := 'no_player'; RETURN NEXT; RETURN; END IF;
  status := rhythmc_bound_player_session(p_token_hash, p_uid, p_server_session_id, p_now);
  IF status <> 'ok' THEN RETURN NEXT; RETURN; END IF;
  -- The balance already is the value sent and nobody holds the row (a change in flight, sent
  -- before this sync, would be overtaken): nothing to lock or write, no history row.
  SELECT b.watt_hour, b.xmax::text = '0' INTO v_previous, v_free FROM player_balance b WHERE b.uid = p_uid;
  IF FOUND AND v_free AND v_previous = p_watt_hour AND (p_expected IS NULL OR p_expected = v_previous) THEN
    stored := v_previous; RETURN NEXT; RETURN;
  END IF;
  SELECT b.watt_hour INTO v_previous FROM player_balance b WHERE b.uid = p_uid FOR UPDATE;
  IF NOT FOUND THEN
    -- A player never synced holds 0 for the compare-and-set.
    IF p_expected IS NOT NULL AND p_expected <> 0 THEN
      status := 'conflict'; stored := 0; RETURN NEXT; RETURN;
    END IF;
    INSERT INTO player_balance (uid, watt_hour, updated_at) VALUES (p_uid, p_watt_hour, now())
      ON CONFLICT (uid) DO NOTHING;
    IF FOUND THEN
      INSERT INTO balance_history (uid, previous_watt_hour, watt_hour, server_id)
        VALUES (p_uid, NULL, p_watt_hour, p_server_id);
      stored := p_watt_hour; RETURN NEXT; RETURN;
    END IF;
    -- Another first sync of this player committed in between: lock its row and replace it.
    SELECT b.watt_hour INTO v_previous FROM player_balance b WHERE b.uid = p_uid FOR UPDATE;
    IF NOT FOUND THEN RAISE EXCEPTION 'Balance row vanished after a conflicting insert'; END IF;
  END IF;
  IF p_expected IS NOT NULL AND p_expected <> v_previous THEN
    status := 'conflict'; stored := v_previous; RETURN NEXT; RETURN;
  END IF;
  IF v_previous = p_watt_hour THEN stored := v_previous; RETURN NEXT; RETURN; END IF;
  UPDATE player_balance b SET watt_hour = p_watt_hour, updated_at = now() WHERE b.uid = p_uid;
  INSERT INTO balance_history (uid, previous_watt_hour, watt_hour, server_id)
    VALUES (p_uid, v_previous, p_watt_hour, p_server_id);
  stored := p_watt_hour;
  RETURN NEXT;
END $function$
