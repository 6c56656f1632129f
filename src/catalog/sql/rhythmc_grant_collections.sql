-- The collection sync in one statement (CatalogRepository): writes only what changes.
-- Two signatures: the first is the previous release's (no bound); the second, with p_max_held, is the service's
-- (MAX_PLAYER_COLLECTIONS, catalog.rules.ts). A later release drops the first.
CREATE OR REPLACE FUNCTION public.rhythmc_grant_collections(p_token_hash character, p_uid bigint, p_server_session_id uuid, p_now timestamp with time zone, p_keys character varying[], p_asset_keys character varying[], p_asset_type character varying, p_asset_unlock_method jsonb)
 RETURNS TABLE(status text, refused character varying[])
 LANGUAGE plpgsql
 SET lock_timeout TO '5s'
AS $function$
#variable_conflict use_column
BEGIN
  status := rhythmc_bound_player_session(p_token_hash, p_uid, p_server_session_id, p_now);
  IF status <> 'ok' OR cardinality(p_keys) = 0 THEN RETURN NEXT; RETURN; END IF;
  -- Every key already owned (the usual sync of a player who joins): nothing to check or write.
  IF NOT EXISTS (SELECT 1 FROM unnest(p_keys) AS k
                  WHERE NOT EXISTS (SELECT 1 FROM player_collection pc WHERE pc.uid = p_uid AND pc.collection_key = k)) THEN
    RETURN NEXT; RETURN;
  END IF;
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
END $function$
;
CREATE OR REPLACE FUNCTION public.rhythmc_grant_collections(p_token_hash character, p_uid bigint, p_server_session_id uuid, p_now timestamp with time zone, p_keys character varying[], p_asset_keys character varying[], p_asset_type character varying, p_asset_unlock_method jsonb, p_max_held integer)
 RETURNS TABLE(status text, refused character varying[], held integer)
 LANGUAGE plpgsql
 SET lock_timeout TO '5s'
AS $function$
#variable_conflict use_column
DECLARE
  v_new integer;
BEGIN
  status := rhythmc_bound_player_session(p_token_hash, p_uid, p_server_session_id, p_now);
  IF status <> 'ok' OR cardinality(p_keys) = 0 THEN RETURN NEXT; RETURN; END IF;
  -- Every key already owned (the usual sync of a player who joins): nothing to check or write.
  IF NOT EXISTS (SELECT 1 FROM unnest(p_keys) AS k
                  WHERE NOT EXISTS (SELECT 1 FROM player_collection pc WHERE pc.uid = p_uid AND pc.collection_key = k)) THEN
    RETURN NEXT; RETURN;
  END IF;
  -- Unknown keys that may not become asset collections fail the whole request, in request order.
  refused := ARRAY(
    SELECT k.key FROM unnest(p_keys) WITH ORDINALITY AS k(key, position)
     WHERE NOT EXISTS (SELECT 1 FROM collection c WHERE c.key = k.key) AND NOT (k.key = ANY (p_asset_keys))
     ORDER BY k.position);
  IF cardinality(refused) > 0 THEN status := 'refused'; RETURN NEXT; RETURN; END IF;
  -- The player's syncs that add keys run one after the other (the player row's lock), so the count
  -- below holds until this one commits: together they cannot pass p_max_held.
  PERFORM 1 FROM player p WHERE p.uid = p_uid FOR NO KEY UPDATE;
  held := (SELECT count(*) FROM player_collection pc WHERE pc.uid = p_uid);
  v_new := (SELECT count(DISTINCT k) FROM unnest(p_keys) AS k
             WHERE NOT EXISTS (SELECT 1 FROM player_collection pc WHERE pc.uid = p_uid AND pc.collection_key = k));
  IF held + v_new > p_max_held THEN status := 'too_many'; held := held + v_new; RETURN NEXT; RETURN; END IF;
  held := NULL;
  -- In key order, so concurrent calls naming the same new keys wait on each other instead of deadlocking.
  INSERT INTO collection (key, type, unlock_method, properties)
    SELECT k, p_asset_type, p_asset_unlock_method, '{}'::jsonb FROM unnest(p_keys) AS k
     WHERE NOT EXISTS (SELECT 1 FROM collection c WHERE c.key = k) ORDER BY k
    ON CONFLICT (key) DO NOTHING;
  INSERT INTO player_collection (uid, collection_key)
    SELECT p_uid, k FROM unnest(p_keys) AS k ORDER BY k
    ON CONFLICT (uid, collection_key) DO NOTHING;
  RETURN NEXT;
END $function$
