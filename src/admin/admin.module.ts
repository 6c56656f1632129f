import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { CatalogModule } from '../catalog/catalog.module';
import { EconomyModule } from '../economy/economy.module';
import { PlayerModule } from '../player/player.module';
import { ServerModule } from '../server/server.module';
import { UploadModule } from '../upload/upload.module';
import { PlayerProfileController } from './player-profile.controller';
import { PlayerProfileService } from './player-profile.service';
import { OverviewController } from './overview.controller';
import { OverviewService } from './overview.service';

/** Admin reads that span modules (the player profile, the overview); each part comes from its module's service. */
@Module({
  imports: [AuthModule, CatalogModule, EconomyModule, PlayerModule, ServerModule, UploadModule],
  controllers: [PlayerProfileController, OverviewController],
  providers: [PlayerProfileService, OverviewService],
})
export class AdminModule {}
