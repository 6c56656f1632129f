import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Player login and the state syncs in one round trip each (issue #16, docs/decisions.md "Players:
 * one round trip per login and sync"). Each function runs the statements the service used to send
 * one by one inside its transaction, in the same order and with the same locks; a PL/pgSQL
 * function takes a new snapshot for each of its statements (READ COMMITTED), so what a concurrent
 * login, ban or sync sees is what it saw before. Their plans are cached per connection.
 *
 * The rules they carry have a TypeScript twin where the service still needs one:
 *   - rhythmc_bound_player_session: PlayerSessionService.resolveBoundPlayerToken (a live player
 *     token of that uid and server session; the caller passes its clock);
 *   - the active ban: activeBan() in src/player/player.repository.ts;
 *   - a live session at login makes rhythmc_player_login answer 'live' with nothing written, and
 *     the service takes its transactional path (409 or handover, decided in TypeScript).
 * Written by hand (the TypeORM CLI does not generate functions); schema-drift ignores functions.
 * Runs on PostgreSQL and on the embedded PGlite (PL/pgSQL is built in).
 */
export class OneRoundTripLogin1795662422908 implements MigrationInterface {
  name = 'OneRoundTripLogin1795662422908';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
CREATE FUNCTION rhythmc_bound_player_session(
  p_token_hash bpchar, p_uid bigint, p_server_session_id uuid, p_now timestamptz
) RETURNS text LANGUAGE plpgsql AS $$
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
END $$`);

    await queryRunner.query(`
CREATE FUNCTION rhythmc_player_login(
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

    await queryRunner.query(`
CREATE FUNCTION rhythmc_grant_collections(
  p_token_hash bpchar, p_uid bigint, p_server_session_id uuid, p_now timestamptz,
  p_keys varchar[], p_asset_keys varchar[], p_asset_type varchar, p_asset_unlock_method jsonb
) RETURNS TABLE (status text, refused varchar[]) LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
  status := rhythmc_bound_player_session(p_token_hash, p_uid, p_server_session_id, p_now);
  IF status <> 'ok' OR cardinality(p_keys) = 0 THEN RETURN NEXT; RETURN; END IF;
  -- Unknown keys that may not become asset collections fail the whole request, in request order.
  refused := ARRAY(
    SELECT k.key FROM unnest(p_keys) WITH ORDINALITY AS k(key, position)
     WHERE NOT EXISTS (SELECT 1 FROM collection c WHERE c.key = k.key) AND NOT (k.key = ANY (p_asset_keys))
     ORDER BY k.position);
  IF cardinality(refused) > 0 THEN status := 'refused'; RETURN NEXT; RETURN; END IF;
  -- In key order, so concurrent calls naming the same new keys wait on each other instead of deadlocking.
  INSERT INTO collection (key, type, unlock_method, properties)
    SELECT k, p_asset_type, p_asset_unlock_method, '{}'::jsonb FROM unnest(p_keys) AS k
     WHERE NOT EXISTS (SELECT 1 FROM collection c WHERE c.key = k) ORDER BY k
    ON CONFLICT (key) DO NOTHING;
  INSERT INTO player_collection (uid, collection_key)
    SELECT p_uid, k FROM unnest(p_keys) AS k ORDER BY k
    ON CONFLICT (uid, collection_key) DO NOTHING;
  RETURN NEXT;
END $$`);

    await queryRunner.query(`
CREATE FUNCTION rhythmc_set_balance(
  p_token_hash bpchar, p_uid bigint, p_server_session_id uuid, p_now timestamptz,
  p_watt_hour bigint, p_expected bigint, p_server_id integer
) RETURNS TABLE (status text, stored bigint) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_previous bigint;
BEGIN
  -- 404 for a uid that names no player comes before the token check.
  PERFORM 1 FROM player p WHERE p.uid = p_uid;
  IF NOT FOUND THEN status := 'no_player'; RETURN NEXT; RETURN; END IF;
  status := rhythmc_bound_player_session(p_token_hash, p_uid, p_server_session_id, p_now);
  IF status <> 'ok' THEN RETURN NEXT; RETURN; END IF;
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
  UPDATE player_balance b SET watt_hour = p_watt_hour, updated_at = now() WHERE b.uid = p_uid;
  INSERT INTO balance_history (uid, previous_watt_hour, watt_hour, server_id)
    VALUES (p_uid, v_previous, p_watt_hour, p_server_id);
  stored := p_watt_hour;
  RETURN NEXT;
END $$`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `DROP FUNCTION rhythmc_set_balance(bpchar, bigint, uuid, timestamptz, bigint, bigint, integer)`,
    );
    await queryRunner.query(
      `DROP FUNCTION rhythmc_grant_collections(bpchar, bigint, uuid, timestamptz, varchar[], varchar[], varchar, jsonb)`,
    );
    await queryRunner.query(
      `DROP FUNCTION rhythmc_player_login(varchar, bigint, uuid, varchar, bpchar, uuid, bpchar, timestamptz, integer, bpchar, timestamptz, timestamptz)`,
    );
    await queryRunner.query(`DROP FUNCTION rhythmc_bound_player_session(bpchar, bigint, uuid, timestamptz)`);
  }
}
