-- Trigger on player_chart_best: the player.personal_best and chart.first_place events.
CREATE OR REPLACE FUNCTION public.rhythmc_webhook_best()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
            DECLARE
              v_pb boolean := rhythmc_webhook_wanted('player.personal_best');
              v_first boolean := rhythmc_webhook_wanted('chart.first_place');
              v_player jsonb;
              v_chart jsonb;
              v_top record;
              v_previous jsonb := NULL;
            BEGIN
              IF NOT (v_pb OR v_first) THEN RETURN NULL; END IF;
              IF TG_OP = 'UPDATE' AND NEW.record_id <= OLD.record_id THEN RETURN NULL; END IF;
              SELECT jsonb_build_object('uid', p.uid, 'username', p.username) INTO v_player FROM player p WHERE p.uid = NEW.uid;
              SELECT jsonb_build_object('levelId', NEW.level_id, 'name', c.name) INTO v_chart FROM chart c WHERE c.level_id = NEW.level_id;
              v_chart := coalesce(v_chart, jsonb_build_object('levelId', NEW.level_id, 'name', NULL));
              IF v_pb THEN
                PERFORM rhythmc_webhook_enqueue('player.personal_best', gen_random_uuid(), jsonb_build_object(
                  'player', v_player, 'chart', v_chart, 'acc', NEW.acc, 'rating', NEW.rating, 'playId', NEW.record_id::text,
                  'previousAcc', CASE WHEN TG_OP = 'UPDATE' THEN to_jsonb(OLD.acc) ELSE 'null'::jsonb END));
              END IF;
              IF v_first THEN
                SELECT b.uid, b.acc INTO v_top FROM player_chart_best b
                 WHERE b.level_id = NEW.level_id
                   AND NOT EXISTS (SELECT 1 FROM player_ban pb
                        WHERE pb.uid = b.uid AND pb.lifted_at IS NULL AND (pb.until IS NULL OR pb.until > now()))
                 ORDER BY b.acc DESC, b.first_time_ms ASC, b.uid ASC LIMIT 1;
                IF FOUND AND v_top.uid = NEW.uid THEN
                  SELECT jsonb_build_object('player', jsonb_build_object('uid', p.uid, 'username', p.username), 'acc', b.acc)
                    INTO v_previous
                    FROM player_chart_best b JOIN player p ON p.uid = b.uid
                   WHERE b.level_id = NEW.level_id AND b.uid <> NEW.uid
                     AND NOT EXISTS (SELECT 1 FROM player_ban pb
                          WHERE pb.uid = b.uid AND pb.lifted_at IS NULL AND (pb.until IS NULL OR pb.until > now()))
                   ORDER BY b.acc DESC, b.first_time_ms ASC, b.uid ASC LIMIT 1;
                  PERFORM rhythmc_webhook_enqueue('chart.first_place', gen_random_uuid(), jsonb_build_object(
                    'player', v_player, 'chart', v_chart, 'acc', NEW.acc, 'playId', NEW.record_id::text,
                    'previous', coalesce(v_previous, 'null'::jsonb)));
                END IF;
              END IF;
              RETURN NULL;
            END
            $function$
