-- Whether an enabled webhook wants the event type: the triggers' early exit.
CREATE OR REPLACE FUNCTION public.rhythmc_webhook_wanted(p_type text)
 RETURNS boolean
 LANGUAGE sql
 STABLE
AS $function$
              SELECT EXISTS (SELECT 1 FROM webhook w WHERE w.enabled AND p_type = ANY (w.events))
            $function$
