-- A player login in one statement (PlayerRepository): account, ban, resume token, session, collections;
-- the proof rule is SessionProofRule's (src/player/session-proof.rule.ts).
-- It writes the home server (rhythmc_player_move_home) only when the login's server has another scope
-- (rhythmc_player_home_moves); the group comes from the service with the setting it was computed from.
CREATE OR REPLACE FUNCTION public.rhythmc_player_login(p_mode character varying, p_uid bigint, p_uuid uuid, p_username character varying, p_resume_hash character, p_server_session_id uuid, p_token_hash character, p_token_expires_at timestamp with time zone, p_version integer, p_new_resume_hash character, p_resume_expires_at timestamp with time zone, p_now timestamp with time zone, p_group_servers integer[] DEFAULT NULL::integer[], p_in_group boolean DEFAULT NULL::boolean, p_handover jsonb DEFAULT NULL::jsonb)
 RETURNS TABLE(status text, uid bigint, username character varying, display_name character varying, previous_version integer, banstate integer, continue_enabled boolean, sound jsonb, song_selection_state jsonb, extra_options jsonb, prefix_key character varying, suffix_key character varying, ban_reason character varying, ban_until timestamp with time zone, collections character varying[], resume_issued boolean)
 LANGUAGE plpgsql
 SET lock_timeout TO '5s'
AS $function$
#variable_conflict use_column
DECLARE
  v_uid bigint := p_uid;
  v_player player%ROWTYPE;
  v_ban record;
  v_open record;
  -- Proof of ownership: a Net Token, or a resume token issued to a proven session (the twin of
  -- loginProves in src/player/session-proof.rule.ts); ONLINE proves none.
  v_proven boolean := p_mode = 'TOKEN';
  -- The server of this login, the home unless the home's scope is the same (docs/decisions.md
  -- "Scoped boards: groups and countries").
  v_home integer;
