import { Controller, Get, Param } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminAuth, CallerKey, Permission } from '../auth/auth.decorators';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { RANKS_503 } from '../ranking';
import { ParseBigIdPipe } from '../common/pipes/parse-id.pipe';
import { ApiUidParam } from '../common/validation/is-uid';
import { API_TAGS } from '../openapi/api-tags';
import { AdminPlayerProfileResponse } from './dto/player-profile.dto';
import { PlayerProfileService } from './player-profile.service';
import { HISTORY_DAYS, RatingHistoryResponse } from '../upload/dto/rating-history.dto';
import { RatingHistoryService } from '../upload/history/rating-history.service';

@ApiTags(API_TAGS.admin)
@Controller('admin/players')
@AdminAuth()
export class PlayerProfileController {
  constructor(
    private readonly profiles: PlayerProfileService,
    private readonly histories: RatingHistoryService,
  ) {}

  @Get(':uid')
  @Permission('players.read')
  @ApiOperation({
    summary: "A player's profile",
    description:
      'Identity, options, bans past and present, the latest sessions with their server, balance and its latest changes, ATP, bests, unlocked collections.',
  })
  @ApiUidParam()
  @ApiOkResponse({ type: AdminPlayerProfileResponse })
  @ApiErrors({
    400: { description: 'uid is not a positive integer', message: 'uid must be a positive integer' },
    404: { description: 'No player with this uid, or the admin API is disabled', message: 'No player with uid 1002' },
    503: RANKS_503,
  })
  profile(
    @Param('uid', new ParseBigIdPipe('uid')) uid: string,
    @CallerKey() caller: string,
  ): Promise<AdminPlayerProfileResponse> {
    return this.profiles.profile(uid, caller);
  }

  @Get(':uid/history')
  @Permission('players.read')
  @ApiOperation({
    summary: "A player's rating history",
    description: `ATP, site rank (null while banned then) and counted plays at the end of each of the last ${HISTORY_DAYS} closed days on which the player had a counted play, oldest first; banned players included.`,
  })
  @ApiUidParam()
  @ApiOkResponse({ type: RatingHistoryResponse })
  @ApiErrors({
    400: { description: 'uid is not a positive integer', message: 'uid must be a positive integer' },
    404: { description: 'No player with this uid, or the admin API is disabled', message: 'No player with uid 1002' },
  })
  history(@Param('uid', new ParseBigIdPipe('uid')) uid: string): Promise<RatingHistoryResponse> {
    return this.histories.adminHistory(uid);
  }
}
