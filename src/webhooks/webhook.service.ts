import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type { EntityManager } from 'typeorm';
import { BadRequestError, NotFoundError } from '../common/errors/app-error';
import { ListQuery, Page, toPage } from '../common/pagination/list-query';
import { formatLocalDateTime } from '../common/time';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import {
  CreatedWebhookResponse,
  CreateWebhookDto,
  RotatedWebhookSecretResponse,
  RotateWebhookSecretDto,
  UpdateWebhookDto,
  WebhookDeliveryResponse,
  WebhookList,
  WebhookResponse,
} from './dto/webhook.dto';
import type { WebhookDeliveryEntity } from './entities/webhook-delivery.entity';
import type { WebhookEntity } from './entities/webhook.entity';
import { parseAllowedNetworks, refusedAddress } from './webhook-address';
import type { WebhookEvent, WebhookFormat } from './webhook-events';
import { OutboxStats, WebhookRepository } from './webhook.repository';

export const DELIVERY_LIST = 'webhook-deliveries';
/** How long a rotated-out secret keeps signing when the request does not say. */
export const DEFAULT_SECRET_OVERLAP_SECONDS = 86_400;

const newSecret = () => `whsec_${randomBytes(32).toString('base64url')}`;

export interface DeliveryFilters {
  state: 'pending' | 'delivered' | 'failed';
}

/** Staff manage webhooks; other modules write events through `enqueue` inside their transaction. */
@Injectable()
export class WebhookService {
  constructor(
    private readonly webhooks: WebhookRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Writes an event for every enabled webhook that wants it, in the caller's transaction: it is
   * sent after the commit, and not at all when the transaction rolls back.
   */
  enqueue(
    type: WebhookEvent,
    eventId: string,
    payload: Record<string, unknown>,
    manager: EntityManager,
  ): Promise<void> {
    return this.webhooks.enqueue(type, eventId, payload, manager);
  }

  /** The outbox's backlog and the webhooks by state (the metrics, at scrape time). */
  outboxStats(): Promise<OutboxStats> {
    return this.webhooks.outboxStats();
  }

  async list(): Promise<WebhookList> {
    const [rows, counts] = await Promise.all([this.webhooks.listAll(), this.webhooks.countsByWebhook()]);
    return { items: rows.map((row) => toResponse(row, counts.get(row.id))) };
  }

  async create(body: CreateWebhookDto): Promise<CreatedWebhookResponse> {
    this.assertReachable(body.url);
    const secret = newSecret();
    const stored = await this.webhooks.insert({
      name: body.name,
      url: body.url,
      events: [...body.events].sort(),
      format: body.format ?? 'json',
      atpTop: body.atpTop ?? 10,
      secret,
    });
    return { ...toResponse(stored, undefined), secret };
  }

  async update(id: number, body: UpdateWebhookDto): Promise<WebhookResponse> {
    if (body.url !== undefined) this.assertReachable(body.url);
    const updated = await this.webhooks.update(id, {
      ...(body.name !== undefined && { name: body.name }),
      ...(body.url !== undefined && { url: body.url }),
      ...(body.events !== undefined && { events: [...body.events].sort() }),
      ...(body.format !== undefined && { format: body.format }),
      ...(body.atpTop !== undefined && { atpTop: body.atpTop }),
      ...(body.enabled !== undefined && { enabled: body.enabled }),
    });
    if (!updated) throw new NotFoundError(`No webhook with id ${id}`);
    const counts = await this.webhooks.countsByWebhook();
    return toResponse(updated, counts.get(id));
  }

  /**
   * A new secret, shown in this answer only; the replaced one keeps signing beside it for
   * `overlapSeconds` (docs/decisions.md "Webhooks").
   */
  async rotateSecret(id: number, body: RotateWebhookSecretDto): Promise<RotatedWebhookSecretResponse> {
    const secret = newSecret();
    const rotated = await this.webhooks.rotateSecret(id, secret, body.overlapSeconds ?? DEFAULT_SECRET_OVERLAP_SECONDS);
    if (!rotated) throw new NotFoundError(`No webhook with id ${id}`);
    const counts = await this.webhooks.countsByWebhook();
    return { ...toResponse(rotated, counts.get(id)), secret };
  }

  async remove(id: number): Promise<void> {
    if (!(await this.webhooks.remove(id))) throw new NotFoundError(`No webhook with id ${id}`);
  }

  async deliveries(id: number, query: ListQuery<DeliveryFilters>): Promise<Page<WebhookDeliveryResponse>> {
    if (!(await this.webhooks.findById(id))) throw new NotFoundError(`No webhook with id ${id}`);
    const rows = await this.webhooks.listDeliveries(id, query.filters, query.after, query.limit + 1);
    return toPage(rows, query, DELIVERY_LIST, (row) => row.id, toDeliveryResponse);
  }

  /** An IP literal the service would refuse is a 400 now rather than a failed delivery later. */
  private assertReachable(url: string): void {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    if (!isIP(host)) return;
    const refused = refusedAddress(host, { allowed: parseAllowedNetworks(this.config.webhookAllowedNetworks) });
    if (refused) throw BadRequestError.field('url', refused, 'label');
  }
}

const localOrNull = (date: Date | null) => (date ? formatLocalDateTime(date) : null);

function toResponse(row: WebhookEntity, counts: Record<string, number> | undefined): WebhookResponse {
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    events: row.events as WebhookEvent[],
    format: row.format as WebhookFormat,
    atpTop: row.atpTop,
    enabled: row.enabled,
    disabledReason: row.disabledReason,
    failingSince: localOrNull(row.failingSince),
    createdAt: formatLocalDateTime(row.createdAt),
    previousSecretExpiresAt:
      row.previousSecretExpiresAt !== null && row.previousSecretExpiresAt.getTime() > Date.now()
        ? formatLocalDateTime(row.previousSecretExpiresAt)
        : null,
    pending: counts?.pending ?? 0,
    failed: counts?.failed ?? 0,
  };
}

function toDeliveryResponse(row: WebhookDeliveryEntity): WebhookDeliveryResponse {
  return {
    id: row.id,
    eventId: row.eventId,
    type: row.eventType,
    state: row.state,
    attempts: row.attempts,
    lastStatus: row.lastStatus,
    lastError: row.lastError,
    createdAt: formatLocalDateTime(row.createdAt),
    nextAttemptAt: row.state === 'pending' ? formatLocalDateTime(row.nextAttemptAt) : null,
    deliveredAt: localOrNull(row.deliveredAt),
    data: row.payload,
  };
}
