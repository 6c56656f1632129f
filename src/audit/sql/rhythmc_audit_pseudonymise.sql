-- An erased player's audit rows under its pseudonym (called by privacy's PlayerDataRepository).
-- SECURITY DEFINER (it runs as the schema's owner): only pg_catalog is searched, and its two tables are named with their schema.
CREATE OR REPLACE FUNCTION public.rhythmc_audit_pseudonymise(p_uid bigint, p_pseudonym text)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
            DECLARE
              v_count integer;
            BEGIN
              IF NOT EXISTS (SELECT 1 FROM public.player_erasure e WHERE e.uid = p_uid AND e.pseudonym = p_pseudonym) THEN
                RAISE EXCEPTION 'player % has no erasure tombstone named %', p_uid, p_pseudonym;
              END IF;
              PERFORM set_config('rhythmc.audit_pseudonymise', 'on', true);
              -- What staff did to the player stays, under the pseudonym; the free texts of the
              -- summary (names, ban and void reasons) go.
              UPDATE public.admin_audit a
                 SET target = CASE WHEN a.target LIKE 'player:%' THEN 'player:' || p_pseudonym ELSE a.target END,
                     summary = (SELECT COALESCE(jsonb_object_agg(e.key, e.value), '{}'::jsonb)
                                  FROM jsonb_each(a.summary) e
                                 WHERE e.key IN ('until', 'banstate', 'levelId', 'review'))
                               || jsonb_build_object('player', p_pseudonym)
               WHERE a.target = 'player:' || p_uid::text
                  OR (a.target LIKE 'play:%' AND a.summary ->> 'uid' = p_uid::text);
              GET DIAGNOSTICS v_count = ROW_COUNT;
              PERFORM set_config('rhythmc.audit_pseudonymise', 'off', true);
              RETURN v_count;
            END
            $function$
