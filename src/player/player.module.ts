import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { CatalogModule } from '../catalog/catalog.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { ServerModule } from '../server/server.module';
import { IdentityProviderClient } from './identity-provider.client';
import { PlayerAdminController } from './player-admin.controller';
import { PlayerController } from './player.controller';
import { PlayerRepository } from './player.repository';
import { PlayerAdminService } from './player-admin.service';
import { PlayerLoginService } from './player-login.service';
import { PlayerService } from './player.service';
import { PlayerReadController } from './player-read.controller';
import { PlayerReadRepository } from './player-read.repository';
import { PlayerReadService } from './player-read.service';

@Module({
  imports: [AuthModule, CatalogModule, ServerModule, WebhooksModule],
  controllers: [PlayerController, PlayerAdminController, PlayerReadController],
  providers: [
    PlayerRepository,
    PlayerLoginService,
    PlayerAdminService,
    PlayerService,
    IdentityProviderClient,
    PlayerReadRepository,
    PlayerReadService,
  ],
  exports: [PlayerLoginService, PlayerService, PlayerReadService],
})
export class PlayerModule {}