BEGIN
  -- The login server's group (p_group_servers, p_in_group) was computed by the service from the
  -- session-handover setting p_handover: if another one is in force, nothing is written and the
  -- service computes it again (the previous release passes no group: the home moves to any other server).
  IF p_group_servers IS NOT NULL AND p_handover IS DISTINCT FROM
      coalesce((SELECT s.value FROM service_setting s WHERE s.key = 'session_handover'), 'null'::jsonb) THEN
    status := 'setting_changed'; RETURN NEXT; RETURN;
  END IF;
  -- The login's server session, open and share-locked: ending it (the server's next login, its
  -- logout, an admin's) waits for this login and then logs out the session it opened; a login that
  -- waited for an end finds the session ended and opens nothing.
  SELECT s.server_id INTO v_home FROM server_session s
   WHERE s.id = p_server_session_id AND s.ended_at IS NULL FOR SHARE;
  IF NOT FOUND THEN status := 'server_session_ended'; RETURN NEXT; RETURN; END IF;
  -- Who the credential names (TOKEN: the service found the uid, it counts the lock-out).
  IF p_mode = 'ONLINE' THEN
    SELECT p.uid INTO v_uid FROM player p WHERE p.uuid = p_uuid;
    IF NOT FOUND THEN
      -- A genuine account seen for the first time; a concurrent insert wins quietly.
      INSERT INTO player (uuid, username, display_name, extra_options)
        VALUES (p_uuid, p_username, '', '{}'::jsonb) ON CONFLICT DO NOTHING;
      SELECT p.uid INTO v_uid FROM player p WHERE p.uuid = p_uuid;
      IF NOT FOUND THEN status := 'vanished'; RETURN NEXT; RETURN; END IF;
    END IF;
  ELSIF p_mode = 'OFFLINE_REFRESH' THEN
    SELECT r.uid, r.proven INTO v_uid, v_proven FROM player_resume_token r
      WHERE r.token_hash = p_resume_hash AND r.expires_at > p_now;
    IF NOT FOUND THEN status := 'no_resume'; RETURN NEXT; RETURN; END IF;
  END IF;
  uid := v_uid;

  -- A login that moves the player's home locks the rating row first, as uploads do (the rating
  -- row, then the player row), so that moving the home's copies cannot deadlock with an upload.
  IF EXISTS (SELECT 1 FROM player p
             WHERE p.uid = v_uid AND rhythmc_player_home_moves(p.home_server_id, v_home, p_group_servers, p_in_group)) THEN
    PERFORM 1 FROM player_rating r WHERE r.uid = v_uid FOR UPDATE;
  END IF;

  -- The player row locked: logins of one account run one after the other.
  SELECT * INTO v_player FROM player p WHERE p.uid = v_uid FOR UPDATE;
  IF NOT FOUND THEN status := 'unknown_player'; RETURN NEXT; RETURN; END IF;
  IF p_mode = 'OFFLINE_REFRESH' AND NOT v_player.continue_enabled THEN
    status := 'no_continue'; RETURN NEXT; RETURN;
  END IF;
  -- Ban before conflict.
  SELECT b.reason, b.until INTO v_ban FROM player_ban b
    WHERE b.uid = v_uid AND b.lifted_at IS NULL AND (b.until IS NULL OR b.until > now()) LIMIT 1;
  IF FOUND THEN
    status := 'banned'; ban_reason := v_ban.reason; ban_until := v_ban.until; RETURN NEXT; RETURN;
  END IF;
  SELECT s.id, s.token_expires_at INTO v_open FROM player_session s
    WHERE s.uid = v_uid AND s.logged_out_at IS NULL;
  IF FOUND THEN
    -- A live session: 409, a handover or a takeover, the service's transactional path decides. Nothing written.
    IF v_open.token_expires_at > p_now THEN status := 'live'; RETURN NEXT; RETURN; END IF;
    UPDATE player_session s SET logged_out_at = p_now, logout_reason = 'expired'
      WHERE s.id = v_open.id AND s.uid = v_uid AND s.logged_out_at IS NULL;
  END IF;

  INSERT INTO player_session (uid, server_session_id, token_hash, token_expires_at, mode, renewed_at, proven)
    VALUES (v_uid, p_server_session_id, p_token_hash, p_token_expires_at, p_mode, p_now, v_proven);
  UPDATE player p SET data_version = p_version, username = coalesce(p_username, p.username), updated_at = now()
    WHERE p.uid = v_uid;
  -- Written only when the home's scope changes (the player row and its copies on the boards' rows).
  IF rhythmc_player_home_moves(v_player.home_server_id, v_home, p_group_servers, p_in_group) THEN
    PERFORM rhythmc_player_move_home(v_uid, v_home, p_group_servers, p_in_group);
  END IF;
  -- decisions.md §4: every login answer while continueEnabled is on carries a fresh resume token,
  -- and the previous one stops working, whatever proof either carried.
  IF v_player.continue_enabled THEN
    resume_issued := true;
    -- The resume token is as proven as the session it is issued to.
    INSERT INTO player_resume_token (uid, token_hash, expires_at, issued_at, proven)
      VALUES (v_uid, p_new_resume_hash, p_resume_expires_at, p_now, v_proven)
      ON CONFLICT (uid) DO UPDATE
        SET token_hash = EXCLUDED.token_hash, expires_at = EXCLUDED.expires_at, issued_at = EXCLUDED.issued_at,
            proven = EXCLUDED.proven;
  END IF;

  status := 'ok';
  resume_issued := coalesce(resume_issued, false);
  username := coalesce(p_username, v_player.username);
  display_name := v_player.display_name;
  previous_version := v_player.data_version;
  banstate := v_player.banstate;
  continue_enabled := v_player.continue_enabled;
  sound := v_player.sound;
  song_selection_state := v_player.song_selection_state;
  extra_options := v_player.extra_options;
  prefix_key := v_player.prefix_key;
  suffix_key := v_player.suffix_key;
  collections := ARRAY(SELECT c.collection_key FROM player_collection c WHERE c.uid = v_uid ORDER BY c.collection_key);
  RETURN NEXT;
END $function$

