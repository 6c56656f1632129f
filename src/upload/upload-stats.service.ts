import { Injectable } from '@nestjs/common';
import { SCORE_CHECK_NAMES, ScoreCheckName } from '../config/app-config';
import { RankAnswerService } from './rank/rank-answer.service';
import { RankIndex, RankIndexStats } from './rank/rank-index';

/** What the metrics read of the upload: plays flagged by each check, the rank index's mode and size, and the SQL rank counts. */
@Injectable()
export class UploadStatsService {
  /** New records that failed each check since the start. */
  private readonly flagged = new Map<ScoreCheckName, number>(SCORE_CHECK_NAMES.map((check) => [check, 0]));

  constructor(
    private readonly index: RankIndex,
    private readonly rankAnswers: RankAnswerService,
  ) {}

  /** Counts a newly stored record's failed checks (not a resent copy's). */
  countFlagged(flags: readonly string[]): void {
    for (const check of flags as ScoreCheckName[]) this.flagged.set(check, (this.flagged.get(check) ?? 0) + 1);
  }

  /** New records flagged by each check since the start, for the metrics. */
  flaggedCounts(): ReadonlyMap<ScoreCheckName, number> {
    return this.flagged;
  }

  /** The rank index's mode and contents, for the metrics. */
  async rankIndexStats(): Promise<RankIndexStats & { mode: RankIndex['kind'] }> {
    return { mode: this.index.kind, ...(await this.index.stats()) };
  }

  /** Ranks counted in SQL because the index could not answer, and those refused for want of capacity. */
  sqlRankCounts(): { counted: number; refused: number } {
    return this.rankAnswers.sqlCountTotals();
  }
}
