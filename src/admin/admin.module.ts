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
import { DatabaseBackupController } from './database-backup.controller';

/**
 * Admin reads that span modules (the player profile, the overview); each part comes from its module's
 * service. Also the online backup of the embedded database (the database module's DatabaseBackupService).
 */
@Module({
  imports: [AuthModule, CatalogModule, EconomyModule, PlayerModule, ServerModule, UploadModule],
  controllers: [PlayerProfileController, OverviewController, DatabaseBackupController],
  providers: [PlayerProfileService, OverviewService],
})
export class AdminModule {}
