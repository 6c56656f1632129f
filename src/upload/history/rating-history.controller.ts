import { Controller, Get, Param } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../../common/decorators/api-errors.decorator';
import { ParseBigIdPipe } from '../../common/pipes/parse-id.pipe';
import { ApiUidParam } from '../../common/validation/is-uid';
import { API_TAGS } from '../../openapi/api-tags';
import { HISTORY_DAYS, RatingHistoryResponse } from '../dto/rating-history.dto';
import { RatingHistoryService } from './rating-history.service';

const SERVER_TOKEN_401 = 'Missing, unknown or expired server access token';

/**
 * A player's rating history for game servers, beside the boards (/server/leaderboards, ranking's
 * LeaderboardController): the history is taken from the upload's counted plays, so it stays here.
 */
@ApiTags(API_TAGS.upload)
@Controller('server/leaderboards')
export class RatingHistoryController {
  constructor(private readonly histories: RatingHistoryService) {}

  @Get('players/:uid/history')
  @ApiOperation({
    summary: "A player's rating history",
    description: `The player's ATP, site rank and counted plays as taken at the end of each of the last ${HISTORY_DAYS} closed days on which it had a counted play (days in the service's time zone), oldest first. As on the boards, a player under an active ban has no entries (\`days: []\`).`,
  })
  @ApiUidParam()
  @ApiOkResponse({ type: RatingHistoryResponse })
  @ApiErrors({
    400: { description: 'uid is not a positive integer', message: 'uid must be a positive integer' },
    401: SERVER_TOKEN_401,
    404: { description: 'No player with this uid', message: 'No player with uid 1001' },
  })
  history(@Param('uid', new ParseBigIdPipe('uid')) uid: string): Promise<RatingHistoryResponse> {
    return this.histories.serverHistory(uid);
  }
}
