import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { ServerSessionContext } from '../auth/auth.types';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { CurrentServer } from '../auth/auth.decorators';
import { API_TAGS } from '../openapi/api-tags';
import { EconomyResponse, RankingEntryResponse, SyncEconomyDto } from './dto/economy.dto';
import { BaltopQueryDto } from './dto/economy-query.dto';
import { BALTOP_DEFAULT_LIMIT, BALTOP_MAX_LIMIT, EconomyService } from './economy.service';

const SERVER_TOKEN_401 = 'Missing, unknown or expired server access token';

/** Balance sync and the wealth ranking; every route needs the server access token. */
@ApiTags(API_TAGS.economy)
@Controller()
export class EconomyController {
  constructor(private readonly economy: EconomyService) {}

  @Post('player/economy')
  @HttpCode(200)
  @ApiOperation({
    summary: "Store a player's balance",
    description:
      'Overwrites the balance with the value sent (no arithmetic) and records the change in the history; sending the stored balance changes and records nothing. The plugin calls it after each local change.',
  })
  @ApiOkResponse({ type: EconomyResponse })
  @ApiErrors({
    400: {
      description: 'uid, accessToken or wattHour is missing or invalid, or wattHour is below 0',
      message: 'wattHour must not be below 0',
    },
    401: {
      description: `${SERVER_TOKEN_401}; or the player token is invalid, expired, of another uid or of another server session`,
      message: 'Invalid or expired player access token',
    },
    404: { description: 'No player with this uid', message: 'No player with uid 1001' },
    409: {
      description:
        'CONFLICT: expectedWattHour was given and the stored balance differs; the body adds the stored `wattHour`, nothing changed',
      code: 'CONFLICT',
      message: 'The balance is 12500, not the expected 12000; nothing was changed',
    },
    413: 'The body is over 256 KiB',
  })
  setBalance(@CurrentServer() server: ServerSessionContext, @Body() body: SyncEconomyDto): Promise<EconomyResponse> {
    return this.economy.setBalance(server, body);
  }

  @Get('server/baltop')
  @ApiOperation({
    summary: 'The wealth ranking',
    description: 'wattHour descending, then uid ascending; players under an active ban are left out.',
  })
  @ApiOkResponse({ type: [RankingEntryResponse] })
  @ApiErrors({
    400: {
      description: 'limit is not an integer from 1 to 100',
      message: `limit must be an integer from 1 to ${BALTOP_MAX_LIMIT}`,
    },
    401: SERVER_TOKEN_401,
  })
  baltop(@Query() query: BaltopQueryDto): Promise<RankingEntryResponse[]> {
    return this.economy.baltop(query.limit ?? BALTOP_DEFAULT_LIMIT);
  }
}
