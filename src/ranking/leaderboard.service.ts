import { Injectable } from '@nestjs/common';
import { CatalogService } from '../catalog/catalog.service';
import { NotFoundError } from '../common/errors/app-error';
import { shownName } from '../common/player-name';
import { ServerService } from '../server/server.service';
import {
  AtpBoardEntry,
  AtpBoardResponse,
  BoardScopeView,
  BOARD_DEFAULT_K,
  BOARD_DEFAULT_LIMIT,
  ChartBoardEntry,
  ChartBoardResponse,
  LeaderboardQueryDto,
  ScopedAtpBoardResponse,
  ScopedChartBoardResponse,
} from './dto/leaderboard.dto';
import {
  AnchorState,
  Checked,
  CheckedTrackRow,
  FirstPlaceRow,
  LeaderboardRepository,
  SiteRow,
  TrackRow,
  Window,
} from './leaderboard.repository';
import { BoardCountGate } from './board-count-gate';
import { PeriodBoard } from './periods/period.repository';
import { ScopedBoardRepository, ScopedWindowRow } from './scoped-board.repository';
import { PeriodBoardRead, PeriodService } from './periods/period.service';
import { RankAnswerService } from './rank-answer.service';
import { RankKey, siteKey, trackKey } from './rank-index/rank-index';
import type { BanCheck } from './ranking.types';
import { roundRating, toTenThousandths } from './rating-scale';
import type { PlayerRankState } from './ranking.types';

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

/** A chart's rank 1 (LeaderboardService.firstPlaces). */
export interface FirstPlace {
  levelId: number;
  chartName: string;
  uid: number;
  username: string;
  displayName: string;
  acc: number;
  rating: number;
  /** When the service first accepted a play reaching this best. */
  reachedAt: Date;
}

const firstPlace = (row: FirstPlaceRow): FirstPlace => ({
  levelId: row.level_id,
  chartName: row.chart_name,
  uid: Number(row.uid),
  username: row.username,
  displayName: shownName(row.display_name, row.username),
  acc: row.acc,
  rating: roundRating(row.rating),
  reachedAt: new Date(Number(row.first_time_ms)),
});

const siteKeyMatches = (row: SiteRow, key: RankKey) => toTenThousandths(Number(row.atp)) === -key[0];
const trackKeyMatches = (row: TrackRow & { first_time_ms: string }, key: RankKey) =>
  row.acc === -key[0] && Number(row.first_time_ms) === key[1];

/** The window's entries in board order: the anchor at `rank`, the rows ahead and behind it numbered outwards. */
function windowEntries<Row, Entry>(
  window: Window<Row>,
  rank: number,
  entry: (row: Row, rank: number) => Entry,
): Entry[] {
  const ahead = window.ahead.map((row, i) => entry(row, rank - window.ahead.length + i));
  const anchor = window.anchor ? [entry(window.anchor, rank)] : [];
  return [...ahead, ...anchor, ...window.behind.map((row, i) => entry(row, rank + 1 + i))];
}

/**
 * A scoped window statement's rows (board order) as a window, and the player's row (its rows ahead
 * in the scope and the ban generation its statement saw: RankAnswerService.scopedRank); null when
 * the player is not on the scoped board.
 */
function scopedWindow<Row>(
  rows: Array<ScopedWindowRow<Row>>,
  k: number,
): {
  anchor: ScopedWindowRow<Row>;
  rowsAhead: number;
  seen: { generation: number; dbNowMs: number };
  window: Window<Row>;
} | null {
  const anchor = rows.find((row) => row.part === 0);
  if (!anchor) return null;
  const strip = ({ part: _p, ahead: _a, ban_generation: _g, db_now: _n, ...row }: ScopedWindowRow<Row>) =>
    row as unknown as Row;
  const ahead = rows.filter((row) => row.part === 1);
  return {
    anchor,
    rowsAhead: Number(anchor.ahead),
    seen: { generation: Number(anchor.ban_generation), dbNowMs: (anchor.db_now as Date).getTime() },
    window: {
      anchor: strip(anchor),
      ahead: ahead.slice(Math.max(0, ahead.length - k)).map(strip),
      behind: rows
        .filter((row) => row.part === 2)
        .slice(0, k)
        .map(strip),
    },
  };
}

