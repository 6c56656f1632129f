import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { Clock } from '../../common/clock';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { TransactionService } from '../../database/transaction.service';
import { PeriodRepository, PeriodRow } from './period.repository';

/**
 * The period job (docs/decisions.md "Periods and seasons"), run by every instance every
 * PERIOD_JOB_INTERVAL_SECONDS: creates the day, week and month containing now and the next tick
 * (so a play just after a boundary finds its period), closes the open periods whose end has
 * passed, and archives closed periods. Any number of instances may run it at once: creating is
 * ON CONFLICT DO NOTHING, closing a conditional UPDATE under the exclusive period lock, archiving
 * a conditional UPDATE of the period's row that the archive's inserts commit with.
 */
@Injectable()
export class PeriodJobService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Periods');
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly periods: PeriodRepository,
    private readonly tx: TransactionService,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    void this.runOnce();
    this.timer = setInterval(() => void this.runOnce(), this.config.periodJobIntervalSeconds * 1_000);
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /** One run of the job (a run in progress is waited for, not doubled); failures are logged and retried at the next tick. */
  runOnce(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.running ??= this.tick()
      .catch((error: unknown) => this.logger.warn(`Period job failed (retried at the next run): ${String(error)}`))
      .finally(() => (this.running = null));
    return this.running;
  }

  private async tick(): Promise<void> {
    const now = this.clock.now();
    const zone = this.config.periodTimeZone;
    await this.periods.ensureCalendar(now, zone);
    await this.periods.ensureCalendar(new Date(now.getTime() + 2 * this.config.periodJobIntervalSeconds * 1_000), zone);
    for (const id of await this.periods.due(now)) await this.close(id, now);
    for (const id of await this.periods.unarchived()) await this.archive(id);
  }

  /** Closes a period at `at` (null: another instance closed it first). */
  close(id: string, at: Date): Promise<PeriodRow | null> {
    return this.tx.run((manager) => this.periods.close(id, at, manager));
  }

  /** Freezes a closed period's boards into its archive (null: archived already, by this instance or another). */
  async archive(id: string): Promise<PeriodRow | null> {
    const archived = await this.tx.run((manager) => this.periods.archive(id, manager));
    if (archived) this.logger.log(`Period ${archived.kind} ${archived.id} archived`);
    return archived;
  }
}
