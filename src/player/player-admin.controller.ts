import { Body, Controller, Delete, HttpCode, Param, Post, Put } from '@nestjs/common';
import { AdminAuth } from '../common/decorators/auth.decorators';
import { ParseBigIdPipe } from '../common/pipes/parse-id.pipe';
import {
  BanPlayerDto,
  BanResponse,
  BanstateDto,
  BanstateResponse,
  CreatedPlayerResponse,
  CreatePlayerDto,
  NetTokenResponse,
} from './dto/admin-player.dto';
import { PlayerService } from './player.service';

const uidPipe = new ParseBigIdPipe('uid');

@Controller('admin/players')
@AdminAuth()
export class PlayerAdminController {
  constructor(private readonly players: PlayerService) {}

  @Post()
  @HttpCode(201)
  create(@Body() body: CreatePlayerDto): Promise<CreatedPlayerResponse> {
    return this.players.createPlayer(body);
  }

  @Post(':uid/net-token')
  @HttpCode(201)
  async issueNetToken(@Param('uid', uidPipe) uid: string): Promise<NetTokenResponse> {
    return { netToken: await this.players.issueNetToken(uid) };
  }

  @Post(':uid/ban')
  @HttpCode(200)
  ban(@Param('uid', uidPipe) uid: string, @Body() body: BanPlayerDto): Promise<BanResponse> {
    return this.players.ban(uid, body);
  }

  @Delete(':uid/ban')
  @HttpCode(204)
  unban(@Param('uid', uidPipe) uid: string): Promise<void> {
    return this.players.unban(uid);
  }

  @Put(':uid/banstate')
  setBanstate(@Param('uid', uidPipe) uid: string, @Body() body: BanstateDto): Promise<BanstateResponse> {
    return this.players.setBanstate(uid, body.banstate);
  }
}
