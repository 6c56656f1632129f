import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * rhythmc_webhook_claim (src/webhooks/sql/rhythmc_webhook_claim.sql) reads each webhook's due
 * rows up to its room (a cap per webhook less the caller's attempts in flight for it) and claims
 * the ones due longest among them. The claim in due order, whatever the webhook, let one slow receiver take every delivery slot of an instance (a 30 s
 * receiver made a healthy one's deliveries wait up to 19.7 s; docs/decisions.md "Webhooks: a
 * share per webhook"). The due index becomes (webhook_id, next_attempt_at) WHERE pending, so each
 * webhook's due rows are read in order without walking another's backlog. `jit` is off for the
 * function: the sorts left (of the few rows locked) get a disabled cost from enable_sort off,
 * which crossed jit_above_cost and compiled the statement on every call (~160 ms a claim; the
 * first bench of this change drained nothing).
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
