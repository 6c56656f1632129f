import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { ServerAdminController } from './server-admin.controller';
import { ServerController } from './server.controller';
import { ServerRepository } from './server.repository';
import { ServerService } from './server.service';

@Module({
  imports: [AuthModule],
  controllers: [ServerController, ServerAdminController],
  providers: [ServerRepository, ServerService],
  exports: [ServerService],
})
export class ServerModule {}
