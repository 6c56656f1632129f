import { Body, Controller, Get, Header, HttpCode, Post, Req } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import type { ServerSessionContext } from '../auth/auth.types';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { BootstrapAuth, BootstrapCredential, CurrentServer, Public, ServerRefreshAuth } from '../auth/auth.decorators';
import { RateLimit } from '../common/throttle/rate-limit.decorator';
import { clientIp } from '../common/http/client-ip';
import { API_TAGS } from '../openapi/api-tags';
import { ServerLoginDto } from './dto/server-login.dto';
import { ServerSessionResponse, ServerTokenResponse } from './dto/server-session.response';
import { ServerService } from './server.service';
import { CountAs } from '../common/decorators/route-metric.decorator';

@ApiTags(API_TAGS.server)
@Controller('server')
export class ServerController {
  constructor(private readonly servers: ServerService) {}

  @Post('login')
  @CountAs('server-login')
  @HttpCode(200)
  @BootstrapAuth()
  @RateLimit('server-login')
  @ApiOperation({
    summary: 'Log the game server in',
    description:
      'Opens a server session. A repeated login for the same serverID replaces the live session: its token stops working, ' +
      'its players are logged out and its WebSocket is closed with 4002. Checks in order: bootstrap token (a failure counts against ' +
      'the source address and the credential), rate limit of the credential, body, maintenance, plugin policy.',
  })
  @ApiOkResponse({ type: ServerSessionResponse })
  @ApiErrors({
    400: 'A body field is missing or invalid (the message names it)',
    401: {
      description:
        'UNAUTHORIZED: missing or unknown bootstrap token; MAINTENANCE: the network is in maintenance (the message is the maintenance message)',
      code: 'MAINTENANCE',
      message: 'Back at 18:00',
    },
    413: 'The body is over 256 KiB',
    426: 'pluginVersion is below the policy minimum, or pluginSHA is not among the allowed builds',
    429:
      'Too many logins with this credential (THROTTLE_LOGIN_LIMIT per THROTTLE_LOGIN_TTL_SECONDS), or too many failed logins ' +
      'from this address or with this credential',
  })
  login(
    @BootstrapCredential() credential: { serverId: number; credentialHash: string },
    @Body() body: ServerLoginDto,
    @Req() request: Request,
  ): Promise<ServerSessionResponse> {
    return this.servers.login(credential, body, clientIp(request));
  }

  @Get('refresh')
  @ServerRefreshAuth()
  @ApiOperation({
    summary: 'Renew the server access token',
    description:
      'Accepts the current token, or one that expired at most SERVER_TOKEN_REFRESH_GRACE_SECONDS (60 s) ago while its session is live. ' +
      'The session and its players stay; the old token stops working.',
  })
  @ApiOkResponse({ type: ServerTokenResponse })
  @ApiErrors({ 401: 'Missing, unknown or too long expired token, or the session has ended' })
  refresh(@CurrentServer() session: ServerSessionContext): Promise<ServerTokenResponse> {
    return this.servers.refresh(session);
  }

  @Post('logout')
  @HttpCode(204)
  @ApiOperation({
    summary: 'End the server session',
    description: 'Logs its players out and closes its WebSocket with 4002. No body.',
  })
  @ApiNoContentResponse({ description: 'The session has ended' })
  @ApiErrors({ 401: 'Missing, unknown or expired server access token' })
  logout(@CurrentServer() session: ServerSessionContext): Promise<void> {
    return this.servers.logout(session);
  }

  /** Connectivity test: the JSON body `true` (decisions.md §3). */
  @Get('ping')
  @Public()
  @Header('Content-Type', 'application/json; charset=utf-8')
  @ApiOperation({ summary: 'Connectivity test', description: 'No authentication; answers the JSON body `true`.' })
  @ApiOkResponse({ schema: { type: 'boolean', example: true } })
  ping(): string {
    return 'true';
  }
}
