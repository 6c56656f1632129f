import { Controller, Get, Param } from '@nestjs/common';
import { AdminAuth } from '../common/decorators/auth.decorators';
import { QueryInt } from '../common/decorators/query-int.decorator';
import { ParseBigIdPipe } from '../common/pipes/parse-id.pipe';
import { AdminEconomyResponse } from './dto/economy.dto';
import { EconomyService, HISTORY_DEFAULT_LIMIT, HISTORY_MAX_LIMIT } from './economy.service';

@Controller('admin/players')
@AdminAuth()
export class EconomyAdminController {
  constructor(private readonly economy: EconomyService) {}

  /** The balance and its history, newest first, `limit` per page; `before` pages to older changes. */
  @Get(':uid/economy')
  getEconomy(
    @Param('uid', new ParseBigIdPipe('uid')) uid: string,
    @QueryInt({ name: 'limit', min: 1, max: HISTORY_MAX_LIMIT, default: HISTORY_DEFAULT_LIMIT }) limit: number,
    @QueryInt({ name: 'before', min: 1, max: Number.MAX_SAFE_INTEGER }) before: number | undefined,
  ): Promise<AdminEconomyResponse> {
    return this.economy.adminEconomy(uid, limit, before);
  }
}
