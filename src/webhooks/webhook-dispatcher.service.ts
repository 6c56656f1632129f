import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { AuditService } from '../audit/audit.service';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { TransactionService } from '../database/transaction.service';
import { AddressPolicy, parseAllowedNetworks } from './webhook-address';
import { toDiscordMessage } from './webhook-discord';
import type { DeliveryBody } from './webhook-events';
import { ClaimedDelivery, WebhookRepository } from './webhook.repository';
import { sendDelivery, SendOutcome, SendResult } from './webhook-sender';
import {
  DELIVERY_HEADER,
  EVENT_HEADER,
  SIGNATURE_HEADER,
  signatureHeader,
  TIMESTAMP_HEADER,
} from './webhook-signature';

/** The longest wait between two attempts of one delivery. */
const MAX_RETRY_DELAY_MS = 3_600_000;
/** Expired server sessions are looked for this often, over this window. */
const SWEEP_INTERVAL_MS = 30_000;
const SWEEP_WINDOW_MS = 3_600_000;
/** How long a stopping instance waits for its attempts in flight (their rows are taken again later otherwise). */
const STOP_WAIT_MS = 2_000;

/** The delay before attempt `attempts + 1`: doubling from the base, capped at an hour, ±20 % jitter. */
export function retryDelayMs(attempts: number, baseMs: number, random = Math.random): number {
  const delay = Math.min(baseMs * 2 ** Math.min(attempts - 1, 30), MAX_RETRY_DELAY_MS);
  return Math.round(delay * (0.8 + 0.4 * random()));
}

/** The bytes sent for a delivery: the JSON body, or the Discord message built from it. */
export function deliveryBodyOf(
  delivery: Pick<ClaimedDelivery, 'id' | 'eventId' | 'eventType' | 'payload' | 'createdAt' | 'format'>,
): string {
  const body: DeliveryBody = {
    id: delivery.id,
    eventId: delivery.eventId,
    type: delivery.eventType,
    createdAt: new Date(delivery.createdAt).toISOString(),
    data: delivery.payload,
  };
  return JSON.stringify(delivery.format === 'discord' ? toDiscordMessage(body) : body);
}

