import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import type { ServerSessionContext } from '../auth/auth.types';
import { CurrentServer } from '../common/decorators/auth.decorators';
import { LoginRateLimit } from '../common/throttle/login-rate-limit.decorator';
import { PlayerLoginDto } from './dto/player-login.dto';
import { PlayerLogoutDto, PlayerOptionsDto } from './dto/player-options.dto';
import { PlayerProfileResponse } from './dto/player-profile.response';
import { PlayerService } from './player.service';

/** Player calls of the game server; every route needs the server access token. */
@Controller('player')
export class PlayerController {
  constructor(private readonly players: PlayerService) {}

  @Post('login')
  @HttpCode(200)
  @LoginRateLimit()
  login(@CurrentServer() server: ServerSessionContext, @Body() body: PlayerLoginDto): Promise<PlayerProfileResponse> {
    return this.players.login(server, body);
  }

  @Post('options')
  @HttpCode(200)
  updateOptions(@CurrentServer() server: ServerSessionContext, @Body() body: PlayerOptionsDto): Promise<PlayerProfileResponse> {
    return this.players.updateOptions(server, body);
  }

  @Post('logout')
  @HttpCode(204)
  @LoginRateLimit()
  logout(@CurrentServer() server: ServerSessionContext, @Body() body: PlayerLogoutDto): Promise<void> {
    return this.players.logout(server, body);
  }
}
