import { Body, Controller, Get, Header, HttpCode, Post, Req } from '@nestjs/common';
import type { Request } from 'express';
import type { ServerSessionContext } from '../auth/auth.types';
import { BootstrapAuth, BootstrapServerId, CurrentServer, Public, ServerRefreshAuth } from '../common/decorators/auth.decorators';
import { LoginRateLimit } from '../common/throttle/login-rate-limit.decorator';
import { clientIp } from '../common/http/client-ip';
import { ServerLoginDto } from './dto/server-login.dto';
import { ServerSessionResponse, ServerTokenResponse } from './dto/server-session.response';
import { ServerService } from './server.service';

@Controller('server')
export class ServerController {
  constructor(private readonly servers: ServerService) {}

  @Post('login')
  @HttpCode(200)
  @BootstrapAuth()
  @LoginRateLimit()
  login(@BootstrapServerId() serverId: number, @Body() body: ServerLoginDto, @Req() request: Request): Promise<ServerSessionResponse> {
    return this.servers.login(serverId, body, clientIp(request));
  }

  @Get('refresh')
  @ServerRefreshAuth()
  refresh(@CurrentServer() session: ServerSessionContext): Promise<ServerTokenResponse> {
    return this.servers.refresh(session);
  }

  @Post('logout')
  @HttpCode(204)
  logout(@CurrentServer() session: ServerSessionContext): Promise<void> {
    return this.servers.logout(session);
  }

  /** Connectivity test: the JSON body `true` (decisions.md §3). */
  @Get('ping')
  @Public()
  @Header('Content-Type', 'application/json; charset=utf-8')
  ping(): string {
    return 'true';
  }
}
