-- Whether a player token is live and bound to this uid and server session: ok, invalid_token, other_uid or
-- other_server_session. Called by rhythmc_grant_collections and rhythmc_set_balance (the two syncs).
CREATE OR REPLACE FUNCTION public.rhythmc_bound_player_session(p_token_hash character, p_uid bigint, p_server_session_id uuid, p_now timestamp with time zone)
 RETURNS text
 LANGUAGE plpgsql
AS $function$
DECLARE
  v record;
BEGIN
  SELECT s.uid, s.server_session_id, s.logged_out_at, s.token_expires_at INTO v
    FROM player_session s WHERE s.token_hash = p_token_hash;
  IF NOT FOUND OR v.logged_out_at IS NOT NULL OR v.token_expires_at <= p_now THEN
    RETURN 'invalid_token';
  END IF;
  IF v.uid <> p_uid THEN RETURN 'other_uid'; END IF;
  IF v.server_session_id <> p_server_session_id THEN RETURN 'other_server_session'; END IF;
  RETURN 'ok';
END $function$
