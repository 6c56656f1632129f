import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { ServerSessionContext } from '../auth/auth.types';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { CurrentServer } from '../auth/auth.decorators';
import { RateLimit } from '../common/throttle/rate-limit.decorator';
import { API_TAGS } from '../openapi/api-tags';
import { PlayerLoginDto } from './dto/player-login.dto';
import { PlayerLogoutDto, PlayerOptionsDto } from './dto/player-options.dto';
import { PlayerProfileResponse } from './dto/player-profile.response';
import { PlayerLoginService } from './player-login.service';
import { PlayerService } from './player.service';
import { CountAs } from '../common/decorators/route-metric.decorator';

const SERVER_TOKEN_401 = 'Missing, unknown or expired server access token';

/** Player calls of the game server; every route needs the server access token. */
@ApiTags(API_TAGS.player)
@Controller('player')
export class PlayerController {
  constructor(
    private readonly logins: PlayerLoginService,
    private readonly players: PlayerService,
  ) {}

  @Post('login')
  @CountAs('player-login')
  @HttpCode(200)
  @RateLimit('player-login')
  @ApiOperation({
    summary: 'Log a player in',
    description:
      'ONLINE checks uuid and username with the identity provider (a genuine account seen for the first time becomes a new player); ' +
      'TOKEN takes a Net Token; OFFLINE_REFRESH a resume token. The session is bound to the calling server session. ' +
      'A ban (430) is checked before a live session (409).',
  })
  @ApiOkResponse({ type: PlayerProfileResponse, description: 'The player profile' })
  @ApiErrors({
    400: {
      description: 'A body field is missing or invalid, or the field its mode needs is missing',
      message: 'uuid must be a UUID in 8-4-4-4-12 hexadecimal form',
    },
    401: {
      description:
        `${SERVER_TOKEN_401}; or the player cannot be identified: not a genuine account or the username does not match it (ONLINE), ` +
        'unknown Net Token (TOKEN), unknown or expired resume token or continueEnabled off (OFFLINE_REFRESH)',
      message: 'Invalid Net Token',
    },
    409: 'The account has a session that is neither logged out nor expired',
    413: 'The body is over 256 KiB',
    429:
      'Too many player logins and logouts through this server session (THROTTLE_PLAYER_LOGIN_LIMIT per THROTTLE_PLAYER_LOGIN_TTL_SECONDS), ' +
      'or (TOKEN) this server session or this server sent its budget of wrong Net Tokens ' +
      '(THROTTLE_TOKEN_SESSION_FAILURES per THROTTLE_TOKEN_SESSION_WINDOW_SECONDS, THROTTLE_TOKEN_SERVER_FAILURES per THROTTLE_TOKEN_SERVER_WINDOW_SECONDS)',
    430: 'The account is banned',
    503: {
      description:
        'UNAVAILABLE: the identity provider (ONLINE) did not answer within 5 s, or the database cannot be reached, is out of resources or refuses writes',
      retryAfter: 'Seconds to wait before sending the call again (when the database is the cause)',
    },
  })
  login(@CurrentServer() server: ServerSessionContext, @Body() body: PlayerLoginDto): Promise<PlayerProfileResponse> {
    return this.logins.login(server, body);
  }

  @Post('options')
  @HttpCode(200)
  @ApiOperation({
    summary: "Update a player's options and titles",
    description:
      'While continueEnabled is true the answer carries a new resumeToken (the previous one stops working); switching it off revokes the resume token.',
  })
  @ApiOkResponse({
    type: PlayerProfileResponse,
    description: 'The updated player profile (accessToken is the one sent)',
  })
  @ApiErrors({
    400: {
      description:
        'A body field is invalid, a core option has the wrong type, or playerPrefix/playerSuffix is not a title the player has unlocked',
      message: 'options.continueEnabled must be a boolean',
    },
    401: {
      description: `${SERVER_TOKEN_401}; or the player token is invalid, expired, of another uid or of another server session`,
      message: 'Invalid or expired player access token',
    },
    413: 'The body is over 256 KiB',
  })
  updateOptions(
    @CurrentServer() server: ServerSessionContext,
    @Body() body: PlayerOptionsDto,
  ): Promise<PlayerProfileResponse> {
    return this.players.updateOptions(server, body);
  }

  @Post('logout')
  @HttpCode(204)
  @RateLimit('player-login')
  @ApiOperation({ summary: 'Log a player out', description: 'Ends the player session of the token.' })
  @ApiNoContentResponse({ description: 'The player session has ended' })
  @ApiErrors({
    400: { description: 'uid or accessToken is missing or invalid', message: 'uid must be a positive integer' },
    401: {
      description: `${SERVER_TOKEN_401}; or the player token is invalid, expired or of another uid`,
      message: 'Invalid or expired player access token',
    },
    403: {
      description: 'The player session belongs to another server session',
      message: 'The player session belongs to another server session',
    },
    413: 'The body is over 256 KiB',
    429: 'Too many player logins and logouts through this server session (THROTTLE_PLAYER_LOGIN_LIMIT per THROTTLE_PLAYER_LOGIN_TTL_SECONDS)',
  })
  logout(@CurrentServer() server: ServerSessionContext, @Body() body: PlayerLogoutDto): Promise<void> {
    return this.logins.logout(server, body);
  }
}
