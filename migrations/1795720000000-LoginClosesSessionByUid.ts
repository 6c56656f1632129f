import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * rhythmc_player_login closes an expired open session by its id and its uid (issue #16, as the
 * service's own session writes: src/auth/session.repository.ts `openSession`). Given only the id,
 * with statistics taken while every session was closed, PostgreSQL walks the whole partial index
 * of open sessions to find the row; with the uid it reads that index at one key. The function is
 * otherwise unchanged (migrations/1795662422908-OneRoundTripLogin.ts); `down` restores it.
 * Written by hand (the TypeORM CLI does not generate functions).
 */
export class LoginClosesSessionByUid1795720000000 implements MigrationInterface {
  name = 'LoginClosesSessionByUid1795720000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
CREATE OR REPLACE FUNCTION rhythmc_player_login(
  p_mode varchar, p_uid bigint, p_uuid uuid, p_username varchar, p_resume_hash bpchar,
  p_server_session_id uuid, p_token_hash bpchar, p_token_expires_at timestamptz, p_version integer,
  p_new_resume_hash bpchar, p_resume_expires_at timestamptz, p_now timestamptz
) RETURNS TABLE (
  status text, uid bigint, username varchar, display_name varchar, previous_version integer,
  banstate integer, continue_enabled boolean, sound jsonb, song_selection_state jsonb,
  extra_options jsonb, prefix_key varchar, suffix_key varchar, ban_reason varchar,
  ban_until timestamptz, collections varchar[]
) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_uid bigint := p_uid;
  v_player player%ROWTYPE;
  v_ban record;
  v_open record;
BEGIN
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
    SELECT r.uid INTO v_uid FROM player_resume_token r
      WHERE r.token_hash = p_resume_hash AND r.expires_at > p_now;
    IF NOT FOUND THEN status := 'no_resume'; RETURN NEXT; RETURN; END IF;
  END IF;
  uid := v_uid;

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
    -- A live session: 409 or a handover, the service's transactional path decides. Nothing written.
    IF v_open.token_expires_at > p_now THEN status := 'live'; RETURN NEXT; RETURN; END IF;
    UPDATE player_session s SET logged_out_at = p_now, logout_reason = 'expired'
      WHERE s.id = v_open.id AND s.uid = v_uid AND s.logged_out_at IS NULL;
  END IF;

  INSERT INTO player_session (uid, server_session_id, token_hash, token_expires_at, mode, renewed_at)
    VALUES (v_uid, p_server_session_id, p_token_hash, p_token_expires_at, p_mode, p_now);
  UPDATE player p SET data_version = p_version, username = coalesce(p_username, p.username), updated_at = now()
    WHERE p.uid = v_uid;
  IF v_player.continue_enabled THEN
    INSERT INTO player_resume_token (uid, token_hash, expires_at, issued_at)
      VALUES (v_uid, p_new_resume_hash, p_resume_expires_at, p_now)
      ON CONFLICT (uid) DO UPDATE
        SET token_hash = EXCLUDED.token_hash, expires_at = EXCLUDED.expires_at, issued_at = EXCLUDED.issued_at;
  END IF;

  status := 'ok';
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
END $$`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
CREATE OR REPLACE FUNCTION rhythmc_player_login(
  p_mode varchar, p_uid bigint, p_uuid uuid, p_username varchar, p_resume_hash bpchar,
  p_server_session_id uuid, p_token_hash bpchar, p_token_expires_at timestamptz, p_version integer,
  p_new_resume_hash bpchar, p_resume_expires_at timestamptz, p_now timestamptz
) RETURNS TABLE (
  status text, uid bigint, username varchar, display_name varchar, previous_version integer,
  banstate integer, continue_enabled boolean, sound jsonb, song_selection_state jsonb,
  extra_options jsonb, prefix_key varchar, suffix_key varchar, ban_reason varchar,
  ban_until timestamptz, collections varchar[]
) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_uid bigint := p_uid;
  v_player player%ROWTYPE;
  v_ban record;
  v_open record;
BEGIN
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
    SELECT r.uid INTO v_uid FROM player_resume_token r
      WHERE r.token_hash = p_resume_hash AND r.expires_at > p_now;
    IF NOT FOUND THEN status := 'no_resume'; RETURN NEXT; RETURN; END IF;
  END IF;
  uid := v_uid;

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
    -- A live session: 409 or a handover, the service's transactional path decides. Nothing written.
    IF v_open.token_expires_at > p_now THEN status := 'live'; RETURN NEXT; RETURN; END IF;
    UPDATE player_session s SET logged_out_at = p_now, logout_reason = 'expired'
      WHERE s.id = v_open.id AND s.logged_out_at IS NULL;
  END IF;

  INSERT INTO player_session (uid, server_session_id, token_hash, token_expires_at, mode, renewed_at)
    VALUES (v_uid, p_server_session_id, p_token_hash, p_token_expires_at, p_mode, p_now);
  UPDATE player p SET data_version = p_version, username = coalesce(p_username, p.username), updated_at = now()
    WHERE p.uid = v_uid;
  IF v_player.continue_enabled THEN
    INSERT INTO player_resume_token (uid, token_hash, expires_at, issued_at)
      VALUES (v_uid, p_new_resume_hash, p_resume_expires_at, p_now)
      ON CONFLICT (uid) DO UPDATE
        SET token_hash = EXCLUDED.token_hash, expires_at = EXCLUDED.expires_at, issued_at = EXCLUDED.issued_at;
  END IF;

  status := 'ok';
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
END $$`);
  }
}
