import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { WebhookDeliveryEntity } from './entities/webhook-delivery.entity';
import { WebhookEntity } from './entities/webhook.entity';

export interface OutboxStats {
  pending: number;
  due: number;
  waiting: number;
  oldestPendingSeconds: number;
  oldestDueSeconds: number;
  enabled: number;
  paused: number;
  disabled: number;
}

export type WebhookChanges = Partial<Pick<WebhookEntity, 'name' | 'url' | 'events' | 'format' | 'atpTop' | 'enabled'>>;

/** The webhooks and their outbox (webhook_delivery). */
@Injectable()
export class WebhookRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get webhooks() {
    return this.dataSource.getRepository(WebhookEntity);
  }

  insert(
    webhook: Pick<WebhookEntity, 'name' | 'url' | 'events' | 'format' | 'atpTop' | 'secret'>,
  ): Promise<WebhookEntity> {
    return this.webhooks.save(this.webhooks.create({ ...webhook, enabled: true }));
  }

  findById(id: number): Promise<WebhookEntity | null> {
    return this.webhooks.findOne({ where: { id } });
  }

  listAll(): Promise<WebhookEntity[]> {
    return this.webhooks.find({ order: { id: 'ASC' } });
  }

  /** Applies the changes; turning a webhook on clears why it was off and its failure streak. */
  async update(id: number, changes: WebhookChanges): Promise<WebhookEntity | null> {
    const set: Partial<WebhookEntity> = { ...changes };
    if (changes.enabled === true) Object.assign(set, { disabledReason: null, failingSince: null });
    if (Object.keys(set).length > 0) await this.webhooks.update({ id }, set);
    return this.findById(id);
  }

  /**
   * Replaces the secret (one statement: the old value is read where it is replaced). With an
   * overlap the replaced secret keeps signing until now + overlap; without one it is dropped, and
   * so is any older secret still in its overlap (only the last replaced one is kept). Null when no
   * webhook has this id.
   */
  async rotateSecret(id: number, secret: string, overlapSeconds: number): Promise<WebhookEntity | null> {
    const rows = await this.dataSource.query<Array<{ id: number }>>(
      `WITH rotated AS (
         UPDATE webhook SET
           previous_secret = CASE WHEN $3::int > 0 THEN secret END,
           previous_secret_expires_at = CASE WHEN $3::int > 0 THEN now() + make_interval(secs => $3::int) END,
           secret = $2
          WHERE id = $1 RETURNING id
       )
       SELECT id FROM rotated`,
      [id, secret, overlapSeconds],
    );
    return rows.length === 0 ? null : this.findById(id);
  }

  async remove(id: number): Promise<boolean> {
    const result = await this.webhooks.delete({ id });
    return (result.affected ?? 0) > 0;
  }

  /** Writes an event for every enabled webhook that wants it, inside the caller's transaction. */
  async enqueue(
    type: string,
    eventId: string,
    payload: Record<string, unknown>,
    manager: EntityManager,
  ): Promise<void> {
    await manager.query('SELECT rhythmc_webhook_enqueue($1, $2, $3)', [type, eventId, payload]);
  }

  /**
   * Turns off a webhook failing since before `before`; true when this call did (an instance
   * racing another one turns it off once).
   */
  async disableFailing(webhookId: number, before: Date, reason: string, manager: EntityManager): Promise<boolean> {
    const rows = await manager.query<unknown[]>(
      `WITH turned AS (UPDATE webhook SET enabled = false, disabled_reason = $3
        WHERE id = $1 AND enabled AND failing_since IS NOT NULL AND failing_since <= $2 RETURNING id)
       SELECT id FROM turned`,
      [webhookId, before, reason],
    );
    return rows.length > 0;
  }

  /**
   * Server sessions whose token expired within the last `windowMs` without the session being
   * ended (the server stopped refreshing): `server.offline`, under the session's id as the event
   * id, so the trigger of a later logout and a second sweep add nothing.
   */
  async sweepExpiredServerSessions(windowMs: number): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO webhook_delivery (webhook_id, event_id, event_type, payload)
       SELECT w.id, s.id, 'server.offline',
              jsonb_build_object('server', jsonb_build_object('id', g.id, 'name', g.name), 'reason', 'expired', 'sessionId', s.id)
         FROM server_session s JOIN game_server g ON g.id = s.server_id
         JOIN webhook w ON w.enabled AND 'server.offline' = ANY (w.events) AND w.created_at <= s.token_expires_at
        WHERE s.ended_at IS NULL AND s.token_expires_at <= now()
          AND s.token_expires_at > now() - make_interval(secs => $1::double precision / 1000)
       ON CONFLICT (webhook_id, event_id) DO NOTHING`,
      [windowMs],
    );
  }

  /** Forgets the replaced secrets whose overlap has ended: they sign nothing any more, so none is kept. */
  async forgetExpiredSecrets(): Promise<void> {
    await this.dataSource.query(
      `UPDATE webhook SET previous_secret = NULL, previous_secret_expires_at = NULL
        WHERE previous_secret IS NOT NULL AND previous_secret_expires_at <= now()`,
    );
  }

  /** A webhook's deliveries, newest first, after the delivery `after` (a cursor). */
  listDeliveries(
    webhookId: number,
    filters: { state?: string },
    after: string | undefined,
    limit: number,
  ): Promise<WebhookDeliveryEntity[]> {
    const query = this.dataSource
      .getRepository(WebhookDeliveryEntity)
      .createQueryBuilder('d')
      .where('d.webhook_id = :webhookId', { webhookId })
      .orderBy('d.created_at', 'DESC')
      .addOrderBy('d.id', 'DESC')
      .limit(limit);
    if (filters.state !== undefined) query.andWhere('d.state = :state', { state: filters.state });
    if (after !== undefined)
      query.andWhere('(d.created_at, d.id) < (SELECT a.created_at, a.id FROM webhook_delivery a WHERE a.id = :after)', {
        after,
      });
    return query.getMany();
  }

  /**
   * The outbox and the webhooks at a glance, for the metrics (one statement, the whole deployment):
   * pending deliveries of webhooks that are on, how many of them are due now, the age of the
   * oldest one's event and how late the most overdue one is (0 without any); pending deliveries of
   * webhooks that are off (they wait); webhooks on, paused by staff, turned off by the service.
   */
  async outboxStats(): Promise<OutboxStats> {
    const [row] = await this.dataSource.query<Array<Record<keyof OutboxStats, string | number>>>(
      `SELECT o.pending, o.due, o.waiting, o.oldest_pending AS "oldestPendingSeconds", o.oldest_due AS "oldestDueSeconds",
              h.enabled, h.paused, h.disabled
         FROM (SELECT count(*) FILTER (WHERE w.enabled) AS pending,
                      count(*) FILTER (WHERE w.enabled AND d.next_attempt_at <= now()) AS due,
                      count(*) FILTER (WHERE NOT w.enabled) AS waiting,
                      coalesce(extract(epoch FROM now() - min(d.created_at) FILTER (WHERE w.enabled)), 0) AS oldest_pending,
                      coalesce(extract(epoch FROM now() - min(d.next_attempt_at)
                                 FILTER (WHERE w.enabled AND d.next_attempt_at <= now())), 0) AS oldest_due
                 FROM webhook_delivery d JOIN webhook w ON w.id = d.webhook_id
                WHERE d.state = 'pending') o,
              (SELECT count(*) FILTER (WHERE enabled) AS enabled,
                      count(*) FILTER (WHERE NOT enabled AND disabled_reason IS NULL) AS paused,
                      count(*) FILTER (WHERE NOT enabled AND disabled_reason IS NOT NULL) AS disabled
                 FROM webhook) h`,
    );
    return {
      pending: Number(row.pending),
      due: Number(row.due),
      waiting: Number(row.waiting),
      oldestPendingSeconds: Number(row.oldestPendingSeconds),
      oldestDueSeconds: Number(row.oldestDueSeconds),
      enabled: Number(row.enabled),
      paused: Number(row.paused),
      disabled: Number(row.disabled),
    };
  }

  /** Deliveries of every webhook by state (for the metrics and the list). */
  async countsByWebhook(): Promise<Map<number, Record<string, number>>> {
    const rows = await this.dataSource.query<Array<{ webhook_id: number; state: string; n: string }>>(
      'SELECT webhook_id, state, count(*) AS n FROM webhook_delivery GROUP BY webhook_id, state',
    );
    const counts = new Map<number, Record<string, number>>();
    for (const row of rows) counts.set(row.webhook_id, { ...counts.get(row.webhook_id), [row.state]: Number(row.n) });
    return counts;
  }
}
