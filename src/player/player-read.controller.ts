import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminAuth, Permission } from '../auth/auth.decorators';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import {
  ApiListQuery,
  bigIdFilter,
  bigSerialCursorKey,
  ListQuery,
  ListQueryParam,
  ListQuerySpec,
  patternFilter,
} from '../common/pagination/list-query';
import { API_TAGS } from '../openapi/api-tags';
import { AdminBanPage, AdminPlayerPage } from './dto/admin-player-read.dto';
import { UUID_PATTERN } from './dto/player-login.dto';
import { BAN_LIST, PLAYER_LIST, PlayerListFilters, PlayerReadService } from './player-read.service';

const PLAYERS: ListQuerySpec<PlayerListFilters> = {
  list: PLAYER_LIST,
  cursorKey: bigSerialCursorKey,
  filters: {
    username: patternFilter(/^[A-Za-z0-9_]{1,32}$/, '1-32 characters of A-Z, a-z, 0-9 and _'),
    uuid: patternFilter(UUID_PATTERN, 'a UUID in 8-4-4-4-12 hexadecimal form'),
    uid: bigIdFilter,
  },
};
const BANS: ListQuerySpec<{ uid: string }> = {
  list: BAN_LIST,
  cursorKey: bigSerialCursorKey,
  filters: { uid: bigIdFilter },
};

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
  @ApiListQuery(
    {
      name: 'username',
      description: 'Username prefix, case-insensitive',
      schema: { type: 'string', pattern: '^[A-Za-z0-9_]{1,32}$' },
    },
    { name: 'uuid', description: 'Exact account UUID', schema: { type: 'string', pattern: UUID_PATTERN.source } },
    { name: 'uid', description: 'Exact uid', schema: { type: 'integer', format: 'int64', minimum: 1 } },
  )
  @ApiOkResponse({ type: AdminPlayerPage })
  @ApiErrors({ 400: LIST_400 })
  listPlayers(@ListQueryParam(PLAYERS) query: ListQuery<PlayerListFilters>): Promise<AdminPlayerPage> {
    return this.reads.listPlayers(query);
  }

  @Get('bans')
  @Permission('players.read')
  @ApiOperation({ summary: 'Active bans', description: 'Newest first.' })
  @ApiListQuery({
    name: 'uid',
    description: "Only this player's",
    schema: { type: 'integer', format: 'int64', minimum: 1 },
  })
  @ApiOkResponse({ type: AdminBanPage })
  @ApiErrors({ 400: LIST_400 })
  listBans(@ListQueryParam(BANS) query: ListQuery<{ uid: string }>): Promise<AdminBanPage> {
    return this.reads.listActiveBans(query);
  }
}
