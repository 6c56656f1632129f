import { Inject, Injectable } from '@nestjs/common';
import { CatalogService } from '../catalog/catalog.service';
import { BadRequestError, NotFoundError } from '../common/errors/app-error';
import { formatLocalDateTime } from '../common/time';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { EconomyService } from '../economy/economy.service';
import { PlayerReadService, PublicPlayer } from '../player/player-read.service';
import {
  AtpBoardResponse,
  type BoardScopeView,
  ChartBoardResponse,
  FirstPlace,
  LeaderboardQueryDto,
  LeaderboardService,
  ScopedAtpBoardResponse,
  ScopedChartBoardResponse,
  roundRating,
} from '../ranking';
import { RatingReadService } from '../upload/rating-read.service';
import { RatingHistoryResponse } from '../upload/dto/rating-history.dto';
import { RatingHistoryService } from '../upload/history/rating-history.service';
import {
  FIRST_PLACES_DEFAULT_LIMIT,
  FIRST_PLACES_MAX_LIMIT,
  FirstPlacesQueryDto,
  FirstPlacesResponse,
  ONE_NAME_FILTER,
  PlayerProfileQueryDto,
  PlayerSearchQueryDto,
  PlayerSearchResponse,
  PROFILE_DEFAULT_BESTS,
  PROFILE_DEFAULT_RECENT,
  PublicPlayerProfile,
  SEARCH_DEFAULT_LIMIT,
} from './dto/public-read.dto';
import { PreparedAnswer } from './public-http';

/** A board answer without its scope's server ids (BoardScopeView.serverIDs: not in the public API). */
export type PublicBoard<T extends AtpBoardResponse | ChartBoardResponse> = Omit<T, 'scope'> & {
  scope?: Omit<BoardScopeView, 'serverIDs'>;
};

/**
 * The public API's reads, each put together from the module that owns it: boards and ranks from
 * Upload (LeaderboardService, RatingReadService: the rank index the game's own answers come from,
 * so a public rank is the game's rank), players from Player (unknown and banned players alike are
 * not there), charts and titles from Catalog, the balance from Economy (only where an operator
 * turned it on). Nothing here decides what counts, who is banned or how boards are ordered.
 */
@Injectable()
export class PublicService {
  /** Rank 1 of every chart, newest first: one statement over every chart, kept for max-age (at least a second). */
  private firstPlacesMemo: { until: number; entries: Promise<FirstPlace[]> } | null = null;

