import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { NotFoundError } from '../../common/errors/app-error';
import { Clock } from '../../common/clock';
import { formatDayNumber } from '../../common/time';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { TransactionService } from '../../database/transaction.service';
import { HISTORY_DAYS, RatingHistoryDay, RatingHistoryResponse } from '../dto/rating-history.dto';
import { CalendarDay, RatingHistoryRepository } from './rating-history.repository';

/**
 * A day is taken this long after it ends: an upload whose transaction began just before midnight
 * (received_at is its start) has committed by then.
 */
export const SNAPSHOT_GRACE_MS = 120_000;

/** Every instance looks for due days this often, and once this soon after it starts (the catch-up after a downtime). */
const SNAPSHOT_EVERY_MS = 5 * 60_000;
const SNAPSHOT_FIRST_MS = 10_000;

/**
 * Rating history (issue #44; docs/decisions.md "Rating history"): a daily snapshot of ATP, site
 * rank and counted plays of every player who had a counted play that day, and a player's last
 * HISTORY_DAYS days in one read. Days are calendar days in PERIOD_TIME_ZONE, the boards' day
 * periods' zone and rule (one setting for both), read from the injectable Clock.
 */
@Injectable()
export class RatingHistoryService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(RatingHistoryService.name);
  private timers: NodeJS.Timeout[] = [];
  private stopped = false;
  /** Runs of this instance, one after the other (another instance waits on the advisory lock). */
  private chain: Promise<unknown> = Promise.resolve();
  /** The last calendar day asked for: reads within it ask the database nothing more. */
  private lastDayAsked: CalendarDay | null = null;

  constructor(
    private readonly history: RatingHistoryRepository,
    private readonly transactions: TransactionService,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The calendar day (PERIOD_TIME_ZONE) containing `at`. */
  private async dayOf(at: Date): Promise<number> {
    const known = this.lastDayAsked;
    if (known && at.getTime() >= known.start.getTime() && at.getTime() < known.end.getTime()) return known.day;
    const day = await this.history.calendarDay(at, this.config.periodTimeZone);
    this.lastDayAsked = day;
    return day.day;
  }

  onApplicationBootstrap(): void {
    const tick = () => {
      if (this.stopped) return;
      this.takeDueDays().catch((error: unknown) =>
        this.logger.warn(`Rating history snapshot failed: ${String(error)}`),
      );
    };
    this.timers = [setTimeout(tick, SNAPSHOT_FIRST_MS), setInterval(tick, SNAPSHOT_EVERY_MS)];
    for (const timer of this.timers) timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    await this.chain;
  }

  /**
   * Takes every closed day not taken yet, oldest first, each in a transaction of its own under the
   * snapshot lock: the day after the newest taken (at most HISTORY_DAYS back, after a long
   * downtime), or only yesterday the first time. Answers the days taken by this call.
   */
  takeDueDays(): Promise<number[]> {
    const run = this.chain.then(() => this.takeDue(this.clock.now()));
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async takeDue(now: Date): Promise<number[]> {
    const lastClosed = (await this.dayOf(new Date(now.getTime() - SNAPSHOT_GRACE_MS))) - 1;
    const newest = await this.history.lastDay();
    const first = newest === null ? lastClosed : Math.max(newest + 1, lastClosed - HISTORY_DAYS + 1);
    const taken: number[] = [];
    for (let day = first; day <= lastClosed; day++) {
      const players = await this.transactions.run(async (manager) => {
        await this.history.lockSnapshots(manager);
        const last = await this.history.lastDay(manager);
        if (last !== null && day <= last) return null; // another instance took it meanwhile
        const bounds = await this.history.dayBounds(manager, day, this.config.periodTimeZone);
        // Not over yet: where clocks fall back from 01:00 to 00:00 (America/Havana), the first
        // 00:xx is already the next date, but the day ends at the second midnight.
        if (bounds.end.getTime() + SNAPSHOT_GRACE_MS > now.getTime()) return 'open';
        return this.history.snapshot(manager, day, bounds.start, bounds.end);
      });
      if (players === 'open') break;
      if (players === null) continue;
      taken.push(day);
      this.logger.log(`Rating history: took ${formatDayNumber(day)} (${players} players)`);
    }
    return taken;
  }

  /** The player's last HISTORY_DAYS closed days (404 without such a player), as the admin API answers it: bans aside. */
  async adminHistory(uid: string): Promise<RatingHistoryResponse> {
    if ((await this.history.player(uid)) === null) throw new NotFoundError(`No player with uid ${uid}`);
    return this.read(uid);
  }

  /**
   * For game servers, as their boards answer a banned player (rank null, no entries): a player
   * under an active ban has no days. 404 without such a player.
   */
  async serverHistory(uid: string): Promise<RatingHistoryResponse> {
    const player = await this.history.player(uid);
    if (player === null) throw new NotFoundError(`No player with uid ${uid}`);
    return player.banned ? { uid: Number(uid), days: [] } : this.read(uid);
  }

  /** The history of a player the caller has already found and may show (the public API asks the player module). */
  async read(uid: string): Promise<RatingHistoryResponse> {
    const today = await this.dayOf(this.clock.now());
    const rows = await this.history.history(uid, today - HISTORY_DAYS, today - 1);
    const days = rows.map((row): RatingHistoryDay => ({
      date: formatDayNumber(row.day),
      atp: row.atp_e4 / 10_000,
      siteRank: row.site_rank === 0 ? null : row.site_rank,
      plays: row.plays,
    }));
    return { uid: Number(uid), days };
  }
}
