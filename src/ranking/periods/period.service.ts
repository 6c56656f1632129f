import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../../common/clock';
import { NotFoundError } from '../../common/errors/app-error';
import { formatLocalDateTime } from '../../common/time';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { BoardCountGate } from '../board-count-gate';
import type { PeriodKind } from '../entities/board-period.entity';
import type { BoardPeriodView } from '../dto/leaderboard.dto';
import { PeriodBoard, PeriodRepository } from './period.repository';
import type { PeriodBoardRow, PeriodRow } from './period-rows';

const CALENDAR: readonly string[] = ['day', 'week', 'month'];

export const periodView = (row: PeriodRow): BoardPeriodView => ({
  id: Number(row.id),
  kind: row.kind,
  slug: row.slug,
  name: row.name,
  startsAt: formatLocalDateTime(row.starts_at),
  endsAt: formatLocalDateTime(row.ends_at),
  closed: row.closed_at !== null,
});

/** A period board's answer before the entries are mapped: its rows in board order, ranked. */
export interface PeriodBoardRead {
  period: BoardPeriodView;
  rank?: number | null;
  rows: Array<PeriodBoardRow & { rank: string }>;
}

/**
 * The periods of the boards (docs/decisions.md "Periods and seasons"): which period a `period`
 * query names, and its boards, live while it is open (and closed but not yet archived: nothing
 * writes into it any more) and from its archive once archived.
 */
@Injectable()
export class PeriodService {
  constructor(
    private readonly periods: PeriodRepository,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly counts: BoardCountGate,
  ) {}

  /** The period a (validated, not `all`) `period` query names; 404 when there is none. */
  async resolve(period: string): Promise<PeriodRow> {
    let row: PeriodRow | null;
    if (CALENDAR.includes(period)) {
      const now = this.clock.now();
      row = await this.periods.calendarPeriod(period as PeriodKind, now);
      if (!row) {
        // The period job creates periods ahead of their start; a first read after a long stop may come first.
        await this.periods.ensureCalendar(now, this.config.periodTimeZone);
        row = await this.periods.calendarPeriod(period as PeriodKind, now, { primary: true });
      }
    } else if (period.startsWith('season:')) {
      const key = period.slice('season:'.length);
      row = /^\d+$/.test(key) ? await this.periods.byId(key) : await this.periods.seasonBySlug(key);
      if (row && row.kind !== 'season') row = null;
    } else {
      row = await this.periods.byId(period);
    }
    if (!row) throw new NotFoundError(`No period ${period}`);
    return row;
  }

  async top(row: PeriodRow, board: PeriodBoard, limit: number): Promise<PeriodBoardRead> {
    const rows = await this.periods.top(row.id, board, limit, row.archived_in_blocks);
    return { period: periodView(row), rows: rows.map((r, i) => ({ ...r, rank: r.rank ?? String(i + 1) })) };
  }

  /**
   * The window around `uid`; rank null (no entries) when the player has none on the board. A live
   * window's rank is a COUNT of the rows ahead: through the BoardCountGate. An archived one reads
   * its stored rank. `caller` (callerKey) takes its turn in the gate.
   */
  async window(row: PeriodRow, board: PeriodBoard, uid: string, k: number, caller: string): Promise<PeriodBoardRead> {
    const archived = row.archived_in_blocks;
    const read = () => this.periods.window(row.id, board, uid, k, archived);
    const window = await (archived ? read() : this.counts.run(read, caller));
    if (!window) return { period: periodView(row), rank: null, rows: [] };
    return {
      period: periodView(row),
      rank: window.rank,
      rows: window.rows,
    };
  }
}
