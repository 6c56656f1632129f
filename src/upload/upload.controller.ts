import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { ServerSessionContext } from '../auth/auth.types';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { RANKS_503 } from '../ranking';
import { CurrentServer } from '../auth/auth.decorators';
import { API_TAGS } from '../openapi/api-tags';
import { UploadRecordDto } from './dto/upload-record.dto';
import { UploadResponse } from './dto/upload.response';
import { UploadService } from './upload.service';
import { CountAs } from '../common/decorators/route-metric.decorator';

/** Score upload of the game server; needs the server access token. */
@ApiTags(API_TAGS.upload)
@Controller('player')
export class UploadController {
  constructor(private readonly uploads: UploadService) {}

  @Post('upload')
  @CountAs('upload')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Upload one gameplay record',
    description:
      'Stores the record, updates the best on the chart and the ATP, and answers the ranking figures. The same record sent again ' +
      '(player, levelID, payload.time) is stored once and answers the same figures.',
  })
  @ApiOkResponse({ type: UploadResponse })
  @ApiErrors({
    400: {
      description:
        "A field is missing or invalid, payload.type is not gameplay, or server.serverID is not the calling session's",
      message: 'payload.acc must be a number from 0 to 100',
    },
    401: {
      description:
        'Missing, unknown or expired server access token; or player.playerUID does not own the player token, or the player has neither a live token ' +
        'nor an open session under the calling server session renewed within two resync intervals (PLAYER_RESYNC_INTERVAL_SECONDS × 2)',
      message: 'Invalid or expired player access token',
    },
    413: 'The body is over 256 KiB',
    503: RANKS_503,
  })
  upload(@CurrentServer() server: ServerSessionContext, @Body() body: UploadRecordDto): Promise<UploadResponse> {
    return this.uploads.upload(server, body);
  }
}
