import { Module } from '@nestjs/common';
import { ResourceIndexService } from './resource-index.service';
import { ResourceLinksService } from './resource-links.service';
import { ResourcesAdminController } from './resources-admin.controller';
import { ResourcesController } from './resources.controller';
import { ResourcesRepository } from './resources.repository';
import { ResourcesService } from './resources.service';

/** Resource manifest, download links, signed file serving and resource packs (decisions.md §6). */
@Module({
  controllers: [ResourcesController, ResourcesAdminController],
  providers: [ResourcesRepository, ResourceIndexService, ResourceLinksService, ResourcesService],
})
export class ResourcesModule {}