/**
 * The leaderboards for game servers (issue #18): the ATP board (the site order) and each chart's
 * board (its track order), top N or a window around a player. Ranks are the upload's siteRank and
 * trackRank (decisions.md §5): top N counts unbanned rows from the top. A window reads the
 * player's rank keys and ban check (one primary-key statement), takes the rank and the nearest
 * unbanned neighbours from the rank index (RankAnswerService.window), then reads their rows by
 * uid. When the index cannot answer, one statement reads the keys, ban check and neighbours in one
 * snapshot, RankAnswerService.ranks turns the keys into the rank, and the neighbours are numbered
 * outwards from it: the same answer.
 */
@Injectable()
export class LeaderboardService {
  constructor(
    private readonly boards: LeaderboardRepository,
    private readonly ranks: RankAnswerService,
    private readonly catalog: CatalogService,
    private readonly periods: PeriodService,
    private readonly scoped: ScopedBoardRepository,
    private readonly servers: ServerService,
    private readonly counts: BoardCountGate,
  ) {}

  /** Board windows counted in SQL (BoardCountGate) and refused since the start, for the metrics. */
  windowCountTotals(): { counted: number; refused: number } {
    return this.counts.totals();
  }

  /**
   * The ATP board (top N or a window; all time, a period, or a group's or country's). `caller`
   * (callerKey) takes its turn in the BoardCountGate when the window is counted in SQL.
   */
  async atpBoard(query: LeaderboardQueryDto, caller: string): Promise<AtpBoardResponse> {
    if (query.group !== undefined || query.country !== undefined) return this.scopedAtpBoard(query, caller);
    if (query.period !== undefined && query.period !== 'all') {
      const read = await this.periodBoard(query, { board: 'atp' }, caller);
      if (read.rank === null) await this.unranked(query.around as string);
      return {
        board: 'atp',
        period: read.period,
        ...(read.rank === undefined ? {} : { rank: read.rank }),
        entries: read.rows.map((row) => atpEntry(row as SiteRow, Number(row.rank))),
      };
    }
    if (query.around === undefined) {
      const rows = await this.boards.topSite(query.limit ?? BOARD_DEFAULT_LIMIT);
      return { board: 'atp', entries: rows.map((row, i) => atpEntry(row, i + 1)) };
    }
    const uid = query.around;
    const k = query.k ?? BOARD_DEFAULT_K;
    const anchor = await this.boards.siteAnchor(uid);
    if (!anchor) return { board: 'atp', rank: await this.unranked(uid), entries: [] };
    if (anchor.bans.selfBanned) return { board: 'atp', rank: null, entries: [] }; // a banned player has no rank
    const indexed = await this.fromIndex<Checked<SiteRow>>(
      this.rankState(uid, NO_CHART, anchor),
      'site',
      anchor.bans,
      k,
      (uids) => this.boards.siteRows(uids),
      siteKeyMatches,
    );
    if (indexed)
      return { board: 'atp', rank: indexed.rank, entries: windowEntries(indexed.window, indexed.rank, atpEntry) };
    const { state, window } = await this.boards.siteWindow(uid, k);
    const rank = state
      ? (await this.ranks.ranks(this.rankState(uid, NO_CHART, state), state.bans, null, caller)).siteRank
      : await this.unranked(uid);
    return rank === null
      ? { board: 'atp', rank: null, entries: [] }
      : { board: 'atp', rank, entries: windowEntries(window, rank, atpEntry) };
  }

  /**
   * The ATP board among the players `uids` (a party, a friends list; distinct, at most
   * SCOPED_MAX_UIDS): those of them the global board ranks (a rating, no active ban), in its order,
   * each ranked by its place among them. Unknown uids are simply not there.
   */
  async atpAmong(uids: string[]): Promise<ScopedAtpBoardResponse> {
    const rows = await this.boards.siteAmong(uids);
    return { board: 'atp', entries: rows.map((row, i) => atpEntry(row, i + 1)) };
  }

  /** A chart's board among the players `uids`, as atpAmong; 404 as the chart's board. */
  async chartAmong(levelId: number, uids: string[]): Promise<ScopedChartBoardResponse> {
    const rows = await this.boards.trackAmong(levelId, uids);
    if (rows.length === 0) await this.requireChart(levelId);
    return { board: 'chart', levelId, entries: rows.map((row, i) => chartEntry(row, i + 1)) };
  }

  /**
   * Rank 1 of every chart board (the entry chartBoard's top 1 answers), the most recently reached
   * first; at most `limit`.
   */
  async firstPlaces(limit: number): Promise<FirstPlace[]> {
    return (await this.boards.firstPlaces(limit)).map(firstPlace);
  }

