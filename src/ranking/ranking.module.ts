import { Module } from '@nestjs/common';
import type Redis from 'ioredis';
import { AuthModule } from '../auth/auth.module';
import { CatalogModule } from '../catalog/catalog.module';
import { Clock } from '../common/clock';
import { REDIS } from '../common/redis/redis.module';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { BanView } from './ban-view';
import { BoardCountGate } from './board-count-gate';
import { BoardUpdates } from './board-updates';
import { MemoryRankIndex } from './rank-index/memory-rank-index';
import { RankIndex } from './rank-index/rank-index';
import { LeaderboardAdminController } from './leaderboard-admin.controller';
import { LeaderboardController } from './leaderboard.controller';
import { LeaderboardRepository } from './leaderboard.repository';
import { ScopedBoardRepository } from './scoped-board.repository';
import { LeaderboardService } from './leaderboard.service';
import { PeriodJobService } from './periods/period-job.service';
import { PeriodRepository } from './periods/period.repository';
import { PeriodService } from './periods/period.service';
import { SeasonAdminController } from './periods/season-admin.controller';
import { SeasonService } from './periods/season.service';
import { RankAnswerService } from './rank-answer.service';
import { RankBansService } from './rank-bans.service';
import { RankSourceRepository } from './rank-source.repository';
import { ServerModule } from '../server/server.module';
import { RedisRankIndex } from './redis/redis-rank-index';

/**
 * Ranks and boards: the rank index (in Redis when REDIS_URL is set, in process otherwise) and its
 * sources, the rank answers, the all-time and period boards (server, admin), seasons, and live
 * board updates. Knows nothing of the upload; the upload writes through RankIndex, RankBansService
 * and BoardUpdates. Outside modules import only src/ranking/index.ts (and upload's repositories
 * rank-sql.ts): .dependency-cruiser.js. Provides the one Clock (periods and the rating history).
 */
@Module({
  imports: [AuthModule, CatalogModule, ServerModule],
  controllers: [LeaderboardController, LeaderboardAdminController, SeasonAdminController],
  providers: [
    Clock,
    BoardUpdates,
    BoardCountGate,
    RankSourceRepository,
    BanView,
    RankAnswerService,
    RankBansService,
    LeaderboardRepository,
    ScopedBoardRepository,
    LeaderboardService,
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
  exports: [Clock, BoardUpdates, RankIndex, RankAnswerService, RankBansService, LeaderboardService],
})
export class RankingModule {}
