import { Injectable } from '@nestjs/common';
import { CatalogService } from '../catalog/catalog.service';
import { NotFoundError } from '../common/errors/app-error';
import { shownName } from '../common/player-name';
import { AtpBoardEntry, AtpBoardResponse, BOARD_DEFAULT_K, BOARD_DEFAULT_LIMIT, ChartBoardEntry, ChartBoardResponse, LeaderboardQueryDto } from './dto/leaderboard.dto';
import { LeaderboardRepository, SiteRow, TrackRow, Window } from './leaderboard.repository';
import { RankAnswerService } from './rank/rank-answer.service';
import { roundRating } from './rating';

/** No chart has this level id (they run from 0): a rank read for the ATP board only finds no best. */
const NO_CHART = -1;

const atpEntry = (row: SiteRow, rank: number): AtpBoardEntry => ({
  rank,
  uid: Number(row.uid),
  username: row.username,
  displayName: shownName(row.display_name, row.username),
  atp: Number(row.atp),
});

const chartEntry = (row: TrackRow, rank: number): ChartBoardEntry => ({
  rank,
  uid: Number(row.uid),
  username: row.username,
  displayName: shownName(row.display_name, row.username),
  acc: row.acc,
  rating: roundRating(row.rating),
});

/** The window's entries in board order: the anchor at `rank`, the rows ahead and behind it numbered outwards. */
function windowEntries<Row, Entry>(window: Window<Row>, rank: number, entry: (row: Row, rank: number) => Entry): Entry[] {
  const ahead = window.ahead.map((row, i) => entry(row, rank - window.ahead.length + i));
  const anchor = window.anchor ? [entry(window.anchor, rank)] : [];
  return [...ahead, ...anchor, ...window.behind.map((row, i) => entry(row, rank + 1 + i))];
}

/**
 * The leaderboards for game servers (issue #18): the ATP board (the site order) and each chart's
 * board (its track order), top N or a window around a player. Ranks are the upload's siteRank and
 * trackRank (decisions.md §5): top N counts unbanned rows from the top; a window takes the
 * player's rank from RankAnswerService (the rank index, or SQL when it cannot answer) and numbers
 * the unbanned neighbours outwards from it. The rank and the window's rows are read at once, in
 * two statements: an upload committing between them can shift a window by that one change.
 */
@Injectable()
export class LeaderboardService {
  constructor(
    private readonly boards: LeaderboardRepository,
    private readonly ranks: RankAnswerService,
    private readonly catalog: CatalogService,
  ) {}

  async atpBoard(query: LeaderboardQueryDto): Promise<AtpBoardResponse> {
    if (query.around === undefined) {
      const rows = await this.boards.topSite(query.limit ?? BOARD_DEFAULT_LIMIT);
      return { board: 'atp', entries: rows.map((row, i) => atpEntry(row, i + 1)) };
    }
    const uid = query.around;
    const [{ ranks }, window] = await Promise.all([this.ranks.current(uid, NO_CHART), this.boards.siteWindow(uid, query.k ?? BOARD_DEFAULT_K)]);
    if (ranks.siteRank === null) return { board: 'atp', rank: await this.unranked(uid), entries: [] };
    return { board: 'atp', rank: ranks.siteRank, entries: windowEntries(window, ranks.siteRank, atpEntry) };
  }

  async chartBoard(levelId: number, query: LeaderboardQueryDto): Promise<ChartBoardResponse> {
    if (query.around === undefined) {
      const rows = await this.boards.topTrack(levelId, query.limit ?? BOARD_DEFAULT_LIMIT);
      if (rows.length === 0) await this.requireChart(levelId);
      return { board: 'chart', levelId, entries: rows.map((row, i) => chartEntry(row, i + 1)) };
    }
    const uid = query.around;
    const [{ ranks }, window] = await Promise.all([this.ranks.current(uid, levelId), this.boards.trackWindow(uid, levelId, query.k ?? BOARD_DEFAULT_K)]);
    if (ranks.trackRank === null) {
      await this.requireChart(levelId);
      return { board: 'chart', levelId, rank: await this.unranked(uid), entries: [] };
    }
    return { board: 'chart', levelId, rank: ranks.trackRank, entries: windowEntries(window, ranks.trackRank, chartEntry) };
  }

  /**
   * A chart board exists for every level the catalog has a row of (active or not). Asked only when
   * the answer would be empty: a best exists only on a catalog chart (an upload adds the chart row
   * first, and rows are never deleted), so a non-empty board or a ranked player proves the chart.
   */
  private async requireChart(levelId: number): Promise<void> {
    if (!(await this.catalog.findChart(levelId))) throw new NotFoundError(`No chart with levelId ${levelId}`);
  }

  /** The rank of a player without one (null), or 404 when there is no such player. */
  private async unranked(uid: string): Promise<null> {
    if (!(await this.boards.playerExists(uid))) throw new NotFoundError(`No player with uid ${uid}`);
    return null;
  }
}
