import { Pool, QueryResult, QueryResultRow } from 'pg';
import { driverFailureOf } from '../common/errors/database-failure';
import type { ClaimedDelivery, ClaimRoom, DeliveredOutcome, DeliveryStore } from './webhook-delivery-loop';

/**
 * The outbox's claim and record statements on a pg pool of the delivery worker thread (not the
 * app's TypeORM data source: the worker runs no Nest and no TypeORM). One statement each. A
 * connection whose write was refused as read-only is closed, as the app's pool does
 * (database-options.ts): a session keeps the read-only default it started with, so a kept one
 * would go on refusing after the database takes writes again (docs/decisions.md "Readiness").
 * So is one whose query failed as unreachable: after pg's `Query read timeout` the client still
 * waits for the answer of the query it sent, and every later query on it would wait behind it.
 */
export class PgDeliveryStore implements DeliveryStore {
  constructor(private readonly pool: Pool) {}

  private async query<R extends QueryResultRow>(text: string, values: unknown[]): Promise<QueryResult<R>> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      return await client.query<R>(text, values);
    } catch (error) {
      const failure = driverFailureOf(error);
      if (failure === 'read-only' || failure === 'unreachable') broken = error as Error;
      throw error;
    } finally {
      client.release(broken);
    }
  }

  /**
   * Takes up to `limit` due deliveries of enabled webhooks for one attempt: counts the attempt and
   * moves the next one `leaseMs` ahead, so that an instance that dies mid-attempt leaves the row
   * to be taken again later, and no other instance takes it meanwhile (SKIP LOCKED: instances
   * claiming together take different rows).
   */
  async claimDue(limit: number, leaseMs: number, room?: ClaimRoom): Promise<ClaimedDelivery[]> {
    // rhythmc_webhook_claim (src/webhooks/sql): webhook by webhook, each one's due index read in
    // order up to its room, whatever the statistics say.
    const result = await this.query<ClaimedDelivery>(
      `SELECT id, "webhookId", "eventId", "eventType", payload, attempts, "createdAt", url, secret, format, "previousSecret"
         FROM rhythmc_webhook_claim($1, $2, $3, $4::int[])`,
      [limit, leaseMs, room?.perWebhook ?? null, room?.busy ?? []],
    );
    return result.rows;
  }

  /**
   * Attempts that succeeded: each delivery is done and its webhook's failure streak ends. One
   * statement for the whole group (the loop's recorder hands over every success that finished
   * while the previous statement ran), both updates or neither.
   */
  async markDelivered(delivered: readonly DeliveredOutcome[]): Promise<void> {
    await this.query(
      `WITH done AS (
         UPDATE webhook_delivery d SET state = 'delivered', delivered_at = now(), last_status = o.status, last_error = NULL
           FROM unnest($1::uuid[], $2::int[]) AS o(id, status)
          WHERE d.id = o.id RETURNING d.webhook_id
       )
       UPDATE webhook w SET failing_since = NULL
        WHERE w.id IN (SELECT webhook_id FROM done) AND w.failing_since IS NOT NULL`,
      [delivered.map((outcome) => outcome.id), delivered.map((outcome) => outcome.status)],
    );
  }

  /**
   * The attempt failed: the next one at `retryInMs`, or none (null: state failed). Starts the
   * webhook's failure streak when none runs (one statement: both updates or neither). Returns when
   * that streak started.
   */
  async markFailed(
    id: string,
    webhookId: number,
    failure: { status: number | null; error: string },
    retryInMs: number | null,
  ): Promise<Date> {
    const result = await this.query<{ failing_since: Date }>(
      `WITH failed AS (
         UPDATE webhook_delivery SET last_status = $2, last_error = $3,
                state = CASE WHEN $4::double precision IS NULL THEN 'failed' ELSE 'pending' END,
                next_attempt_at = CASE WHEN $4::double precision IS NULL THEN next_attempt_at
                                       ELSE now() + make_interval(secs => $4::double precision / 1000) END
          WHERE id = $1 RETURNING id
       ), marked AS (
         UPDATE webhook SET failing_since = coalesce(failing_since, now()) WHERE id = $5 RETURNING failing_since
       )
       SELECT failing_since FROM marked`,
      [id, failure.status, failure.error.slice(0, 256), retryInMs, webhookId],
    );
    return result.rows[0]?.failing_since ?? new Date();
  }
}
