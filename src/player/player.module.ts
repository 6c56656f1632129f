import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { CatalogModule } from '../catalog/catalog.module';
import { ServerModule } from '../server/server.module';
import { IdentityProviderClient } from './identity-provider.client';
import { PlayerAdminController } from './player-admin.controller';
import { PlayerController } from './player.controller';
import { PlayerRepository } from './player.repository';
import { PlayerService } from './player.service';

@Module({
  imports: [AuthModule, CatalogModule, ServerModule],
  controllers: [PlayerController, PlayerAdminController],
  providers: [PlayerRepository, PlayerService, IdentityProviderClient],
  exports: [PlayerService],
})
export class PlayerModule {}