  constructor(
    private readonly boards: LeaderboardService,
    private readonly ratings: RatingReadService,
    private readonly players: PlayerReadService,
    private readonly catalog: CatalogService,
    private readonly economy: EconomyService,
    private readonly histories: RatingHistoryService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async atpBoard(query: LeaderboardQueryDto, caller: string): Promise<PublicBoard<AtpBoardResponse>> {
    return this.publicBoard(await this.boards.atpBoard(query, caller), query);
  }

  async chartBoard(
    levelId: number,
    query: LeaderboardQueryDto,
    caller: string,
  ): Promise<PublicBoard<ChartBoardResponse>> {
    return this.publicBoard(await this.boards.chartBoard(levelId, query, caller), query);
  }

  atpAmong(uids: string[]): Promise<ScopedAtpBoardResponse> {
    return this.boards.atpAmong(uids);
  }

  chartAmong(levelId: number, uids: string[]): Promise<ScopedChartBoardResponse> {
    return this.boards.chartAmong(levelId, uids);
  }

  /** The active charts, as GET /server/charts lists them (the catalog's cached answer). */
  async charts(): Promise<PreparedAnswer> {
    return new PreparedAnswer(await this.catalog.listActiveCharts());
  }

  async firstPlaces(query: FirstPlacesQueryDto): Promise<FirstPlacesResponse> {
    const now = Date.now();
    let memo = this.firstPlacesMemo;
    if (memo === null || memo.until <= now) {
      const fresh = {
        until: now + Math.max(1, this.config.publicApiMaxAgeSeconds) * 1_000,
        entries: this.boards.firstPlaces(FIRST_PLACES_MAX_LIMIT),
      };
      // A failed read is not kept: the next call reads again.
      fresh.entries.catch(() => {
        if (this.firstPlacesMemo === fresh) this.firstPlacesMemo = null;
      });
      this.firstPlacesMemo = memo = fresh;
    }
    const entries = (await memo.entries).slice(0, query.limit ?? FIRST_PLACES_DEFAULT_LIMIT);
    return { entries: entries.map((entry) => ({ ...entry, reachedAt: formatLocalDateTime(entry.reachedAt) })) };
  }

  async searchPlayers(query: PlayerSearchQueryDto): Promise<PlayerSearchResponse> {
    const exact = query.name !== undefined;
    const name = query.name ?? query.prefix;
    if (name === undefined) throw new BadRequestError(ONE_NAME_FILTER);
    return { players: await this.players.publicPlayersByName(name, exact, query.limit ?? SEARCH_DEFAULT_LIMIT) };
  }

  /** The profile of a player who is known and not under an active ban; 404 otherwise (the same answer for both). */
  async profile(
    by: { uid: string } | { uuid: string },
    query: PlayerProfileQueryDto,
    caller: string,
  ): Promise<PublicPlayerProfile> {
    const player = await this.players.publicPlayer(by);
    if (player === null)
      throw new NotFoundError('uid' in by ? `No player with uid ${by.uid}` : `No player with uuid ${by.uuid}`);
    return this.profileOf(player, query, caller);
  }

  /** The rating history of a player who is known and not under an active ban; 404 otherwise, as the profile. */
  async history(uid: string): Promise<RatingHistoryResponse> {
    if ((await this.players.publicPlayer({ uid })) === null) throw new NotFoundError(`No player with uid ${uid}`);
    return this.histories.read(uid);
  }

  /**
   * A board as the public sees it. A window around a banned player is 404 with the unknown uid's
   * message (the game's routes answer it with no rank and no entries, which told a ban from a
   * typo); on a live board the answer of a window without a rank is the only one where that can
   * be. A closed period's archive keeps the players it froze, so there the players under an active
   * ban now are taken out (their ranks left as gaps, as an erasure's) and a window around one is
   * the same 404: a ban after the close shows on the public API no more than a live ban does. A
   * scope leaves out its servers' ids: no server is in a public answer.
   */
  private async publicBoard<T extends AtpBoardResponse | ChartBoardResponse>(
    answer: T,
    query: LeaderboardQueryDto,
  ): Promise<PublicBoard<T>> {
    const around = query.around;
    const unknown = () => new NotFoundError(`No player with uid ${String(around)}`);
    if (around !== undefined && answer.rank === null && (await this.players.publicPlayer({ uid: around })) === null)
      throw unknown();
    let shown: T = answer;
    if (answer.period?.closed === true) {
      const uids = answer.entries.map((entry) => String(entry.uid));
      if (around !== undefined && answer.rank !== null) uids.push(around);
      const banned = new Set(await this.players.bannedAmong(uids));
      if (around !== undefined && banned.has(around)) throw unknown();
      if (banned.size > 0)
        shown = { ...answer, entries: answer.entries.filter((entry) => !banned.has(String(entry.uid))) };
    }
    if (shown.scope === undefined) return shown;
    return { ...shown, scope: { kind: shown.scope.kind, name: shown.scope.name } };
  }

  private async profileOf(
    player: PublicPlayer,
    query: PlayerProfileQueryDto,
    caller: string,
  ): Promise<PublicPlayerProfile> {
    const uid = String(player.uid);
    const [ratings, titles, wattHour] = await Promise.all([
      this.ratings.playerRatings(
        uid,
        query.bests ?? PROFILE_DEFAULT_BESTS,
        caller,
        query.recent ?? PROFILE_DEFAULT_RECENT,
      ),
      this.catalog.playerTitles(uid),
      this.config.publicApiFields.has('balance') ? this.economy.balanceOf(uid) : Promise.resolve(null),
    ]);
    return {
      ...player,
      atp: ratings.atp,
      siteRank: ratings.siteRank,
      bestCount: ratings.bestCount,
      bests: ratings.bests.map((best) => ({
        levelId: best.levelId,
        chartName: best.chartName ?? '',
        acc: best.acc,
        rating: roundRating(best.rating),
        trackRank: best.trackRank,
      })),
      recentPlays: ratings.recent.map((play) => ({
        levelId: play.levelId,
        chartName: play.chartName,
        acc: play.acc,
        rating: play.rating,
        fullCombo: play.fullCombo,
        allPerfect: play.allPerfect,
        maxCombo: play.maxCombo,
        playedAt: formatLocalDateTime(play.receivedAt),
      })),
      titles,
      ...(wattHour === null ? {} : { wattHour }),
    };
  }
}
