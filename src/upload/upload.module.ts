import { Clock } from '../common/clock';
import { PeriodJobService } from './periods/period-job.service';
import { SeasonAdminController } from './periods/season-admin.controller';
import { SeasonService } from './periods/season.service';
import { PeriodRepository } from './periods/period.repository';
import { PeriodService } from './periods/period.service';
import { BoardUpdates } from './board-updates';
import { Module } from '@nestjs/common';
import type Redis from 'ioredis';
import { AuthModule } from '../auth/auth.module';
import { CatalogModule } from '../catalog/catalog.module';
import { REDIS } from '../common/redis/redis.module';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { PlayRecordRepository } from './play-record.repository';
import { RankSourceRepository } from './rank-source.repository';
import { BanView } from './rank/ban-view';
import { RankAnswerService } from './rank/rank-answer.service';
import { MemoryRankIndex } from './rank/memory-rank-index';
import { RankIndex } from './rank/rank-index';
import { RedisRankIndex } from './rank/redis-rank-index';
import { RatingRecomputeService } from './recompute/rating-recompute.service';
import { PlayReviewController } from './review/play-review.controller';
import { PlayReviewRepository } from './review/play-review.repository';
import { PlayReviewService } from './review/play-review.service';
import { LeaderboardAdminController } from './leaderboard-admin.controller';
import { LeaderboardController } from './leaderboard.controller';
import { LeaderboardRepository } from './leaderboard.repository';
import { LeaderboardService } from './leaderboard.service';
import { UploadAdminController } from './upload-admin.controller';
import { UploadController } from './upload.controller';
import { UploadStatsService } from './upload-stats.service';
import { UploadService } from './upload.service';
import { RatingReadRepository } from './rating-read.repository';
import { RatingReadService } from './rating-read.service';
import { RatingRepository } from './rating.repository';
import { RatingHistoryRepository } from './history/rating-history.repository';
import { RatingHistoryService } from './history/rating-history.service';

/**
 * Score records, ratings, ranks and the leaderboard reads. Depends on Auth (player identity) and Catalog (charts);
 * only observability reads it (UploadStatsService: flagged plays, the rank index's size), admin (RatingReadService) and privacy (RatingRecomputeService.removePlayer, an erasure). The rank index lives in Redis when REDIS_URL is set, in process otherwise.
 */
@Module({
  imports: [AuthModule, CatalogModule],
  controllers: [
    UploadController,
    UploadAdminController,
    PlayReviewController,
    LeaderboardController,
    LeaderboardAdminController,
    SeasonAdminController,
  ],
  providers: [
    BoardUpdates,
    PlayRecordRepository,
    RatingRepository,
    RankSourceRepository,
    UploadService,
    UploadStatsService,
    RatingReadRepository,
    RatingReadService,
    BanView,
    RankAnswerService,
    RatingRecomputeService,
    PlayReviewRepository,
    PlayReviewService,
    LeaderboardRepository,
    LeaderboardService,
    Clock,
    RatingHistoryRepository,
    RatingHistoryService,
    PeriodRepository,
    PeriodService,
    PeriodJobService,
    SeasonService,
    {
      provide: RankIndex,
      inject: [APP_CONFIG, REDIS, RankSourceRepository],
      useFactory: (config: AppConfig, redis: Redis | null, repository: RankSourceRepository): RankIndex =>
        redis ? new RedisRankIndex(config, redis, repository) : new MemoryRankIndex(config, repository),
    },
  ],
  exports: [UploadStatsService, RatingReadService, LeaderboardService, RatingRecomputeService, RatingHistoryService],
})
export class UploadModule {}
