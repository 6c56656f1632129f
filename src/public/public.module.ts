import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { AuthModule } from '../auth/auth.module';
import { CatalogModule } from '../catalog/catalog.module';
import { EconomyModule } from '../economy/economy.module';
import { PlayerModule } from '../player/player.module';
import { RankingModule } from '../ranking';
import { UploadModule } from '../upload/upload.module';
import { ApiKeyAdminController } from './api-key-admin.controller';
import { ApiKeyGuard } from './api-key.guard';
import { ApiKeyRepository } from './api-key.repository';
import { ApiKeyService } from './api-key.service';
import { PublicHttpMiddleware, PublicResponder } from './public-http';
import { PublicController } from './public.controller';
import { PublicService } from './public.service';

/**
 * The public read API (issue #43; docs/decisions.md "Public API"): `/public/v1` for websites, bots
 * and lobby plugins, its keys (`/admin/api-keys`), their limits, CORS and caching. Reads through
 * the services of the modules that own the data. Its HTTP middleware (CORS, Vary, no-store) is
 * mounted by app.factory (mountPublicHttp).
 */
@Module({
  imports: [AuthModule, AuditModule, CatalogModule, EconomyModule, PlayerModule, RankingModule, UploadModule],
  controllers: [PublicController, ApiKeyAdminController],
  providers: [ApiKeyRepository, ApiKeyService, ApiKeyGuard, PublicService, PublicResponder, PublicHttpMiddleware],
})
export class PublicModule {}
