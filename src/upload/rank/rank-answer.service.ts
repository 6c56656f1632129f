import { Injectable } from '@nestjs/common';
import { RankSourceRepository as UploadRepository } from '../rank-source.repository';
import type { BanCheck, IndexedPositions, PlayerRankState } from '../upload.types';
import { BanView } from './ban-view';
import { RankIndex } from './rank-index';

export interface Ranks {
  siteRank: number | null;
  trackRank: number | null;
}

const atpText = (atpE4: number) => (atpE4 / 10_000).toFixed(4);

/**
 * Answers a player's siteRank and trackRank (decisions.md §5): 1 + entries ahead in the rank
 * index − banned players ahead (this instance's ban view, brought up to the ban generation the
 * caller's statement saw). A banned player has no rank. When the index or the ban view cannot
 * answer, SQL counts the unbanned players ahead directly: the same numbers, in O(rank).
 */
@Injectable()
export class RankAnswerService {
  constructor(
    private readonly index: RankIndex,
    private readonly bans: BanView,
    private readonly records: UploadRepository,
  ) {}

  /** The ranks of `state`, read by a statement that saw `bans`; `staged` is what the write's stage answered (null outside a write). */
  async ranks(state: PlayerRankState, bans: BanCheck, staged: IndexedPositions | null): Promise<Ranks> {
    if (bans.selfBanned) return { siteRank: null, trackRank: null };
    const indexed = await this.index.positions(state, staged);
    const banned = indexed ? await this.bans.ensure(bans.generation, bans.dbNowMs).then(() => this.bans.bannedAhead(state), () => null) : null;
    if (indexed && banned) {
      return {
        siteRank: state.atpE4 === null || indexed.siteAhead === null ? null : indexed.siteAhead - banned.siteAhead + 1,
        trackRank: state.best === null || indexed.trackAhead === null ? null : indexed.trackAhead - banned.trackAhead + 1,
      };
    }
    const counted = await this.records.unbannedAhead(state.uid, state.atpE4 === null ? null : atpText(state.atpE4), state.levelId, state.best);
    return {
      siteRank: state.atpE4 === null ? null : counted.siteAhead + 1,
      trackRank: state.best === null ? null : counted.trackAhead + 1,
    };
  }
}
