import { Body, Controller, Delete, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { OptionalBody } from '../common/decorators/optional-body.decorator';
import { AdminAuth, Permission } from '../auth/auth.decorators';
import { ParseBigIdPipe } from '../common/pipes/parse-id.pipe';
import { ApiUidParam } from '../common/validation/is-uid';
import { API_TAGS } from '../openapi/api-tags';
import {
  BanPlayerDto,
  BanResponse,
  BanstateDto,
  BanstateResponse,
  CreatedPlayerResponse,
  CreatePlayerDto,
  NetTokenResponse,
} from './dto/admin-player.dto';
import { PlayerAdminService } from './player-admin.service';
import { AuditInput, Audited, pathId } from '../audit/audited.decorator';

const playerTarget = (input: AuditInput) => `player:${pathId(input, 'uid')}`;

const uidPipe = new ParseBigIdPipe('uid');
const UID_400 = { description: 'uid is not a positive integer', message: 'uid must be a positive integer' };
const NO_PLAYER_404 = {
  description: 'No player with this uid, or the admin API is disabled',
  message: 'No player with uid 1002',
};

@ApiTags(API_TAGS.admin)
@Controller('admin/players')
@AdminAuth()
export class PlayerAdminController {
  constructor(private readonly players: PlayerAdminService) {}

  @Post()
  @Permission('players.create')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Create a player',
    description: 'For Net Token logins; ONLINE players are created at their first login.',
  })
  @ApiCreatedResponse({ type: CreatedPlayerResponse })
  @ApiErrors({
    400: 'A body field is missing or invalid, or the uuid belongs to another player',
    413: 'The body is over 256 KiB',
  })
  @Audited('player.create', ({ result }) => `player:${(result as CreatedPlayerResponse).uid}`)
  create(@Body() body: CreatePlayerDto): Promise<CreatedPlayerResponse> {
    return this.players.createPlayer(body);
  }

  @Post(':uid/net-token')
  @Permission('players.net-token')
  @HttpCode(201)
  @ApiOperation({ summary: "Issue a player's Net Token", description: 'The old one stops working.' })
  @ApiUidParam()
  @ApiCreatedResponse({ type: NetTokenResponse })
  @ApiErrors({ 400: UID_400, 404: NO_PLAYER_404 })
  @Audited('player.net-token', playerTarget, () => ({}))
  async issueNetToken(@Param('uid', uidPipe) uid: string): Promise<NetTokenResponse> {
    return { netToken: await this.players.issueNetToken(uid) };
  }

  @Post(':uid/ban')
  @Permission('players.ban')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Ban a player',
    description:
      'Replaces a ban in force. Revokes the player tokens, logs the sessions out and sends kick_player to the game servers they were on.',
  })
  @ApiUidParam()
  @ApiOkResponse({ type: BanResponse })
  @ApiErrors({
    400: {
      description: 'uid or a body field is invalid, or until is not a future local date-time',
      message: 'until must be in the future',
    },
    404: NO_PLAYER_404,
    413: 'The body is over 256 KiB',
  })
  @Audited('player.ban', playerTarget, ({ result }) => {
    const { reason, message, until } = result as BanResponse;
    return { reason, message, until };
  })
  @OptionalBody(BanPlayerDto)
  ban(@Param('uid', uidPipe) uid: string, @Body() body: BanPlayerDto): Promise<BanResponse> {
    return this.players.ban(uid, body);
  }

  @Delete(':uid/ban')
  @Permission('players.ban')
  @HttpCode(204)
  @ApiOperation({ summary: 'Lift the ban of a player', description: 'Answers 204 also when no ban is in force.' })
  @ApiUidParam()
  @ApiNoContentResponse({ description: 'No ban is in force any more' })
  @ApiErrors({ 400: UID_400, 404: NO_PLAYER_404 })
  @Audited('player.unban', playerTarget, () => ({}))
  unban(@Param('uid', uidPipe) uid: string): Promise<void> {
    return this.players.unban(uid);
  }

  @Put(':uid/banstate')
  @Permission('players.ban')
  @ApiOperation({ summary: "Set a player's warning level (banstate)" })
  @ApiUidParam()
  @ApiOkResponse({ type: BanstateResponse })
  @ApiErrors({
    400: { description: 'uid or banstate is invalid', message: 'banstate must be an integer number' },
    404: NO_PLAYER_404,
    413: 'The body is over 256 KiB',
  })
  @Audited('player.banstate', playerTarget)
  setBanstate(@Param('uid', uidPipe) uid: string, @Body() body: BanstateDto): Promise<BanstateResponse> {
    return this.players.setBanstate(uid, body.banstate);
  }
}
