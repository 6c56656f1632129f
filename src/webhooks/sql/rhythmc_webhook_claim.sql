-- The outbox's claim (PgDeliveryStore.claimDue, the delivery worker): up to p_limit due deliveries of
-- enabled webhooks, each attempt counted and leased p_lease_ms ahead; at most p_per_webhook of one
-- webhook counting its attempts in flight (p_busy), the longest due first.
CREATE OR REPLACE FUNCTION public.rhythmc_webhook_claim(p_limit integer, p_lease_ms double precision, p_per_webhook integer DEFAULT NULL::integer, p_busy integer[] DEFAULT '{}'::integer[])
 RETURNS TABLE(id uuid, "webhookId" integer, "eventId" uuid, "eventType" text, payload jsonb, attempts integer, "createdAt" timestamp with time zone, url text, secret text, format text, "previousSecret" text)
 LANGUAGE plpgsql
 SET enable_bitmapscan TO 'off'
 SET enable_sort TO 'off'
 SET jit TO 'off'
AS $function$
#variable_conflict use_column
BEGIN
  -- Each enabled webhook's due deliveries in the order of the due index (webhook_id,
  -- next_attempt_at), read and locked up to its room: p_per_webhook less the caller's attempts in
  -- flight for it (p_busy holds a webhook id per attempt; p_per_webhook NULL, the previous
  -- release's call, sets none), at most p_limit; of those, the p_limit due longest are claimed
  -- (the rest stay locked only until the claim commits), answered in their due order (the order the
  -- worker starts them in: a ban before its unban). A bitmap scan and a sort of a webhook's rows
  -- would read its whole backlog, which the planner picks when the table's statistics say it holds
  -- few; the sorts left are of the few rows locked. jit off: the sorts' disabled cost would
  -- otherwise compile the statement on every call.
  RETURN QUERY
    WITH room AS (
      SELECT w.id, LEAST(p_limit, p_per_webhook - (SELECT count(*) FROM unnest(p_busy) b WHERE b = w.id)::int) AS room
        FROM webhook w WHERE w.enabled
    ), due AS (
      SELECT c.id, c.next_attempt_at FROM room r CROSS JOIN LATERAL (
        SELECT d.id, d.next_attempt_at FROM webhook_delivery d
         WHERE d.webhook_id = r.id AND d.state = 'pending' AND d.next_attempt_at <= now()
         ORDER BY d.next_attempt_at LIMIT r.room
         FOR UPDATE SKIP LOCKED
      ) c
      WHERE r.room > 0
      ORDER BY c.next_attempt_at LIMIT p_limit
    ), claimed AS (
      UPDATE webhook_delivery d SET attempts = d.attempts + 1, next_attempt_at = now() + make_interval(secs => p_lease_ms / 1000)
        FROM due WHERE d.id = due.id
      RETURNING d.id, d.webhook_id, d.event_id, d.event_type, d.payload, d.attempts, d.created_at, due.next_attempt_at AS due_at
    )
    SELECT c.id, c.webhook_id, c.event_id, c.event_type::text, c.payload, c.attempts, c.created_at,
           w.url::text, w.secret::text, w.format::text,
           CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret::text END
      FROM claimed c JOIN webhook w ON w.id = c.webhook_id
     ORDER BY c.due_at;
END $function$
