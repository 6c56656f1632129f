import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * rhythmc_webhook_claim (src/webhooks/sql/rhythmc_webhook_claim.sql) takes its rows webhook by
 * webhook, each at most its room (a cap per webhook less the caller's attempts in flight for it):
 * the claim in due order let one slow receiver take every delivery slot of an instance (a 30 s
 * receiver made a healthy one's deliveries wait up to 19.7 s; docs/decisions.md "Webhooks: a
 * share per webhook"). The due index becomes (webhook_id, next_attempt_at) WHERE pending, so each
 * webhook's due rows are read in order without walking another's backlog.
 *
 * Rolling upgrade: the new arguments have defaults (no cap), and the old signature is dropped in
 * this migration (beside one with defaults the previous release's two-argument call would be
 * ambiguous), so that call resolves to this function and keeps its answers. The index is rebuilt
 * without CONCURRENTLY (migrations run in a transaction): it holds only pending rows, but the
 * build reads the whole table while outbox writes (uploads that raise events) wait. Written by hand.
 */
export class WebhookClaimPerWebhook1795896000000 implements MigrationInterface {
  name = 'WebhookClaimPerWebhook1795896000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."IDX_webhook_delivery_due"`);
    await queryRunner.query(
      `CREATE INDEX "IDX_webhook_delivery_due" ON "webhook_delivery" ("webhook_id", "next_attempt_at") WHERE state = 'pending'`,
    );
    await queryRunner.query(`DROP FUNCTION public.rhythmc_webhook_claim(integer, double precision)`);
    await queryRunner.query(`
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
`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `DROP FUNCTION public.rhythmc_webhook_claim(integer, double precision, integer, integer[])`,
    );
    await queryRunner.query(`
CREATE OR REPLACE FUNCTION public.rhythmc_webhook_claim(p_limit integer, p_lease_ms double precision)
 RETURNS TABLE(id uuid, "webhookId" integer, "eventId" uuid, "eventType" text, payload jsonb, attempts integer, "createdAt" timestamp with time zone, url text, secret text, format text, "previousSecret" text)
 LANGUAGE plpgsql
 SET enable_bitmapscan TO 'off'
 SET enable_sort TO 'off'
AS $function$
#variable_conflict use_column
BEGIN
  -- The due deliveries in the order of the due index, read until p_limit are locked: a bitmap scan
  -- and a sort would read every due row first (the whole backlog), which the planner picks when
  -- the table's statistics say it holds few (a backlog grown since the last ANALYZE).
  RETURN QUERY
    WITH due AS (
      SELECT d.id FROM webhook_delivery d
       WHERE d.state = 'pending' AND d.next_attempt_at <= now()
         AND d.webhook_id = ANY (ARRAY(SELECT w.id FROM webhook w WHERE w.enabled))
       ORDER BY d.next_attempt_at LIMIT p_limit
       FOR UPDATE SKIP LOCKED
    ), claimed AS (
      UPDATE webhook_delivery d SET attempts = d.attempts + 1, next_attempt_at = now() + make_interval(secs => p_lease_ms / 1000)
        FROM due WHERE d.id = due.id
      RETURNING d.id, d.webhook_id, d.event_id, d.event_type, d.payload, d.attempts, d.created_at
    )
    SELECT c.id, c.webhook_id, c.event_id, c.event_type::text, c.payload, c.attempts, c.created_at,
           w.url::text, w.secret::text, w.format::text,
           CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret::text END
      FROM claimed c JOIN webhook w ON w.id = c.webhook_id;
END $function$
`);
    await queryRunner.query(`DROP INDEX "public"."IDX_webhook_delivery_due"`);
    await queryRunner.query(
      `CREATE INDEX "IDX_webhook_delivery_due" ON "webhook_delivery" ("next_attempt_at") WHERE state = 'pending'`,
    );
  }
}
