import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { CatalogService } from '../../catalog/catalog.service';
import { Clock } from '../../common/clock';
import { EVENT_BUS, EventBus } from '../../common/events/events';
import { keepPlayerFrames } from '../../common/events/player-frames';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { TransactionService } from '../../database/transaction.service';
import { PeriodRepository } from './period.repository';
import type { PeriodRow } from './period-rows';

/** What freezing a period did: its row, and what its close rule granted (null: no rule). */
export interface FrozenPeriod {
  row: PeriodRow;
  granted: { collection: string; uids: string[] } | null;
  /** The server sessions given a `collections_granted` frame in the freezing transaction. */
  notified: string[];
}

/**
 * The period job (docs/decisions.md "Periods and seasons"), run by every instance every
 * PERIOD_JOB_INTERVAL_SECONDS: creates the day, week and month containing now and the next tick
 * (so a play just after a boundary finds its period), closes the open periods whose end has
 * passed, and freezes closed periods (their archive, and a season's close rule). Any number of
 * instances may run it at once: creating is ON CONFLICT DO NOTHING, closing a conditional UPDATE
 * under the exclusive period lock, freezing a conditional UPDATE of the period's row that the
 * archive's inserts and the grant commit with.
 */
@Injectable()
export class PeriodJobService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Periods');
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly periods: PeriodRepository,
    private readonly catalog: CatalogService,
    private readonly tx: TransactionService,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(EVENT_BUS) private readonly events: EventBus,
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

  /** Closes a period at `at` (null: another instance closed it first, or its end moved past `at`). */
  close(id: string, at: Date): Promise<PeriodRow | null> {
    return this.tx.run((manager) => this.periods.close(id, at, manager));
  }

  /** Freezes a closed period (null: frozen already, by this instance or another), then tells the game servers. */
  async archive(id: string): Promise<FrozenPeriod | null> {
    const frozen = await this.tx.run((manager) => this.freeze(id, manager));
    if (frozen) await this.announce(frozen);
    return frozen;
  }

  /**
   * Freezes a closed period in the caller's transaction: its boards into the archive (the last
   * live read: nothing writes into a closed period), and a season's close rule: the collection to
   * the first `top` of the archived ATP board (so exactly the ranks the archive answers), to each
   * one that lacks it, with a `collections_granted` frame kept in the realtime outbox for the game
   * server of each one online; whom it granted is stored on the period's row. Null when another
   * transaction froze it.
   */
  async freeze(id: string, manager: EntityManager): Promise<FrozenPeriod | null> {
    const archived = await this.periods.archive(id, manager);
    if (!archived) return null;
    const { archived_before: ruleRan, ...row } = archived;
    // Archived in rows by the release before the blocks (a rolling upgrade): its close rule ran then.
    if (ruleRan || row.grant_collection === null || row.grant_top === null) return { row, granted: null, notified: [] };
    const top = await this.periods.archivedAtpTop(id, row.grant_top, manager);
    const uids = await this.catalog.grantToPlayers(row.grant_collection, top, manager);
    await this.periods.recordGrant(id, uids, manager);
    const expiresAt = new Date(
      Date.now() + (this.config.serverTokenTtlSeconds + this.config.serverTokenRefreshGraceSeconds) * 1_000,
    );
    const notified = await keepPlayerFrames(
      manager,
      uids.map((uid) => ({
        uid,
        frame: {
          event: 'collections_granted',
          data: { uid: Number(uid), keys: [row.grant_collection], reason: 'season', season: row.slug },
        },
      })),
      expiresAt,
    );
    return { row: { ...row, granted_uids: uids }, granted: { collection: row.grant_collection, uids }, notified };
  }

  /** After the freeze committed: the log line of what was granted, and the kept frames' delivery now. */
  async announce(frozen: FrozenPeriod): Promise<void> {
    const { row, granted, notified } = frozen;
    const label = row.kind === 'season' ? `season ${row.slug} (${row.id})` : `${row.kind} ${row.id}`;
    this.logger.log(
      granted
        ? `Period ${label} archived; granted ${granted.collection} to ${granted.uids.length} player(s) of its top ${row.grant_top}: [${granted.uids.join(', ')}]`
        : `Period ${label} archived`,
    );
    if (notified.length > 0)
      await this.events
        .publish({ type: 'frames.kept', serverSessionIds: notified })
        .catch((error: unknown) =>
          this.logger.warn(`Announcing kept frames failed (sent at the next catch-up): ${String(error)}`),
        );
    // The archive's planner statistics now, not whenever autovacuum comes: a fresh archive without
    // them was read with whole-table plans (bench:periods:reads: an ATP window at 1M, 4 s against 0.35 s).
    await this.periods
      .analyzeArchives()
      .catch((error: unknown) => this.logger.warn(`Analyzing the period archives failed: ${String(error)}`));
  }
}
