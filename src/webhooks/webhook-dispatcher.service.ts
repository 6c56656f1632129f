import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { AuditService } from '../audit/audit.service';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { DATABASE_TARGET, DatabaseTarget } from '../database/database-options';
import { TransactionService } from '../database/transaction.service';
import type { DeliveryWorkerData, FromDeliveryWorker, ToDeliveryWorker } from './webhook-delivery.worker';
import type { SendOutcome } from './webhook-sender';
import { WebhookRepository } from './webhook.repository';

/** Expired server sessions are looked for this often, over this window. */
const SWEEP_INTERVAL_MS = 30_000;
const SWEEP_WINDOW_MS = 3_600_000;
/** How long a stopping instance waits for its attempts in flight (their rows are taken again later otherwise). */
const STOP_WAIT_MS = 2_000;
/** A worker that does not say it stopped within this much more is ended. */
const STOP_GRACE_MS = 3_000;
/** A scrape waits at most this for the worker's counts (it goes with the last ones otherwise). */
const FLUSH_WAIT_MS = 500;
/** A worker that died is started again after this. */
const RESTART_DELAY_MS = 1_000;

/**
 * The worker's file: compiled JavaScript beside this one in dist; under ts-jest (this file is .ts)
 * the TypeScript source, through the checkout's transpile hook in the worker (scripts/ts-register.js:
 * transpiled once and kept, where ts-node loaded TypeScript again in every test app's worker).
 */
function startDeliveryWorker(data: DeliveryWorkerData): Worker {
  const extension = extname(__filename);
  const file = join(__dirname, `webhook-delivery.worker${extension}`);
  if (extension === '.js') return new Worker(file, { workerData: data });
  const register = join(__dirname, '..', '..', 'scripts', 'ts-register.js');
  return new Worker(`require(${JSON.stringify(register)}); require(${JSON.stringify(file)});`, {
    eval: true,
    workerData: data,
  });
}

