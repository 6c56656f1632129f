import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminAuth, Permission } from '../auth/auth.decorators';
import { Audited, pathId } from '../audit/audited.decorator';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { ParseBigIdPipe } from '../common/pipes/parse-id.pipe';
import { ApiUidParam } from '../common/validation/is-uid';
import { API_TAGS } from '../openapi/api-tags';
import { ErasePlayerDto, PlayerErasureResponse, PlayerExportResponse } from './dto/player-privacy.dto';
import { PrivacyService } from './privacy.service';

const uidPipe = new ParseBigIdPipe('uid');
const NO_PLAYER_404 = {
  description: 'No player with this uid (the message says when it was erased), or the admin API is disabled',
  message: 'No player with uid 1002',
};

/**
 * Privacy requests (docs/operations.md "Answering a privacy request"). The export is a POST: handing
 * out every row of a person is an act the audit log records, and no admin read is audited.
 */
@ApiTags(API_TAGS.admin)
@Controller('admin/players')
@AdminAuth()
export class PrivacyController {
  constructor(private readonly privacy: PrivacyService) {}

  @Post(':uid/export')
  @Permission('players.export')
  @HttpCode(200)
  @ApiOperation({
    summary: "Export a player's data",
    description: 'One JSON document of every row that refers to the player, read in one snapshot.',
  })
  @ApiUidParam()
  @ApiOkResponse({ type: PlayerExportResponse })
  @ApiErrors({ 400: 'uid is not a positive integer', 404: NO_PLAYER_404 })
  @Audited('player.export', (input) => `player:${pathId(input, 'uid')}`, () => ({}))
  exportPlayer(@Param('uid', uidPipe) uid: string): Promise<PlayerExportResponse> {
    return this.privacy.exportPlayer(uid);
  }

  @Post(':uid/erase')
  @Permission('players.erase')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Erase a player',
    description:
      "One transaction: deletes the player's rows, anonymises other players' rows that name them, keeps the audit rows under a pseudonym, frees the name, drops their ranks on every instance, logs their session out (kick_player) and leaves a tombstone that refuses later uploads for the uid. Cannot be undone.",
  })
  @ApiUidParam()
  @ApiOkResponse({ type: PlayerErasureResponse })
  @ApiErrors({
    400: {
      description: 'uid is invalid, or confirm is not the player’s username',
      message: 'confirm must be the player’s current username, exactly',
    },
    404: NO_PLAYER_404,
    413: 'The body is over 256 KiB',
  })
  // The row names the pseudonym, never the uid or the name (docs/decisions.md "Erasing a player").
  @Audited(
    'player.erase',
    ({ result }) => `player:${(result as PlayerErasureResponse).pseudonym}`,
    ({ result }) => ({ rows: (result as PlayerErasureResponse).rows }),
  )
  erasePlayer(@Param('uid', uidPipe) uid: string, @Body() body: ErasePlayerDto): Promise<PlayerErasureResponse> {
    return this.privacy.erasePlayer(uid, body.confirm);
  }
}