/**
 * Sends what the outbox holds (docs/decisions.md "Webhooks"). Every instance polls every
 * WEBHOOK_POLL_MS for due deliveries and claims at most what its WEBHOOK_CONCURRENCY leaves free
 * (another instance claiming together takes other rows); each attempt is signed afresh (a new
 * timestamp, the same delivery id). A failure is retried with a doubling delay until
 * WEBHOOK_RETRY_FOR_SECONDS after the event; a webhook failing for WEBHOOK_DISABLE_AFTER_SECONDS is
 * turned off, with an audit row and a warning. Nothing here runs inside a request: an upload or a
 * login only writes rows.
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Webhooks');
  private readonly policy: AddressPolicy;
  private pollTimer: NodeJS.Timeout | null = null;
  private sweepTimer: NodeJS.Timeout | null = null;
  private claiming = false;
  /** The last claim took all it could: more may be due, so each finished attempt claims again at once. */
  private backlog = false;
  private stopped = false;
  private readonly inFlight = new Set<Promise<void>>();
  /**
   * What this instance did since it started (read by the metrics at scrape time): attempts by how
   * they ended, deliveries finished (delivered, or given up after the retry window), webhooks it
   * turned off.
   */
  readonly counts = {
    attempts: new Map<SendOutcome, number>(),
    delivered: 0,
    givenUp: 0,
    disabled: 0,
  };
  /** Told the seconds from each delivered event's creation to its delivery (the metrics' histogram). */
  private observeDelivered: (seconds: number) => void = () => undefined;

  constructor(
    private readonly webhooks: WebhookRepository,
    private readonly audit: AuditService,
    private readonly tx: TransactionService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.policy = { allowed: parseAllowedNetworks(config.webhookAllowedNetworks) };
  }

  observeDeliveredWith(observe: (seconds: number) => void): void {
    this.observeDelivered = observe;
  }

  onApplicationBootstrap(): void {
    this.pollTimer = setInterval(() => void this.poll(), this.config.webhookPollMs);
    this.pollTimer.unref();
    this.sweepTimer = setInterval(() => void this.sweep(), SWEEP_INTERVAL_MS);
    this.sweepTimer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.pollTimer) clearInterval(this.pollTimer);
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(this.inFlight),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_WAIT_MS))),
    ]);
    clearTimeout(timer);
  }

  /** Claims due deliveries up to the free concurrency and starts their attempts. */
  async poll(): Promise<void> {
    if (this.claiming || this.stopped) return;
    const free = this.config.webhookConcurrency - this.inFlight.size;
    if (free <= 0) return;
    this.claiming = true;
    try {
      const leaseMs = this.config.webhookTimeoutSeconds * 1_000 + 30_000;
      const claimed = await this.webhooks.claimDue(free, leaseMs);
      this.backlog = claimed.length === free;
      for (const delivery of claimed) {
        const attempt = this.attempt(delivery)
          .catch((error: unknown) =>
            this.logger.warn(`Delivery ${delivery.id} could not be recorded: ${String(error)}`),
          )
          .finally(() => {
            this.inFlight.delete(attempt);
            if (this.backlog) void this.poll();
          });
        this.inFlight.add(attempt);
      }
    } catch (error) {
      this.logger.warn(`Claiming webhook deliveries failed: ${String(error)}`);
    } finally {
      this.claiming = false;
    }
  }

  /** Writes `server.offline` for server sessions that expired without ending. */
  async sweep(): Promise<void> {
    if (this.stopped) return;
    await this.webhooks
      .sweepExpiredServerSessions(SWEEP_WINDOW_MS)
      .catch((error: unknown) => this.logger.warn(`Sweeping expired server sessions failed: ${String(error)}`));
  }

  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    const body = deliveryBodyOf(delivery);
    const timestamp = Math.floor(Date.now() / 1_000);
    const headers = {
      'user-agent': 'rhythmc-webhooks/1',
      [DELIVERY_HEADER]: delivery.id,
      [EVENT_HEADER]: delivery.eventType,
      [TIMESTAMP_HEADER]: String(timestamp),
      [SIGNATURE_HEADER]: signatureHeader(
        delivery.previousSecret === null ? [delivery.secret] : [delivery.secret, delivery.previousSecret],
        timestamp,
        body,
      ),
    };
    const result = await sendDelivery(
      delivery.url,
      headers,
      body,
      this.policy,
      this.config.webhookTimeoutSeconds * 1_000,
    );
    this.counts.attempts.set(result.outcome, (this.counts.attempts.get(result.outcome) ?? 0) + 1);
    if (result.ok) {
      await this.webhooks.markDelivered(delivery.id, result.status ?? 0);
      this.counts.delivered++;
      this.observeDelivered((Date.now() - new Date(delivery.createdAt).getTime()) / 1_000);
      return;
    }
    await this.failed(delivery, result);
  }

  private async failed(delivery: ClaimedDelivery, result: SendResult): Promise<void> {
    const delay = retryDelayMs(delivery.attempts, this.config.webhookRetryBaseMs);
    const deadline = new Date(delivery.createdAt).getTime() + this.config.webhookRetryForSeconds * 1_000;
    const giveUp = Date.now() + delay > deadline;
    const error = result.error ?? 'failed';
    const failingSince = await this.webhooks.markFailed(
      delivery.id,
      delivery.webhookId,
      { status: result.status, error },
      giveUp ? null : delay,
    );
    if (giveUp) this.counts.givenUp++;
    const limitMs = this.config.webhookDisableAfterSeconds * 1_000;
    if (Date.now() - failingSince.getTime() < limitMs) return;
    const reason = `every attempt failed for over ${this.config.webhookDisableAfterSeconds} s (last: ${error})`.slice(
      0,
      256,
    );
    const disabled = await this.tx.run(async (manager) => {
      if (!(await this.webhooks.disableFailing(delivery.webhookId, new Date(Date.now() - limitMs), reason, manager)))
        return false;
      await this.audit.append(
        {
          action: 'webhook.disable',
          target: `webhook:${delivery.webhookId}`,
          summary: { reason },
          requestId: null,
          sourceAddress: null,
          credential: 'service',
          actor: 'service',
          actorId: null,
        },
        manager,
      );
      return true;
    });
    if (disabled) {
      this.counts.disabled++;
      this.logger.warn(`Webhook ${delivery.webhookId} turned off: ${reason}`);
    }
  }
}
