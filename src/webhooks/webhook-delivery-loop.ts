import { DeliveredOutcome, DeliveredRecorder } from './webhook-delivered-recorder';
import { toDiscordMessage } from './webhook-discord';
import type { DeliveryBody } from './webhook-events';
import type { AddressPolicy } from './webhook-address';
import { DeliveryAgents, sendDelivery, SendOutcome, SendResult } from './webhook-sender';
import {
  DELIVERY_HEADER,
  EVENT_HEADER,
  SIGNATURE_HEADER,
  signatureHeader,
  TIMESTAMP_HEADER,
} from './webhook-signature';

/** The longest wait between two attempts of one delivery. */
const MAX_RETRY_DELAY_MS = 3_600_000;

/** A delivery claimed for one attempt, with what sending it needs of its webhook. */
export interface ClaimedDelivery {
  id: string;
  webhookId: number;
  eventId: string;
  eventType: string;
  payload: Record<string, unknown>;
  attempts: number;
  createdAt: Date;
  url: string;
  secret: string;
  /** The secret a rotation replaced, while it still signs; null otherwise. */
  previousSecret: string | null;
  format: string;
}

export type { DeliveredOutcome } from './webhook-delivered-recorder';

/** The outbox as the sending loop sees it (webhook-delivery-store.ts on a pg pool of its own). */
export interface DeliveryStore {
  /**
   * Up to `limit` due deliveries, each leased `leaseMs`; with `room`, at most `room.perWebhook` of
   * one webhook counting the caller's attempts in flight (`room.busy`: a webhook id per attempt).
   */
  claimDue(limit: number, leaseMs: number, room?: ClaimRoom): Promise<ClaimedDelivery[]>;
  /** Successes, in one statement. */
  markDelivered(delivered: readonly DeliveredOutcome[]): Promise<void>;
  /** Returns when the webhook's failure streak started. */
  markFailed(
    id: string,
    webhookId: number,
    failure: { status: number | null; error: string },
    retryInMs: number | null,
  ): Promise<Date>;
}

/** The room a claim leaves each webhook: `perWebhook` less its attempts in flight (`busy`, an id per attempt). */
export interface ClaimRoom {
  perWebhook: number;
  busy: readonly number[];
}

/** What the loop is told to do: the delivery settings of the app's configuration. */
export interface DeliverySettings {
  concurrency: number;
  /** Attempts in flight for one webhook, at most (≤ concurrency). */
  perWebhook: number;
  pollMs: number;
  timeoutSeconds: number;
  retryBaseMs: number;
  retryForSeconds: number;
  disableAfterSeconds: number;
}

/** What the loop reports (to the main thread: metrics, logs, turning a webhook off with its audit row). */
export interface DeliveryReports {
  attempted(outcome: SendOutcome): void;
  /** Seconds from the event's creation to its delivery. */
  delivered(seconds: number): void;
  givenUp(): void;
  /** The webhook's every attempt failed for over disableAfterSeconds: turn it off (once, with an audit row). */
  failingTooLong(webhookId: number, reason: string): void;
  warn(message: string): void;
}

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
 * The claim / send / record loop (docs/decisions.md "Webhooks"), run in the delivery worker thread
 * (webhook-delivery.worker.ts): every `pollMs` it claims due deliveries up to the free concurrency,
 * at most `perWebhook` in flight for one webhook (a slow receiver holds only its own share), while
 * another instance claiming together takes other rows, and attempts each, signed afresh (a new
 * timestamp, the same delivery id). A failure is retried with a doubling delay until
 * `retryForSeconds` after the event; a webhook failing for `disableAfterSeconds` is reported to be
 * turned off.
 */
export class DeliveryLoop {
  private timer: NodeJS.Timeout | null = null;
  private claiming = false;
  /** Asked to claim while a claim ran: claim again when it ends (slots freed meanwhile). */
  private claimAgain = false;
  /** The last claim took all it could: more may be due, so each finished attempt claims again at once. */
  private backlog = false;
  /** An attempt of a webhook at its cap finished since the running claim began: claim again after it. */
  private capFreed = false;
  private stopped = false;
  private readonly inFlight = new Set<Promise<void>>();
  /** Attempts in flight per webhook id (the claim's room: DeliverySettings.perWebhook less these). */
  private readonly inFlightPerWebhook = new Map<number, number>();
  private readonly recorder: DeliveredRecorder<DeliveredOutcome & { createdAt: Date }>;
  /** Kept-alive connections to the receivers, as many idle as attempts run at once. */
  private readonly agents: DeliveryAgents;

