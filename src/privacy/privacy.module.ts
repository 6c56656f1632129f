import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { UploadModule } from '../upload/upload.module';
import { PlayerDataRepository } from './player-data.repository';
import { PrivacyController } from './privacy.controller';
import { PrivacyService } from './privacy.service';

/** Export and erasure of one player's data (player-data.map.ts); the rank index through Upload. */
@Module({
  imports: [AuthModule, UploadModule],
  controllers: [PrivacyController],
  providers: [PlayerDataRepository, PrivacyService],
})
export class PrivacyModule {}