  /** A chart's board, as atpBoard. */
  async chartBoard(levelId: number, query: LeaderboardQueryDto, caller: string): Promise<ChartBoardResponse> {
    if (query.group !== undefined || query.country !== undefined) return this.scopedChartBoard(levelId, query, caller);
    if (query.period !== undefined && query.period !== 'all') {
      const read = await this.periodBoard(query, { board: 'chart', levelId }, caller);
      if (read.rows.length === 0) await this.requireChart(levelId);
      if (read.rank === null) await this.unranked(query.around as string);
      return {
        board: 'chart',
        levelId,
        period: read.period,
        ...(read.rank === undefined ? {} : { rank: read.rank }),
        entries: read.rows.map((row) => chartEntry(row as TrackRow, Number(row.rank))),
      };
    }
    if (query.around === undefined) {
      const rows = await this.boards.topTrack(levelId, query.limit ?? BOARD_DEFAULT_LIMIT);
      if (rows.length === 0) await this.requireChart(levelId);
      return { board: 'chart', levelId, entries: rows.map((row, i) => chartEntry(row, i + 1)) };
    }
    const uid = query.around;
    const k = query.k ?? BOARD_DEFAULT_K;
    const anchor = await this.boards.trackAnchor(uid, levelId);
    if (!anchor) {
      await this.requireChart(levelId);
      return { board: 'chart', levelId, rank: await this.unranked(uid), entries: [] };
    }
    if (anchor.bans.selfBanned) return { board: 'chart', levelId, rank: null, entries: [] };
    const indexed = await this.fromIndex<CheckedTrackRow>(
      this.rankState(uid, levelId, anchor),
      'track',
      anchor.bans,
      k,
      (uids) => this.boards.trackRows(levelId, uids),
      trackKeyMatches,
    );
    if (indexed)
      return {
        board: 'chart',
        levelId,
        rank: indexed.rank,
        entries: windowEntries(indexed.window, indexed.rank, chartEntry),
      };
    const { state, window } = await this.boards.trackWindow(uid, levelId, k);
    if (!state) await this.requireChart(levelId);
    const rank = state
      ? (await this.ranks.ranks(this.rankState(uid, levelId, state), state.bans, null, caller)).trackRank
      : await this.unranked(uid);
    return rank === null
      ? { board: 'chart', levelId, rank: null, entries: [] }
      : { board: 'chart', levelId, rank, entries: windowEntries(window, rank, chartEntry) };
  }

  /**
   * The ATP board of a server group or a country (docs/decisions.md "Scoped boards: groups and
   * countries"): the global board's players whose home server is in the scope, in its order,
   * ranked by their place among them. Read in SQL (ScopedBoardRepository), in one statement.
   */
  private async scopedAtpBoard(query: LeaderboardQueryDto, caller: string): Promise<AtpBoardResponse> {
    const scope = await this.scope(query);
    if (query.around === undefined) {
      const rows = await this.scoped.topSite(scope.serverIDs, query.limit ?? BOARD_DEFAULT_LIMIT);
      return { board: 'atp', scope, entries: rows.map((row, i) => atpEntry(row, i + 1)) };
    }
    const around = query.around;
    const rows = await this.counts.run(
      () => this.scoped.siteWindow(scope.serverIDs, around, query.k ?? BOARD_DEFAULT_K),
      caller,
    );
    const window = scopedWindow(rows, query.k ?? BOARD_DEFAULT_K);
    if (!window) return { board: 'atp', scope, rank: await this.unranked(query.around), entries: [] };
    const { anchor } = window;
    const key = siteKey(toTenThousandths(Number(anchor.atp)), anchor.uid);
    const rank = await this.ranks.scopedRank(scope.serverIDs, null, key, window.rowsAhead, window.seen);
    return { board: 'atp', scope, rank, entries: windowEntries(window.window, rank, atpEntry) };
  }

  /** A chart's board of a server group or a country, as scopedAtpBoard; 404 as the chart's board. */
  private async scopedChartBoard(
    levelId: number,
    query: LeaderboardQueryDto,
    caller: string,
  ): Promise<ChartBoardResponse> {
    const scope = await this.scope(query);
    if (query.around === undefined) {
      const rows = await this.scoped.topTrack(levelId, scope.serverIDs, query.limit ?? BOARD_DEFAULT_LIMIT);
      if (rows.length === 0) await this.requireChart(levelId);
      return { board: 'chart', levelId, scope, entries: rows.map((row, i) => chartEntry(row, i + 1)) };
    }
    const around = query.around;
    const rows = await this.counts.run(
      () => this.scoped.trackWindow(levelId, scope.serverIDs, around, query.k ?? BOARD_DEFAULT_K),
      caller,
    );
    const window = scopedWindow(rows, query.k ?? BOARD_DEFAULT_K);
    if (!window) {
      await this.requireChart(levelId);
      return { board: 'chart', levelId, scope, rank: await this.unranked(query.around), entries: [] };
    }
    const { anchor } = window;
    const key = trackKey(anchor.acc, Number(anchor.first_time_ms), anchor.uid);
    const rank = await this.ranks.scopedRank(scope.serverIDs, levelId, key, window.rowsAhead, window.seen);
    return { board: 'chart', levelId, scope, rank, entries: windowEntries(window.window, rank, chartEntry) };
  }

