-- Trigger on player_rating: the player.atp_top event (a player entering a webhook's top N).
CREATE OR REPLACE FUNCTION public.rhythmc_webhook_atp()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
            DECLARE
              v_max integer;
              v_after integer;
              v_before integer;
              v_event uuid := gen_random_uuid();
              v_payload jsonb;
              w record;
            BEGIN
              IF NEW.atp <= coalesce(OLD.atp, 0) THEN RETURN NULL; END IF;
              SELECT max(x.atp_top) INTO v_max FROM webhook x WHERE x.enabled AND 'player.atp_top' = ANY (x.events);
              IF v_max IS NULL THEN RETURN NULL; END IF;
              SELECT count(*) + 1 INTO v_after FROM (
                SELECT 1 FROM player_rating r
                 WHERE (r.atp > NEW.atp OR (r.atp = NEW.atp AND r.uid < NEW.uid)) AND r.uid <> NEW.uid
                   AND NOT EXISTS (SELECT 1 FROM player_ban pb
                        WHERE pb.uid = r.uid AND pb.lifted_at IS NULL AND (pb.until IS NULL OR pb.until > now()))
                 LIMIT v_max) AS above;
              IF v_after > v_max THEN RETURN NULL; END IF;
              SELECT count(*) + 1 INTO v_before FROM (
                SELECT 1 FROM player_rating r
                 WHERE (r.atp > OLD.atp OR (r.atp = OLD.atp AND r.uid < OLD.uid)) AND r.uid <> NEW.uid
                   AND NOT EXISTS (SELECT 1 FROM player_ban pb
                        WHERE pb.uid = r.uid AND pb.lifted_at IS NULL AND (pb.until IS NULL OR pb.until > now()))
                 LIMIT v_max + 1) AS above;
              IF OLD.atp = 0 THEN v_before := v_max + 1; END IF;
              SELECT jsonb_build_object('player', jsonb_build_object('uid', p.uid, 'username', p.username),
                       'atp', NEW.atp, 'rank', v_after, 'previousRank', CASE WHEN OLD.atp = 0 THEN NULL ELSE v_before END)
                INTO v_payload FROM player p WHERE p.uid = NEW.uid;
              FOR w IN SELECT x.id, x.atp_top FROM webhook x
                        WHERE x.enabled AND 'player.atp_top' = ANY (x.events) AND v_after <= x.atp_top AND v_before > x.atp_top LOOP
                INSERT INTO webhook_delivery (webhook_id, event_id, event_type, payload)
                VALUES (w.id, v_event, 'player.atp_top', v_payload || jsonb_build_object('top', w.atp_top))
                ON CONFLICT (webhook_id, event_id) DO NOTHING;
              END LOOP;
              RETURN NULL;
            END
            $function$
