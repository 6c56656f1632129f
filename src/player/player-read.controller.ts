import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminAuth, Permission } from '../auth/auth.decorators';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { bigSerialCursorKey, listQuery, ListSpec } from '../common/pagination/list-query';
import { API_TAGS } from '../openapi/api-tags';
import { AdminBanPage, AdminBansQueryDto, AdminPlayerPage, AdminPlayersQueryDto } from './dto/admin-player-read.dto';
import { BAN_LIST, PLAYER_LIST, PlayerReadService } from './player-read.service';

const PLAYERS: ListSpec = { list: PLAYER_LIST, cursorKey: bigSerialCursorKey };
const BANS: ListSpec = { list: BAN_LIST, cursorKey: bigSerialCursorKey };

const LIST_400 = {
  description: 'limit, cursor or a filter is invalid, or the query has an unknown parameter',
  message: 'limit must be an integer from 1 to 200',
};

@ApiTags(API_TAGS.admin)
@Controller('admin')
@AdminAuth()
export class PlayerReadController {
  constructor(private readonly reads: PlayerReadService) {}

  @Get('players')
  @Permission('players.read')
  @ApiOperation({
    summary: 'Find players',
    description:
      'By uid ascending, each with its ban in force and the server of its live session. Filters combine (all must match).',
  })
  @ApiOkResponse({ type: AdminPlayerPage })
  @ApiErrors({ 400: LIST_400 })
  listPlayers(@Query() query: AdminPlayersQueryDto): Promise<AdminPlayerPage> {
    return this.reads.listPlayers(listQuery(query, PLAYERS));
  }

  @Get('bans')
  @Permission('players.read')
  @ApiOperation({ summary: 'Active bans', description: 'Newest first.' })
  @ApiOkResponse({ type: AdminBanPage })
  @ApiErrors({ 400: LIST_400 })
  listBans(@Query() query: AdminBansQueryDto): Promise<AdminBanPage> {
    return this.reads.listActiveBans(listQuery(query, BANS));
  }
}
