-- The outbox's claim (PgDeliveryStore.claimDue, the delivery worker): up to p_limit due deliveries of
-- enabled webhooks, each attempt counted and leased p_lease_ms ahead; webhook by webhook (the
-- longest-waiting first), each at most p_per_webhook less its attempts in flight (p_busy).
CREATE OR REPLACE FUNCTION public.rhythmc_webhook_claim(p_limit integer, p_lease_ms double precision, p_per_webhook integer DEFAULT NULL::integer, p_busy integer[] DEFAULT '{}'::integer[])
 RETURNS TABLE(id uuid, "webhookId" integer, "eventId" uuid, "eventType" text, payload jsonb, attempts integer, "createdAt" timestamp with time zone, url text, secret text, format text, "previousSecret" text)
 LANGUAGE plpgsql
 SET enable_bitmapscan TO 'off'
 SET enable_sort TO 'off'
AS $function$
#variable_conflict use_column
DECLARE
  v_left integer := p_limit;
  v_room integer;
  v_taken integer;
  v_hook record;
BEGIN
  -- Webhook by webhook, the one whose oldest due delivery has waited longest first (one entry of
  -- the due index (webhook_id, next_attempt_at) each); from each, its due deliveries in that
  -- index's order until p_limit are locked, at most its room: p_per_webhook less the caller's
  -- attempts in flight for it (p_busy holds a webhook id per attempt). p_per_webhook NULL (the
  -- previous release's call) sets no cap. A bitmap scan and a sort would read every due row first
  -- (the whole backlog), which the planner picks when the table's statistics say it holds few.
  FOR v_hook IN
    SELECT w.id AS webhook_id, w.url::text AS url, w.secret::text AS secret, w.format::text AS format,
           CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret::text END AS previous_secret
      FROM webhook w
      CROSS JOIN LATERAL (
        SELECT d.next_attempt_at FROM webhook_delivery d
         WHERE d.webhook_id = w.id AND d.state = 'pending' AND d.next_attempt_at <= now()
         ORDER BY d.next_attempt_at LIMIT 1
      ) oldest
     WHERE w.enabled
     ORDER BY oldest.next_attempt_at
  LOOP
    EXIT WHEN v_left <= 0;
    v_room := LEAST(v_left, p_per_webhook - (SELECT count(*) FROM unnest(p_busy) b WHERE b = v_hook.webhook_id)::int);
    CONTINUE WHEN v_room <= 0;
    RETURN QUERY
      WITH due AS (
        SELECT d.id FROM webhook_delivery d
         WHERE d.webhook_id = v_hook.webhook_id AND d.state = 'pending' AND d.next_attempt_at <= now()
         ORDER BY d.next_attempt_at LIMIT v_room
         FOR UPDATE SKIP LOCKED
      ), claimed AS (
        UPDATE webhook_delivery d SET attempts = d.attempts + 1, next_attempt_at = now() + make_interval(secs => p_lease_ms / 1000)
          FROM due WHERE d.id = due.id
        RETURNING d.id, d.event_id, d.event_type, d.payload, d.attempts, d.created_at
      )
      SELECT c.id, v_hook.webhook_id, c.event_id, c.event_type::text, c.payload, c.attempts, c.created_at,
             v_hook.url, v_hook.secret, v_hook.format, v_hook.previous_secret
        FROM claimed c;
    GET DIAGNOSTICS v_taken = ROW_COUNT;
    v_left := v_left - v_taken;
  END LOOP;
END $function$