  /** The servers of the query's group or country at this read; 404 when it names none. */
  private async scope(query: LeaderboardQueryDto): Promise<BoardScopeView> {
    if (query.group !== undefined) {
      const serverIDs = await this.servers.groupServers(query.group);
      if (serverIDs.length === 0) throw new NotFoundError(`No server group named ${query.group}`);
      return { kind: 'group', name: query.group, serverIDs: serverIDs.sort((a, b) => a - b) };
    }
    const country = query.country as string;
    const serverIDs = await this.scoped.countryServers(country);
    if (serverIDs.length === 0) throw new NotFoundError(`No server in country ${country}`);
    return { kind: 'country', name: country, serverIDs: serverIDs.sort((a, b) => a - b) };
  }

  /**
   * A period's board (docs/decisions.md "Periods and seasons"): read in SQL over the period's
   * order index (live) or its archive (closed); the same top N and window as the all-time boards.
   */
  private async periodBoard(query: LeaderboardQueryDto, board: PeriodBoard, caller: string): Promise<PeriodBoardRead> {
    const period = await this.periods.resolve(query.period as string);
    if (query.around === undefined) return this.periods.top(period, board, query.limit ?? BOARD_DEFAULT_LIMIT);
    return this.periods.window(period, board, query.around, query.k ?? BOARD_DEFAULT_K, caller);
  }

  /**
   * The window from the rank index (RankAnswerService.window): the rank and the neighbours' keys,
   * then one statement reads their rows by uid in that order. null, to answer from SQL, when the
   * index cannot answer or a row does not agree with it (missing, banned, or a key that changed
   * since: a write landed between the two reads).
   */
  private async fromIndex<Row extends { uid: string; banned: boolean }>(
    state: PlayerRankState,
    board: 'site' | 'track',
    bans: BanCheck,
    k: number,
    rowsOf: (uids: string[]) => Promise<Row[]>,
    keyMatches: (row: Row, key: RankKey) => boolean,
  ): Promise<{ rank: number; window: Window<Row> } | null> {
    const indexed = await this.ranks.window(state, board, bans, k);
    if (!indexed) return null;
    const keys = [...indexed.ahead, indexed.key, ...indexed.behind];
    const rows = await rowsOf(keys.map((key) => String(key[2])));
    if (
      rows.length !== keys.length ||
      rows.some((row, i) => row.banned || row.uid !== String(keys[i][2]) || !keyMatches(row, keys[i]))
    )
      return null;
    const at = indexed.ahead.length;
    return { rank: indexed.rank, window: { ahead: rows.slice(0, at), anchor: rows[at], behind: rows.slice(at + 1) } };
  }

  /** The rank answer's view of the window's player (what RankAnswerService.current reads, taken from the window's statement). */
  private rankState(uid: string, levelId: number, state: AnchorState): PlayerRankState {
    return {
      uid,
      version: state.version,
      atpE4: state.atp === null ? null : toTenThousandths(Number(state.atp)),
      levelId,
      best: state.best,
    };
  }

  /**
   * A chart board exists for every level the catalog has a row of (active or not). Asked only when
   * the answer would be empty: a best exists only on a catalog chart (an upload adds the chart row
   * first, and rows are never deleted), so a non-empty board or a ranked player proves the chart.
   */
  private async requireChart(levelId: number): Promise<void> {
    // A placeholder (a level only uploads named) has no board: its plays are unranked.
    const chart = await this.catalog.findChart(levelId);
    if (!chart || chart.placeholder) throw new NotFoundError(`No chart with levelId ${levelId}`);
  }

  /** The rank of a player without a row on the board (null), or 404 when there is no such player. */
  private async unranked(uid: string): Promise<null> {
    if (!(await this.boards.playerExists(uid))) throw new NotFoundError(`No player with uid ${uid}`);
    return null;
  }
}
