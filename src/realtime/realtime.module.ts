import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { PlayerModule } from '../player/player.module';
import { ServerModule } from '../server/server.module';
import { ChatBudgets } from './chat-budget';
import { RealtimeController } from './realtime.controller';
import { RealtimeGateway } from './realtime.gateway';
import { RealtimeRepository } from './realtime.repository';
import { ConnectionRegistry } from './connection-registry';
import { RealtimeService } from './realtime.service';

/**
 * The WebSocket edge. It depends on the domain modules it serves (auth, player, server); no
 * domain module depends on it — they publish on the event bus (src/common/events). Only
 * observability reads it (the connection gauge).
 */
@Module({
  imports: [AuthModule, PlayerModule, ServerModule],
  controllers: [RealtimeController],
  providers: [RealtimeRepository, ConnectionRegistry, RealtimeService, RealtimeGateway, ChatBudgets],
  exports: [ConnectionRegistry],
})
export class RealtimeModule {}
