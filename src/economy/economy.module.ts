import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { EconomyAdminController } from './economy-admin.controller';
import { EconomyController } from './economy.controller';
import { EconomyRepository } from './economy.repository';
import { EconomyService } from './economy.service';

/** wattHour balances, their history and the wealth ranking (baltop). */
@Module({
  imports: [AuthModule],
  controllers: [EconomyController, EconomyAdminController],
  providers: [EconomyRepository, EconomyService],
  exports: [EconomyService],
})
export class EconomyModule {}
