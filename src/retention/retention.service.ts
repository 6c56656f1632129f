import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, AppConfig, RETENTION_VARIABLES } from '../config/app-config';
import { RETENTION_PURGES, RetentionPurge } from './retention.map';
import { RetentionRepository } from './retention.repository';

/** A run renews its table's lease with every batch; a run that died frees the table after this long. */
const LEASE_SECONDS = 300;
/** Between two batches of one table: uploads and logins waiting for the database (the embedded one has one connection) go first. */
const BATCH_PAUSE_MS = 20;

export type PurgeOutcome = 'ok' | 'error' | 'stopped' | 'skipped';
export const PURGE_OUTCOMES: readonly PurgeOutcome[] = ['ok', 'error', 'stopped', 'skipped'];

export interface PurgeResult {
  table: string;
  days: number;
  /** `skipped`: another run (this instance's or another's) held the table's lease. */
  outcome: PurgeOutcome;
  deleted: number;
  batches: number;
}

export interface PurgeStats {
  deleted: number;
  runs: Record<PurgeOutcome, number>;
  /** When this instance last finished a run of the table (ms since the epoch), or null. */
  lastFinishedAt: number | null;
}

/**
 * Retention (docs/operations.md "Retention", docs/decisions.md "Retention"): every
 * RETENTION_INTERVAL_MINUTES each instance runs the purges whose setting is on, table by table in
 * retention.map.ts's order. A table is purged by one run at a time (a lease in `retention_run`),
 * in batches of RETENTION_BATCH_SIZE rows, each its own short transaction; each run is one log line
 * and moves the metrics. With every setting off nothing is scheduled and nothing is deleted.
 */
@Injectable()
export class RetentionService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Retention');
  private readonly instanceId = randomUUID();
  private runNumber = 0;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly running = new Set<Promise<PurgeResult[]>>();
  private readonly stats = new Map<string, PurgeStats>();

  constructor(
    private readonly repository: RetentionRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The purges whose setting is on, with their days. */
  activePurges(): Array<{ purge: RetentionPurge; days: number }> {
    return RETENTION_PURGES.flatMap((purge) => {
      const days = this.config.retention.days[purge.setting];
      return days === null ? [] : [{ purge, days }];
    });
  }

  onApplicationBootstrap(): void {
    const active = this.activePurges();
    if (active.length === 0) {
      this.logger.log('Every retention setting is off: nothing is purged');
      return;
    }
    const settings = Object.entries(this.config.retention.days)
      .filter(([, days]) => days !== null)
      .map(([setting, days]) => `${RETENTION_VARIABLES[setting as keyof typeof RETENTION_VARIABLES]}=${days}`);
    this.logger.log(`Retention on (${settings.join(', ')}), every ${this.config.retention.intervalMinutes} min`);
    // The first run half to one interval after the start: instances started together spread out.
    this.schedule(this.intervalMs() * (0.5 + 0.5 * Math.random()));
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await Promise.allSettled([...this.running]);
  }

  /** Runs every purge that is on, once (the timer's run; also tests and benchmarks). */
  runOnce(): Promise<PurgeResult[]> {
    const run = this.runAll();
    this.running.add(run);
    void run.finally(() => this.running.delete(run)).catch(() => undefined);
    return run;
  }

  /** What this instance purged since it started, per table (the metrics). */
  purgeStats(): ReadonlyMap<string, PurgeStats> {
    return this.stats;
  }

  private intervalMs(): number {
    return this.config.retention.intervalMinutes * 60_000;
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      void this.runOnce()
        .catch((error: unknown) => this.logger.warn(`Retention run failed: ${String(error)}`))
        .finally(() => {
          if (!this.stopped) this.schedule(this.intervalMs());
        });
    }, delayMs);
    this.timer.unref();
  }

  private async runAll(): Promise<PurgeResult[]> {
    const results: PurgeResult[] = [];
    for (const { purge, days } of this.activePurges()) {
      if (this.stopped) break;
      results.push(await this.runPurge(purge, days));
    }
    return results;
  }

  private async runPurge(purge: RetentionPurge, days: number): Promise<PurgeResult> {
    const owner = `${this.instanceId}:${++this.runNumber}`;
    const result: PurgeResult = { table: purge.table, days, outcome: 'ok', deleted: 0, batches: 0 };
    let error: string | null = null;
    const started = Date.now();
    let cutoff: Date | null;
    try {
      cutoff = await this.repository.claim(purge.table, owner, LEASE_SECONDS, days);
    } catch (claimError) {
      this.logger.warn(`Retention ${purge.table}: could not start (${String(claimError)})`);
      return this.counted({ ...result, outcome: 'error' });
    }
    if (cutoff === null) {
      this.logger.debug(`Retention ${purge.table}: skipped, another run holds it`);
      return this.counted({ ...result, outcome: 'skipped' });
    }
    const { batchSize } = this.config.retention;
    try {
      for (;;) {
        const deleted = await this.repository.deleteBatch(purge, cutoff, batchSize);
        result.batches++;
        result.deleted += deleted;
        this.statsOf(purge.table).deleted += deleted;
        if (deleted < batchSize) break;
        if (this.stopped || !(await this.repository.renew(purge.table, owner, LEASE_SECONDS))) {
          result.outcome = 'stopped';
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, BATCH_PAUSE_MS));
      }
    } catch (batchError) {
      result.outcome = 'error';
      error = batchError instanceof Error ? batchError.message : String(batchError);
    }
    await this.repository
      .finish(purge.table, owner, { ...result, outcome: result.outcome as 'ok', instance: this.instanceId, error })
      .catch((finishError: unknown) =>
        this.logger.warn(`Retention ${purge.table}: could not record the run (${String(finishError)})`),
      );
    const line =
      `Retention ${purge.table}: ${result.outcome}, deleted ${result.deleted} rows older than ${days} days ` +
      `in ${result.batches} batches, ${Date.now() - started} ms` +
      (error === null ? '' : ` (${error})`);
    if (result.outcome === 'error') this.logger.warn(line);
    else this.logger.log(line);
    return this.counted(result);
  }

  private counted(result: PurgeResult): PurgeResult {
    const stats = this.statsOf(result.table);
    stats.runs[result.outcome]++;
    if (result.outcome !== 'skipped') stats.lastFinishedAt = Date.now();
    return result;
  }

  private statsOf(table: string): PurgeStats {
    let stats = this.stats.get(table);
    if (!stats) {
      stats = { deleted: 0, runs: { ok: 0, error: 0, stopped: 0, skipped: 0 }, lastFinishedAt: null };
      this.stats.set(table, stats);
    }
    return stats;
  }
}
