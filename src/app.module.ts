import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { AuthGuard } from './auth/auth.guard';
import { AuthModule } from './auth/auth.module';
import { AllExceptionsFilter } from './common/filters/all-exceptions.filter';
import { RedisModule } from './common/redis/redis.module';
import { ThrottleModule } from './common/throttle/throttle.module';
import { APP_CONFIG, AppConfig } from './config/app-config';
import { DatabaseModule } from './database/database.module';
import type { DatabaseTarget } from './database/database-options';
import { HealthModule } from './health/health.module';
import { ObservabilityModule } from './observability/observability.module';
import { EventBusModule } from './common/events/event-bus.module';
import { RealtimeModule } from './realtime/realtime.module';
import { ResourcesModule } from './resources/resources.module';
import { ServerModule } from './server/server.module';
import { CatalogModule } from './catalog/catalog.module';
import { PlayerModule } from './player/player.module';
import { EconomyModule } from './economy/economy.module';
import { UploadModule } from './upload/upload.module';
import { AdminModule } from './admin/admin.module';
import { AuditModule } from './audit/audit.module';
import { StaffModule } from './staff/staff.module';
import { PublicModule } from './public/public.module';
import { RankingModule } from './ranking';
import { WebhooksModule } from './webhooks/webhooks.module';
import { PrivacyModule } from './privacy/privacy.module';
import { RetentionModule } from './retention/retention.module';

@Module({})
class ConfigModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: ConfigModule,
      global: true,
      providers: [{ provide: APP_CONFIG, useValue: config }],
      exports: [APP_CONFIG],
    };
  }
}

@Module({})
export class AppModule {
  static register(config: AppConfig, database: DatabaseTarget): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot(database, config.migrateOnStart),
        RedisModule,
        ThrottleModule,
        EventBusModule,
        // The modules with routes, hottest first: Nest registers their routes in this order, and
        // Express tries a request against every route registered before its own (docs/decisions.md
        // "Route order"). The plugin's uploads and boards, the public reads, then the plugin's other
        // routes; staff routes last.
        UploadModule,
        RankingModule,
        PublicModule,
        EconomyModule,
        PlayerModule,
        ServerModule,
        CatalogModule,
        ResourcesModule,
        AuthModule,
        AdminModule,
        WebhooksModule,
        PrivacyModule,
        RetentionModule,
        AuditModule,
        StaffModule,
        RealtimeModule,
        HealthModule,
        ObservabilityModule,
      ],
      providers: [
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
        // Deny by default. The per-caller limits are route guards (@RateLimit), which Nest runs after
        // this global one: they know who the caller is (failed logins are counted by the AuthGuard
        // itself: LoginFailureLimiter).
        { provide: APP_GUARD, useExisting: AuthGuard },
      ],
    };
  }
}
