import { Injectable } from '@nestjs/common';
import { RankSourceRepository } from './rank-source.repository';
import type { BanCheck, IndexedPositions, PlayerRankState } from './ranking.types';
import { BanView } from './ban-view';
import { CountGate } from './count-gate';
import { RankIndex, RankKey, siteKey, trackKey, TrackRead } from './rank-index/rank-index';
import { RankWindow, readRankWindow } from './rank-window';

export interface Ranks {
  siteRank: number | null;
  trackRank: number | null;
}

/** The player's key in the site order (board 'site') or in the track order of state.levelId; null without a row there. */
function keyOf(state: PlayerRankState, board: 'site' | 'track'): RankKey | null {
  if (board === 'site') return state.atpE4 === null ? null : siteKey(state.atpE4, state.uid);
  return state.best === null ? null : trackKey(state.best.acc, state.best.firstTimeMs, state.uid);
}

const atpText = (atpE4: number) => (atpE4 / 10_000).toFixed(4);

/**
 * SQL rank counts at once per instance: two of the pool's ten connections (docs/decisions.md
 * "Rank counts while the index rebuilds"), the rest stay free for logins, syncs and writes. One
 * caller (a game server's uploads, a public caller's profiles) has at most one running and 32
 * waiting (half the queue: a burst of one server's uploads waits, and another caller still finds
 * room), so a busy server or a script reading profiles cannot keep the others' counts out.
 */
const SQL_COUNT_LIMITS = { concurrency: 2, queue: 64, maxWaitMs: 3_000, retryAfterSeconds: 5, perCallerQueue: 32 };

const REFUSED_CALLER =
  'Ranks are counted in the database while the rank index is rebuilt, and this caller has one being counted and 32 ' +
  'waiting already; retry later (an upload is stored already: sent again once the index is back, it is answered)';

/**
 * Answers a player's siteRank and trackRank (decisions.md §5): 1 + entries ahead in the rank
 * index − banned players ahead (this instance's ban view, brought up to the ban generation the
 * caller's statement saw). A banned player has no rank. When the index or the ban view cannot
 * answer, SQL counts the unbanned players ahead directly: the same numbers, in O(rank), as many
 * at once as the CountGate lets through (the others answer 503 UNAVAILABLE with Retry-After).
 */
@Injectable()
export class RankAnswerService {
  private readonly sqlCounts = new CountGate(SQL_COUNT_LIMITS, undefined, REFUSED_CALLER);

  constructor(
    private readonly index: RankIndex,
    private readonly bans: BanView,
    private readonly rankSources: RankSourceRepository,
  ) {}

  /**
   * The ranks of `state`, read by a statement that saw `bans`; `staged` is what the write's stage
   * answered (null outside a write); `caller` (callerKey) takes its turn when they are counted in SQL.
   */
  async ranks(state: PlayerRankState, bans: BanCheck, staged: IndexedPositions | null, caller: string): Promise<Ranks> {
    if (bans.selfBanned) return { siteRank: null, trackRank: null };
    const indexed = await this.index.positions(state, staged);
    const banned = indexed
      ? await this.bans.ensure(bans.generation, bans.dbNowMs).then(
          () => this.bans.bannedAhead(state),
          () => null,
        )
      : null;
    if (indexed && banned) {
      return {
        siteRank: state.atpE4 === null || indexed.siteAhead === null ? null : indexed.siteAhead - banned.siteAhead + 1,
        trackRank:
          state.best === null || indexed.trackAhead === null ? null : indexed.trackAhead - banned.trackAhead + 1,
      };
    }
    return this.sqlRanks(state, caller);
  }

