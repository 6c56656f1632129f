import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * rhythmc_webhook_claim (src/webhooks/sql/rhythmc_webhook_claim.sql): the delivery worker's claim,
 * until now a statement sent from TypeScript, as a function whose plan cannot read the whole
 * backlog. The statement joined the webhooks before its ORDER BY … LIMIT, and on statistics that
 * said the outbox held few due rows (a backlog grown since the last ANALYZE, or a database without
 * autovacuum) PostgreSQL read every due row by a bitmap scan and sorted them to take 8: 18–23 ms
 * a claim with 10,000 due, against 0.06 ms in the due index's order (docs/benchmarks.md
 * "Webhooks"). The function reads the due index in order with the enabled webhooks' ids as a
 * filter, with bitmap scans and sorts off for its one statement, and its plan is kept per
 * connection (plpgsql), so a claim is not planned again each time. A new function: an expand step
 * (the previous release keeps sending its own statement). Written by hand.
 */
export class WebhookClaimFunction1795895000000 implements MigrationInterface {
  name = 'WebhookClaimFunction1795895000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
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
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION rhythmc_webhook_claim(integer, double precision)`);
  }
}
