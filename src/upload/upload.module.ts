import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { CatalogModule } from '../catalog/catalog.module';
import { RankingModule } from '../ranking';
import { PlayRecordRepository } from './play-record.repository';
import { RatingRecomputeService } from './recompute/rating-recompute.service';
import { PlayReviewController } from './review/play-review.controller';
import { PlayReviewRepository } from './review/play-review.repository';
import { PlayReviewService } from './review/play-review.service';
import { UploadAdminController } from './upload-admin.controller';
import { UploadController } from './upload.controller';
import { UploadStatsService } from './upload-stats.service';
import { UploadService } from './upload.service';
import { RatingReadRepository } from './rating-read.repository';
import { RatingReadService } from './rating-read.service';
import { RatingRepository } from './rating.repository';
import { RatingHistoryRepository } from './history/rating-history.repository';
import { RatingHistoryService } from './history/rating-history.service';
import { RatingHistoryController } from './history/rating-history.controller';
import { PeriodRecountRepository } from './review/period-recount.repository';

/**
 * Taking plays: score records, the rating arithmetic and the ratings and bests it writes, score
 * integrity and its review, the recompute, the rating reads and history. Depends on Auth (player
 * identity), Catalog (charts) and Ranking (it writes the rank index, the ban generation and board
 * updates; ranking never imports upload). Read by observability (UploadStatsService), admin
 * (RatingReadService, RatingHistoryService), public and privacy (RatingRecomputeService.removePlayer).
 */
@Module({
  imports: [AuthModule, CatalogModule, RankingModule],
  controllers: [UploadController, UploadAdminController, PlayReviewController, RatingHistoryController],
  providers: [
    PlayRecordRepository,
    RatingRepository,
    UploadService,
    UploadStatsService,
    RatingReadRepository,
    RatingReadService,
    RatingRecomputeService,
    PlayReviewRepository,
    PeriodRecountRepository,
    PlayReviewService,
    RatingHistoryRepository,
    RatingHistoryService,
  ],
  exports: [UploadStatsService, RatingReadService, RatingRecomputeService, RatingHistoryService],
})
export class UploadModule {}
