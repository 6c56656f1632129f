import { Injectable } from '@nestjs/common';
import { RankAnswerService, roundRating, toTenThousandths } from '../ranking';
import { playRating } from './rating';
import { RatingReadRepository } from './rating-read.repository';

export interface PlayerRatingSummary {
  /** null while the player has no counted play. */
  atp: number | null;
  /** The upload's siteRank now; null without a counted play or while banned. */
  siteRank: number | null;
  /** `chartName`: null when the catalog has no row for the chart. */
  bests: { levelId: number; chartName: string | null; acc: number; rating: number; trackRank: number | null }[];
  bestCount: number;
  /** The newest counted plays; empty unless asked for (`recentLimit`). */
  recent: RecentPlay[];
}

/** A counted play, newest first (the public profile). */
export interface RecentPlay {
  levelId: number;
  chartName: string;
  acc: number;
  /** The play's rating at the chart's constant now (rating.ts), 4 decimals. */
  rating: number;
  fullCombo: boolean;
  allPerfect: boolean;
  maxCombo: number;
  /** When the service received it. */
  receivedAt: Date;
}

/** Read-only view of a player's ATP, bests, ranks and plays (GET /admin/players/{uid}, the public profile). */
@Injectable()
export class RatingReadService {
  constructor(
    private readonly ratings: RatingReadRepository,
    private readonly rankAnswers: RankAnswerService,
  ) {}

  /**
   * ATP and the best charts (at most `bestLimit`, ≥ 1) with the ranks the player's next upload
   * would answer (siteRank, and trackRank per chart), each from the rank index (SQL when it cannot
   * answer, one count at a time in `caller`'s turn: callerKey); null while banned. With
   * `recentLimit` > 0, also the player's newest plays that count (counted-record.rule.ts). One
   * statement reads all of it, in one snapshot.
   */
  async playerRatings(uid: string, bestLimit: number, caller: string, recentLimit = 0): Promise<PlayerRatingSummary> {
    const { rating, bans, bests, bestCount, recent } = await this.ratings.profile(uid, bestLimit, recentLimit);
    const version = rating === null ? 0 : Number(rating.version);
    const atpE4 = rating === null ? null : toTenThousandths(Number(rating.atp));
    // The site rank is asked once, beside the bests' track ranks asked all at once
    // (RankAnswerService.trackRanks: one script call with the rank index in Redis, not one a best),
    // so no site rank is worked out only to be thrown away and the player's site entry is left as it is.
    const [siteRank, trackRanks] = await Promise.all([
      atpE4 === null
        ? null
        : this.rankAnswers
            .ranks({ uid, version, atpE4, levelId: 0, best: null }, bans, null, caller)
            .then((ranks) => ranks.siteRank),
      this.rankAnswers.trackRanks(
        uid,
        bests.map((row) => ({
          levelId: row.level_id,
          best: {
            acc: row.acc,
            firstTimeMs: Number(row.first_time_ms),
            recordId: row.record_id,
            version: Number(row.version),
          },
        })),
        bans,
        caller,
      ),
    ]);
    const ranked = bests.map((row, i) => ({
      levelId: row.level_id,
      chartName: row.chart_name,
      acc: row.acc,
      rating: row.rating,
      trackRank: trackRanks[i],
    }));
    return {
      atp: rating === null ? null : Number(rating.atp),
      siteRank,
      bests: ranked,
      bestCount,
      recent: recent.map((row) => ({
        levelId: row.level_id,
        chartName: row.chart_name,
        acc: row.acc,
        rating: roundRating(playRating(row.difficulty_constant, row.acc)),
        fullCombo: row.full_combo,
        allPerfect: row.all_perfect,
        maxCombo: row.max_combo,
        receivedAt: new Date(Number(row.received_ms)),
      })),
    };
  }

  /** Uploads received in the last minute and the last 15 minutes (GET /admin/overview). */
  recentUploads(): Promise<{ lastMinute: number; last15Minutes: number }> {
    return this.ratings.recentUploads();
  }
}
