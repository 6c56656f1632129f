-- Trigger on server_session (ended): the server.offline event.
CREATE OR REPLACE FUNCTION public.rhythmc_webhook_server_ended()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
            BEGIN
              IF NOT rhythmc_webhook_wanted('server.offline') THEN RETURN NULL; END IF;
              PERFORM rhythmc_webhook_enqueue('server.offline', NEW.id, jsonb_build_object(
                'server', (SELECT jsonb_build_object('id', g.id, 'name', g.name) FROM game_server g WHERE g.id = NEW.server_id),
                'reason', NEW.end_reason, 'sessionId', NEW.id));
              RETURN NULL;
            END
            $function$
