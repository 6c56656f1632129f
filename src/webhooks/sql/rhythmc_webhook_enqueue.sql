-- One outbox row per enabled webhook that wants the event (triggers below, WebhookRepository).
CREATE OR REPLACE FUNCTION public.rhythmc_webhook_enqueue(p_type text, p_event_id uuid, p_payload jsonb)
 RETURNS void
 LANGUAGE sql
AS $function$
              INSERT INTO webhook_delivery (webhook_id, event_id, event_type, payload)
              SELECT w.id, p_event_id, p_type, p_payload FROM webhook w WHERE w.enabled AND p_type = ANY (w.events)
              ON CONFLICT (webhook_id, event_id) DO NOTHING
            $function$
