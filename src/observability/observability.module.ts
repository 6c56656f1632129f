import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AuthModule } from '../auth/auth.module';
import { PlayerModule } from '../player/player.module';
import { RankingModule } from '../ranking';
import { RealtimeModule } from '../realtime/realtime.module';
import { RetentionModule } from '../retention/retention.module';
import { UploadModule } from '../upload/upload.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { MetricsTokenGuard } from './metrics-token.guard';
import { MetricsController } from './metrics.controller';
import { MetricsService } from './metrics.service';

/**
 * Prometheus metrics (`GET /metrics`). It reads auth (live session counts), player (session
 * takeovers), realtime (open sockets), retention (purged rows), ranking (board windows counted in
 * SQL), upload (the rank index) and
 * webhooks (deliveries, the outbox) at scrape time; nothing depends on it. Request logging and the request observer are
 * set up by `startService` (src/app.factory.ts) through request-observer.ts. Which routes feed the
 * login and upload counters, the handlers say with `@CountAs(…)` (DiscoveryModule finds them).
 */
@Module({
  imports: [
    AuthModule,
    PlayerModule,
    RankingModule,
    RealtimeModule,
    RetentionModule,
    UploadModule,
    WebhooksModule,
    DiscoveryModule,
  ],
  controllers: [MetricsController],
  providers: [MetricsService, MetricsTokenGuard],
})
export class ObservabilityModule {}
