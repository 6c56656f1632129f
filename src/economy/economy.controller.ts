import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import type { ServerSessionContext } from '../auth/auth.types';
import { CurrentServer } from '../common/decorators/auth.decorators';
import { QueryInt } from '../common/decorators/query-int.decorator';
import { EconomyResponse, RankingEntryResponse, SyncEconomyDto } from './dto/economy.dto';
import { BALTOP_DEFAULT_LIMIT, BALTOP_MAX_LIMIT, EconomyService } from './economy.service';

/** Balance sync and the wealth ranking; every route needs the server access token. */
@Controller()
export class EconomyController {
  constructor(private readonly economy: EconomyService) {}

  @Post('player/economy')
  @HttpCode(200)
  setBalance(@CurrentServer() server: ServerSessionContext, @Body() body: SyncEconomyDto): Promise<EconomyResponse> {
    return this.economy.setBalance(server, body);
  }

  @Get('server/baltop')
  baltop(@QueryInt({ name: 'limit', min: 1, max: BALTOP_MAX_LIMIT, default: BALTOP_DEFAULT_LIMIT }) limit: number): Promise<RankingEntryResponse[]> {
    return this.economy.baltop(limit);
  }
}
