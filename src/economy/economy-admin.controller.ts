import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { AdminAuth, Permission } from '../auth/auth.decorators';
import { ParseBigIdPipe } from '../common/pipes/parse-id.pipe';
import { ApiUidParam } from '../common/validation/is-uid';
import { API_TAGS } from '../openapi/api-tags';
import { AdminEconomyResponse } from './dto/economy.dto';
import { EconomyHistoryQueryDto } from './dto/economy-query.dto';
import { EconomyService, HISTORY_DEFAULT_LIMIT, HISTORY_MAX_LIMIT } from './economy.service';

@ApiTags(API_TAGS.admin)
@Controller('admin/players')
@AdminAuth()
export class EconomyAdminController {
  constructor(private readonly economy: EconomyService) {}

  /** The balance and its history, newest first, `limit` per page; `before` pages to older changes. */
  @Get(':uid/economy')
  @Permission('players.read')
  @ApiOperation({
    summary: "A player's balance and its history",
    description: 'Newest change first, `limit` per page; `before` pages to older changes.',
  })
  @ApiUidParam()
  @ApiOkResponse({ type: AdminEconomyResponse })
  @ApiErrors({
    400: {
      description: 'uid, limit or before is not an integer in its range',
      message: `limit must be an integer from 1 to ${HISTORY_MAX_LIMIT}`,
    },
    404: { description: 'No player with this uid, or the admin API is disabled', message: 'No player with uid 1001' },
  })
  getEconomy(
    @Param('uid', new ParseBigIdPipe('uid')) uid: string,
    @Query() query: EconomyHistoryQueryDto,
  ): Promise<AdminEconomyResponse> {
    return this.economy.adminEconomy(uid, query.limit ?? HISTORY_DEFAULT_LIMIT, query.before);
  }
}
