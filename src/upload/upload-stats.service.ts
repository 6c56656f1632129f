import { Injectable, Logger } from '@nestjs/common';
import { SCORE_CHECK_NAMES, ScoreCheckName } from '../config/app-config';
import { RankAnswerService, RankIndex, RankIndexStats } from '../ranking';

/**
 * The two parts of an answered upload's time in the service: `store` from the service taking the
 * upload to its commit (waiting for a batch, or with the in-process index for the same player's
 * previous upload or an index reload; the statement; the commit), `rank` the rank answer after it
 * (the in-process index or the round trip to Redis; a reload of the banned players after a ban
 * changed; the SQL rank count while the index cannot answer).
 */
export type UploadPhase = 'store' | 'rank';

/**
 * What the metrics read of the upload: plays flagged by each check, the rank index's mode and
 * size, the SQL rank counts; and what they are told as it happens: the phases of each answered
 * upload.
 */
@Injectable()
export class UploadStatsService {
  private readonly logger = new Logger(UploadStatsService.name);
  private phaseObserver: ((phase: UploadPhase, seconds: number) => void) | null = null;

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

  /** The metrics' observer of upload phases (one per app; none without metrics). */
  observePhasesWith(observer: (phase: UploadPhase, seconds: number) => void): void {
    this.phaseObserver = observer;
  }

  /** The phases of an answered upload, in seconds. Never throws: the upload is committed, its answer must go out. */
  recordPhases(storeSeconds: number, rankSeconds: number): void {
    try {
      this.phaseObserver?.('store', storeSeconds);
      this.phaseObserver?.('rank', rankSeconds);
    } catch (error) {
      this.logger.warn(`Upload phases not recorded (${error instanceof Error ? error.message : String(error)})`);
    }
  }

  /** New records flagged by each check since the start, for the metrics. */
  flaggedCounts(): ReadonlyMap<ScoreCheckName, number> {
    return this.flagged;
  }

  /** The rank index's mode and contents, for the metrics. */
  async rankIndexStats(): Promise<RankIndexStats & { mode: RankIndex['kind'] }> {
    return { mode: this.index.kind, ...(await this.index.stats()) };
  }

  /** Times the Redis rank index was found not bound to this database's data, by reason (RankIndex.bindingMismatches). */
  rankIndexMismatches(): ReadonlyMap<string, number> {
    return this.index.bindingMismatches();
  }

  /** Ranks counted in SQL because the index could not answer, and those refused for want of capacity. */
  sqlRankCounts(): { counted: number; refused: number } {
    return this.rankAnswers.sqlCountTotals();
  }
}
