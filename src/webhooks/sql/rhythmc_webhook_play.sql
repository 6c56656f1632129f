-- Trigger on play_record: the play.flagged and play.voided events.
CREATE OR REPLACE FUNCTION public.rhythmc_webhook_play()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
            DECLARE
              v_type text;
            BEGIN
              IF TG_OP = 'INSERT' OR (cardinality(OLD.flags) = 0 AND cardinality(NEW.flags) > 0) THEN
                IF cardinality(NEW.flags) = 0 THEN RETURN NULL; END IF;
                v_type := 'play.flagged';
              ELSIF OLD.voided_at IS NULL AND NEW.voided_at IS NOT NULL THEN
                v_type := 'play.voided';
              ELSE
                RETURN NULL;
              END IF;
              IF NOT rhythmc_webhook_wanted(v_type) THEN RETURN NULL; END IF;
              PERFORM rhythmc_webhook_enqueue(v_type, gen_random_uuid(), jsonb_build_object(
                'playId', NEW.id::text,
                'player', (SELECT jsonb_build_object('uid', p.uid, 'username', p.username) FROM player p WHERE p.uid = NEW.uid),
                'chart', jsonb_build_object('levelId', NEW.level_id, 'name', (SELECT c.name FROM chart c WHERE c.level_id = NEW.level_id)),
                'acc', NEW.acc, 'flags', to_jsonb(NEW.flags), 'server', jsonb_build_object('id', NEW.server_id, 'name', NEW.server_name),
                'reason', CASE WHEN v_type = 'play.voided' THEN to_jsonb(NEW.void_reason) ELSE 'null'::jsonb END));
              RETURN NULL;
            END
            $function$