  /**
   * The track ranks of several bests of player `uid` (a profile), in order, read by a statement that
   * saw `bans`: the index answers them at once (rankIndex.trackPositions: one script call in Redis)
   * less the banned players ahead; when it cannot, one SQL statement counts them all, in one turn of
   * `caller`'s. All null while the player is banned.
   */
  async trackRanks(
    uid: string,
    bests: readonly TrackRead[],
    bans: BanCheck,
    caller: string,
  ): Promise<Array<number | null>> {
    if (bans.selfBanned) return bests.map(() => null);
    // The ban view reads only the best's key; no site entry, so no rating version.
    const state = ({ levelId, best }: TrackRead): PlayerRankState => ({
      uid,
      version: best.version,
      atpE4: null,
      levelId,
      best,
    });
    const indexed = await this.index.trackPositions(uid, bests);
    const viewed =
      indexed !== null &&
      (await this.bans.ensure(bans.generation, bans.dbNowMs).then(
        () => true,
        () => false,
      ));
    if (indexed !== null && viewed)
      return bests.map((read, i) => indexed[i] - this.bans.bannedAhead(state(read)).trackAhead + 1);
    const counted = await this.sqlCounts.run(() => this.rankSources.unbannedTrackAhead(uid, bests), caller);
    return counted.map((ahead) => ahead + 1);
  }

  /** The ranks of `state` counted in SQL (the unbanned players ahead), in `caller`'s turn at the CountGate. */
  private async sqlRanks(state: PlayerRankState, caller: string): Promise<Ranks> {
    const counted = await this.sqlCounts.run(
      () =>
        this.rankSources.unbannedAhead(
          state.uid,
          state.atpE4 === null ? null : atpText(state.atpE4),
          state.levelId,
          state.best,
        ),
      caller,
    );
    return {
      siteRank: state.atpE4 === null ? null : counted.siteAhead + 1,
      trackRank: state.best === null ? null : counted.trackAhead + 1,
    };
  }

  /**
   * A player's rank on a scoped board (a group's or a country's, docs/decisions.md "Scoped boards:
   * groups and countries"): 1 + `rowsAhead` (the rows ahead whose home server is one of `servers`,
   * banned players included, counted by a statement that saw `seen`) − the banned players ahead
   * among them (the ban view, brought up to that ban generation). On the site order (levelId null)
   * or chart `levelId`'s, `key` the player's.
   */
  async scopedRank(
    servers: readonly number[],
    levelId: number | null,
    key: RankKey,
    rowsAhead: number,
    seen: { generation: number; dbNowMs: number },
  ): Promise<number> {
    await this.bans.ensure(seen.generation, seen.dbNowMs);
    return rowsAhead - this.bans.bannedAheadIn(servers, levelId, key) + 1;
  }

  /** SQL rank counts run and refused since the start (the metrics). */
  sqlCountTotals(): { counted: number; refused: number } {
    return this.sqlCounts.totals();
  }

  /**
   * The rank of `state` on one board and the keys of its k nearest unbanned neighbours on each side (and its own key),
   * read from the rank index (rank-window.ts); `bans` is what the caller's statement saw. null when
   * the player is banned or has no row on the board, or the index or the ban view cannot answer:
   * the caller then answers from SQL. Read only: unlike ranks(), it does not re-sync the player's
   * Redis entries (a stale entry is not found, and the SQL path re-syncs it).
   */
  async window(
    state: PlayerRankState,
    board: 'site' | 'track',
    bans: BanCheck,
    k: number,
  ): Promise<(RankWindow & { key: RankKey }) | null> {
    const key = keyOf(state, board);
    if (bans.selfBanned || key === null) return null;
    if (
      !(await this.bans.ensure(bans.generation, bans.dbNowMs).then(
        () => true,
        () => false,
      ))
    )
      return null;
    const levelId = board === 'site' ? null : state.levelId;
    const window = await readRankWindow(
      {
        read: (span) => this.index.window({ levelId, key, ahead: span, behind: span }),
        banned: (neighbour) => this.bans.banned(levelId, neighbour),
        rank: (position) => {
          const banned = this.bans.bannedAhead(state);
          return position - (board === 'site' ? banned.siteAhead : banned.trackAhead) + 1;
        },
      },
      k,
    );
    return window && { ...window, key };
  }
}
