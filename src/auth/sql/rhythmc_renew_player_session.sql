-- resume_session in one statement: renews the live session of a token (SessionRepository.renewPlayerSessions).
CREATE OR REPLACE FUNCTION public.rhythmc_renew_player_session(p_token_hash character, p_uid bigint, p_server_session_id uuid, p_now timestamp with time zone, p_expires_at timestamp with time zone, p_move_from integer)
 RETURNS TABLE(uid bigint, live boolean, renewed boolean, bound_server_id integer)
 LANGUAGE plpgsql
 SET lock_timeout TO '5s'
AS $function$
#variable_conflict use_column
DECLARE
  v_id uuid;
  v_bound uuid;
BEGIN
  SELECT s.id, s.uid, s.logged_out_at IS NULL AND s.token_expires_at > p_now, s.server_session_id
    INTO v_id, uid, live, v_bound
    FROM player_session s WHERE s.token_hash = p_token_hash;
  IF NOT FOUND THEN RETURN NEXT; RETURN; END IF;
  renewed := false;
  IF live AND uid = p_uid THEN
    IF v_bound <> p_server_session_id THEN
      -- Bound to another server: moved only from the server the service names (one network with
      -- the caller's: PlayerService.resumeSession); otherwise nothing is written and the holding
      -- server is answered, for the service to decide.
      SELECT ss.server_id INTO bound_server_id FROM server_session ss WHERE ss.id = v_bound;
      IF p_move_from IS DISTINCT FROM bound_server_id THEN RETURN NEXT; RETURN; END IF;
      bound_server_id := NULL;
    END IF;
    -- The update names the uid as well as the id (SessionRepository, openSession).
    UPDATE player_session ps
       SET server_session_id = p_server_session_id, token_expires_at = p_expires_at, renewed_at = p_now
     WHERE ps.id = v_id AND ps.uid = p_uid AND ps.logged_out_at IS NULL AND ps.token_expires_at < p_expires_at
       AND EXISTS (SELECT 1 FROM server_session ss WHERE ss.id = p_server_session_id AND ss.ended_at IS NULL);
    renewed := FOUND;
    IF NOT renewed THEN
      -- Not written: the session or the server session ended, or a renewal made later (a call
      -- that ran first: another batch, its retry, another instance) set a later expiry. That one
      -- stands, with its server session, and this call is answered as renewed.
      renewed := EXISTS (
        SELECT 1 FROM player_session ps
         WHERE ps.id = v_id AND ps.uid = p_uid AND ps.logged_out_at IS NULL AND ps.token_expires_at >= p_expires_at
           AND EXISTS (SELECT 1 FROM server_session ss WHERE ss.id = p_server_session_id AND ss.ended_at IS NULL));
    END IF;
  END IF;
  RETURN NEXT;
END $function$
