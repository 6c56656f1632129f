import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The two state syncs write only what changes (issue #16, docs/decisions.md "Syncs that change
 * nothing write nothing"). A player who joins sends the collections and the balance the server
 * already knows; both functions used to do their writes' work anyway:
 *   - rhythmc_grant_collections: when the player owns every key sent, it answers 'ok' after one
 *     index probe per key (owned keys exist in the catalog: player_collection's foreign key), with
 *     no catalog check and no INSERT statements; otherwise it runs as before;
 *   - rhythmc_set_balance: when the stored balance already is the value sent (and the expected
 *     one, if any) and no transaction holds the row (xmax 0: no lock, no update in flight), it
 *     answers with it without the row lock, the UPDATE or a history row, so the transaction
 *     writes nothing and commits without a WAL flush. A sync that finds the row held waits for
 *     it as before: a change in flight (sent earlier) is not overtaken by this one. Otherwise it
 *     runs as before, except that a balance found equal to the value sent once the row is locked
 *     is not written either: the history holds changes only.
 * Every other answer is unchanged; `down` restores the functions of
 * migrations/1795662422908-OneRoundTripLogin.ts. Written by hand (the TypeORM CLI does not
 * generate functions). Runs on PostgreSQL and on the embedded PGlite.
 */
export class SyncsWriteOnlyChanges1795730000000 implements MigrationInterface {
  name = 'SyncsWriteOnlyChanges1795730000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(grantCollections(true));
    await queryRunner.query(setBalance(true));
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(grantCollections(false));
    await queryRunner.query(setBalance(false));
  }
}

function grantCollections(ownedFastPath: boolean): string {
  const fastPath = ownedFastPath
    ? `
  -- Every key already owned (the usual sync of a player who joins): nothing to check or write.
  IF NOT EXISTS (SELECT 1 FROM unnest(p_keys) AS k
                  WHERE NOT EXISTS (SELECT 1 FROM player_collection pc WHERE pc.uid = p_uid AND pc.collection_key = k)) THEN
    RETURN NEXT; RETURN;
  END IF;`
    : '';
  return `
CREATE OR REPLACE FUNCTION rhythmc_grant_collections(
  p_token_hash bpchar, p_uid bigint, p_server_session_id uuid, p_now timestamptz,
  p_keys varchar[], p_asset_keys varchar[], p_asset_type varchar, p_asset_unlock_method jsonb
) RETURNS TABLE (status text, refused varchar[]) LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
  status := rhythmc_bound_player_session(p_token_hash, p_uid, p_server_session_id, p_now);
  IF status <> 'ok' OR cardinality(p_keys) = 0 THEN RETURN NEXT; RETURN; END IF;${fastPath}
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
END $$`;
}

function setBalance(unchangedFastPath: boolean): string {
  const fastPath = unchangedFastPath
    ? `
  -- The balance already is the value sent and nobody holds the row (a change in flight, sent
  -- before this sync, would be overtaken): nothing to lock or write, no history row.
  SELECT b.watt_hour, b.xmax::text = '0' INTO v_previous, v_free FROM player_balance b WHERE b.uid = p_uid;
  IF FOUND AND v_free AND v_previous = p_watt_hour AND (p_expected IS NULL OR p_expected = v_previous) THEN
    stored := v_previous; RETURN NEXT; RETURN;
  END IF;`
    : '';
  // Became the value sent while this call waited for the lock.
  const unchangedUnderLock = unchangedFastPath
    ? `
  IF v_previous = p_watt_hour THEN stored := v_previous; RETURN NEXT; RETURN; END IF;`
    : '';
  return `
CREATE OR REPLACE FUNCTION rhythmc_set_balance(
  p_token_hash bpchar, p_uid bigint, p_server_session_id uuid, p_now timestamptz,
  p_watt_hour bigint, p_expected bigint, p_server_id integer
) RETURNS TABLE (status text, stored bigint) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_previous bigint;${unchangedFastPath ? '\n  v_free boolean;' : ''}
BEGIN
  -- 404 for a uid that names no player comes before the token check.
  PERFORM 1 FROM player p WHERE p.uid = p_uid;
  IF NOT FOUND THEN status := 'no_player'; RETURN NEXT; RETURN; END IF;
  status := rhythmc_bound_player_session(p_token_hash, p_uid, p_server_session_id, p_now);
  IF status <> 'ok' THEN RETURN NEXT; RETURN; END IF;${fastPath}
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
  END IF;${unchangedUnderLock}
  UPDATE player_balance b SET watt_hour = p_watt_hour, updated_at = now() WHERE b.uid = p_uid;
  INSERT INTO balance_history (uid, previous_watt_hour, watt_hour, server_id)
    VALUES (p_uid, v_previous, p_watt_hour, p_server_id);
  stored := p_watt_hour;
  RETURN NEXT;
END $$`;
}
