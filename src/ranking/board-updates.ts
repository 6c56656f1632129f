import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { EVENT_BUS, EventBus } from '../common/events/events';
import { ReadQueries } from '../database/read-queries';

/** A board "changed" when an upload's new best lands in its first BOARD_TOP places (a hologram's top 10). */
export const BOARD_TOP = 10;
/** Changes are gathered and published at most this often: one event per interval, whatever the upload rate. */
export const BOARD_FLUSH_MS = 250;

/**
 * Live board updates for game servers (issue 45 item 3; docs/decisions.md "Live board updates"):
 * the upload notes the boards whose top BOARD_TOP may have changed, and every BOARD_FLUSH_MS this
 * instance publishes them as one `boards.changed` event (through Redis to every instance), which
 * the realtime gateway sends to the sockets that asked for board updates. Nothing is kept: a
 * board update is a hint to read the board again, not the board.
 */
@Injectable()
export class BoardUpdates implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('BoardUpdates');
  private readonly charts = new Set<number>();
  private atp = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    @Inject(EVENT_BUS) private readonly events: EventBus,
    private readonly reads: ReadQueries,
  ) {}

  onModuleInit(): void {
    this.timer = setInterval(() => void this.flush(), BOARD_FLUSH_MS);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** A new best was written: its ranks after the upload decide which boards may show it. */
  noteBest(levelId: number, trackRank: number | null, siteRank: number | null): void {
    if (trackRank !== null && trackRank <= BOARD_TOP) this.charts.add(levelId);
    if (siteRank !== null && siteRank <= BOARD_TOP) this.atp = true;
  }

  async flush(): Promise<void> {
    if (this.charts.size === 0 && !this.atp) return;
    const levelIds = [...this.charts].sort((a, b) => a - b);
    const atp = this.atp;
    this.charts.clear();
    this.atp = false;
    // Boards may be read from a replica: the hint goes out once a read would see these bests.
    await this.reads.caughtUp();
    await this.events
      .publish({ type: 'boards.changed', atp, levelIds, top: BOARD_TOP })
      .catch((error: unknown) => this.logger.warn(`Publishing board updates failed: ${String(error)}`));
  }
}
