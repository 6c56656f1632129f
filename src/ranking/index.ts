/**
 * The ranking module's surface: what every other module may import of it (.dependency-cruiser.js
 * "ranking-surface"; upload's repositories also read rank-sql.ts). The upload writes ranks through
 * RankIndex, RankBansService and BoardUpdates; the read APIs show the boards through
 * LeaderboardService and its DTOs. Nothing here imports the upload.
 */
export { RankingModule } from './ranking.module';
export type * from './ranking.types';
export { RATING_DECIMALS, roundRating, toTenThousandths } from './rating-scale';
export { RankIndex } from './rank-index/rank-index';
export type { IndexEntries, RankIndexStats, RankKey, RankWrite, TrackRead } from './rank-index/rank-index';
export { RankAnswerService } from './rank-answer.service';
export { RankBansService } from './rank-bans.service';
export { BoardUpdates } from './board-updates';
export { RANKS_503 } from './count-gate';
export { ARCHIVE_BLOCK } from './periods/period.repository';
export { LeaderboardService } from './leaderboard.service';
export type { FirstPlace } from './leaderboard.service';
export { ParseLevelIdPipe } from './pipes/level-id.pipe';
export {
  AtpBoardResponse,
  BOARD_MAX_K,
  BOARD_MAX_LIMIT,
  ChartBoardResponse,
  DISPLAY_NAME,
  LeaderboardQueryDto,
  RequiresOther,
  SCOPED_MAX_UIDS,
  ScopedAtpBoardResponse,
  ScopedBoardQueryDto,
  ScopedChartBoardResponse,
  UID,
  USERNAME,
} from './dto/leaderboard.dto';
export type { BoardScopeView } from './dto/board-scope.dto';
