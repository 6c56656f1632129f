import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { CatalogAdminController } from './catalog-admin.controller';
import { CatalogController } from './catalog.controller';
import { CatalogRepository } from './catalog.repository';
import { CatalogReadCache } from './catalog-read.cache';
import { CatalogService } from './catalog.service';

/** Collections (titles, tags, assets), player unlocks and the chart catalog. Knows no player or economy module. */
@Module({
  imports: [AuthModule],
  controllers: [CatalogController, CatalogAdminController],
  providers: [CatalogRepository, CatalogService, CatalogReadCache],
  exports: [CatalogService],
})
export class CatalogModule {}