  constructor(
    private readonly store: DeliveryStore,
    private readonly settings: DeliverySettings,
    private readonly policy: AddressPolicy,
    private readonly reports: DeliveryReports,
  ) {
    this.agents = new DeliveryAgents(settings.concurrency);
    this.recorder = new DeliveredRecorder(
      (group) => this.store.markDelivered(group),
      (group) => {
        const now = Date.now();
        for (const delivery of group) this.reports.delivered((now - new Date(delivery.createdAt).getTime()) / 1_000);
      },
      (group, error) =>
        this.reports.warn(
          `${group.length} delivered attempt(s) could not be recorded (sent again after their lease): ${String(error)}`,
        ),
    );
  }

  start(): void {
    this.timer = setInterval(() => void this.poll(), this.settings.pollMs);
  }

  /** Attempts in flight now, per webhook id (webhooks with none left out), lowest id first. */
  inFlightByWebhook(): Array<[webhookId: number, attempts: number]> {
    return [...this.inFlightPerWebhook].sort(([a], [b]) => a - b);
  }

  /**
   * Stops claiming; waits up to `waitMs` for the attempts in flight and the successes not yet
   * recorded (their rows are taken again after their lease otherwise).
   */
  async stop(waitMs: number): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(this.inFlight).then(() => this.recorder.idle()),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs))),
    ]);
    clearTimeout(timer);
    this.agents.destroy();
  }

  /** Claims due deliveries up to the free concurrency and starts their attempts. */
  async poll(): Promise<void> {
    if (this.stopped) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    const free = this.settings.concurrency - this.inFlight.size;
    if (free <= 0) return;
    this.claiming = true;
    this.capFreed = false;
    try {
      const leaseMs = this.settings.timeoutSeconds * 1_000 + 30_000;
      const busy = [...this.inFlightPerWebhook].flatMap(([webhookId, count]) => Array<number>(count).fill(webhookId));
      const claimed = await this.store.claimDue(free, leaseMs, { perWebhook: this.settings.perWebhook, busy });
      this.backlog = claimed.length === free;
      for (const delivery of claimed) {
        const webhookId = delivery.webhookId;
        this.inFlightPerWebhook.set(webhookId, (this.inFlightPerWebhook.get(webhookId) ?? 0) + 1);
        const attempt = this.attempt(delivery)
          .catch((error: unknown) =>
            this.reports.warn(`Delivery ${delivery.id} could not be recorded: ${String(error)}`),
          )
          .finally(() => {
            this.inFlight.delete(attempt);
            const count = this.inFlightPerWebhook.get(webhookId) ?? 1;
            if (count <= 1) this.inFlightPerWebhook.delete(webhookId);
            else this.inFlightPerWebhook.set(webhookId, count - 1);
            // A webhook at its cap may have more due that the claim left: claim again at once.
            const capped = count >= this.settings.perWebhook;
            if (capped) this.capFreed = true;
            if (this.backlog || capped) void this.poll();
          });
        this.inFlight.add(attempt);
      }
    } catch (error) {
      this.reports.warn(`Claiming webhook deliveries failed: ${String(error)}`);
    } finally {
      this.claiming = false;
    }
    if (this.claimAgain) {
      this.claimAgain = false;
      if (this.backlog || this.capFreed) await this.poll();
    }
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
      this.settings.timeoutSeconds * 1_000,
      this.agents,
    );
    // Cut by the stop (its wait ended and the connections were destroyed): not the receiver's
    // failure, so nothing is recorded; the claim's lease brings the row back under the same id.
    if (!result.ok && this.agents.destroyed) return;
    this.reports.attempted(result.outcome);
    if (result.ok) {
      this.recorder.add({ id: delivery.id, status: result.status ?? 0, createdAt: delivery.createdAt });
      return;
    }
    await this.failed(delivery, result);
  }

  private async failed(delivery: ClaimedDelivery, result: SendResult): Promise<void> {
    const delay = retryDelayMs(delivery.attempts, this.settings.retryBaseMs);
    const deadline = new Date(delivery.createdAt).getTime() + this.settings.retryForSeconds * 1_000;
    const giveUp = Date.now() + delay > deadline;
    const error = result.error ?? 'failed';
    const failingSince = await this.store.markFailed(
      delivery.id,
      delivery.webhookId,
      { status: result.status, error },
      giveUp ? null : delay,
    );
    if (giveUp) this.reports.givenUp();
    if (Date.now() - failingSince.getTime() < this.settings.disableAfterSeconds * 1_000) return;
    this.reports.failingTooLong(
      delivery.webhookId,
      `every attempt failed for over ${this.settings.disableAfterSeconds} s (last: ${error})`.slice(0, 256),
    );
  }
}