/**
 * Sends what the outbox holds (docs/decisions.md "Webhooks"), from a worker thread
 * (webhook-delivery.worker.ts, "Webhooks: deliveries off the request thread"): every instance
 * polls every WEBHOOK_POLL_MS for due deliveries and claims at most what its WEBHOOK_CONCURRENCY
 * leaves free (webhook-delivery-loop.ts). This side starts and stops the worker (again after a
 * crash), counts what it reports for the metrics, turns off the webhooks it reports failing for
 * WEBHOOK_DISABLE_AFTER_SECONDS (with an audit row and a warning), and sweeps expired server
 * sessions. Nothing here runs inside a request: an upload or a login only writes rows.
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Webhooks');
  private sweepTimer: NodeJS.Timeout | null = null;
  private restartTimer: NodeJS.Timeout | null = null;
  private worker: Worker | null = null;
  private stopped = false;
  private nextFlush = 1;
  private readonly flushes = new Map<number, () => void>();
  /**
   * What this instance did since it started (read by the metrics at scrape time): attempts by how
   * they ended, deliveries finished (delivered, or given up after the retry window), webhooks it
   * turned off; and the attempts in flight per webhook id as last reported (none while the worker
   * is down). The worker reports them in batches (every 250 ms).
   */
  readonly counts = {
    attempts: new Map<SendOutcome, number>(),
    delivered: 0,
    givenUp: 0,
    disabled: 0,
    inFlight: new Map<number, number>(),
  };
  /** Told the seconds from each delivered event's creation to its delivery (the metrics' histogram). */
  private observeDelivered: (seconds: number) => void = () => undefined;

  constructor(
    private readonly webhooks: WebhookRepository,
    private readonly audit: AuditService,
    private readonly tx: TransactionService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(DATABASE_TARGET) private readonly database: DatabaseTarget,
  ) {}

  observeDeliveredWith(observe: (seconds: number) => void): void {
    this.observeDelivered = observe;
  }

  onApplicationBootstrap(): void {
    this.startWorker();
    this.sweepTimer = setInterval(() => void this.sweep(), SWEEP_INTERVAL_MS);
    this.sweepTimer.unref();
  }

  /** Tells the worker to stop claiming and waits for its attempts in flight (STOP_WAIT_MS), then ends it. */
  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const worker = this.worker;
    if (!worker) return;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      timer = setTimeout(resolve, STOP_WAIT_MS + STOP_GRACE_MS);
      worker.on('message', (message: FromDeliveryWorker) => {
        if (message.type === 'stopped') resolve();
      });
      worker.once('exit', () => resolve());
      worker.postMessage({ type: 'stop', waitMs: STOP_WAIT_MS } satisfies ToDeliveryWorker);
    });
    clearTimeout(timer);
    await worker.terminate();
    this.worker = null;
  }

  /**
   * Brings `counts` up to date: asks the worker for what it did since its last report (at most
   * FLUSH_WAIT_MS; the metrics scrape calls it).
   */
  async collectCounts(): Promise<void> {
    const worker = this.worker;
    if (!worker || this.stopped) return;
    const id = this.nextFlush++;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.flushes.set(id, resolve);
      timer = setTimeout(resolve, FLUSH_WAIT_MS);
      worker.postMessage({ type: 'flush', id } satisfies ToDeliveryWorker);
    });
    clearTimeout(timer);
    this.flushes.delete(id);
  }

  /** Writes `server.offline` for server sessions that expired without ending, and forgets replaced secrets past their overlap. */
  async sweep(): Promise<void> {
    if (this.stopped) return;
    await this.webhooks
      .sweepExpiredServerSessions(SWEEP_WINDOW_MS)
      .catch((error: unknown) => this.logger.warn(`Sweeping expired server sessions failed: ${String(error)}`));
    await this.webhooks
      .forgetExpiredSecrets()
      .catch((error: unknown) => this.logger.warn(`Forgetting expired webhook secrets failed: ${String(error)}`));
  }

  private startWorker(): void {
    const config = this.config;
    const worker = startDeliveryWorker({
      connectionString: this.database.url,
      embedded: this.database.embedded,
      allowedNetworks: config.webhookAllowedNetworks,
      settings: {
        concurrency: config.webhookConcurrency,
        perWebhook: config.webhookConcurrencyPerWebhook,
        pollMs: config.webhookPollMs,
        timeoutSeconds: config.webhookTimeoutSeconds,
        retryBaseMs: config.webhookRetryBaseMs,
        retryForSeconds: config.webhookRetryForSeconds,
        disableAfterSeconds: config.webhookDisableAfterSeconds,
      },
    });
    this.worker = worker;
    // The thread does not hold the process up on its own: the service's shutdown stops it (onModuleDestroy).
    worker.unref();
    worker.on('message', (message: FromDeliveryWorker) => this.received(message));
    worker.on('error', (error) => this.logger.error(`The webhook delivery thread failed: ${error.message}`));
    worker.on('exit', (code) => {
      if (worker === this.worker) this.counts.inFlight.clear();
      if (this.stopped || worker !== this.worker) return;
      this.worker = null;
      this.logger.error(`The webhook delivery thread exited with ${code}; starting it again`);
      this.restartTimer = setTimeout(() => {
        if (!this.stopped) this.startWorker();
      }, RESTART_DELAY_MS);
      this.restartTimer.unref();
    });
  }

  private received(message: FromDeliveryWorker): void {
    switch (message.type) {
      case 'report': {
        for (const [outcome, count] of Object.entries(message.attempts) as Array<[SendOutcome, number]>)
          this.counts.attempts.set(outcome, (this.counts.attempts.get(outcome) ?? 0) + count);
        this.counts.delivered += message.deliveredSeconds.length;
        this.counts.givenUp += message.givenUp;
        this.counts.inFlight = new Map(message.inFlight);
        for (const seconds of message.deliveredSeconds) this.observeDelivered(seconds);
        return;
      }
      case 'disable':
        void this.disable(message.webhookId, message.reason).catch((error: unknown) =>
          this.logger.warn(`Turning off webhook ${message.webhookId} failed: ${String(error)}`),
        );
        return;
      case 'warn':
        this.logger.warn(message.message);
        return;
      case 'flushed':
        this.flushes.get(message.id)?.();
        return;
      case 'stopped':
        return;
    }
  }

  /** Turns off a webhook failing since before the limit, with an audit row; once across instances. */
  private async disable(webhookId: number, reason: string): Promise<void> {
    const before = new Date(Date.now() - this.config.webhookDisableAfterSeconds * 1_000);
    const disabled = await this.tx.run(async (manager) => {
      if (!(await this.webhooks.disableFailing(webhookId, before, reason, manager))) return false;
      await this.audit.append(
        {
          action: 'webhook.disable',
          target: `webhook:${webhookId}`,
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
      this.logger.warn(`Webhook ${webhookId} turned off: ${reason}`);
    }
  }
}
