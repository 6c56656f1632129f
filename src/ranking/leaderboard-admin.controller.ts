import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { AdminAuth, CallerKey, Permission } from '../auth/auth.decorators';
import { LEVEL_ID_MAX } from '../catalog/catalog.rules';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { API_TAGS } from '../openapi/api-tags';
import {
  AtpBoardResponse,
  BOARD_MAX_K,
  BOARD_MAX_LIMIT,
  ChartBoardResponse,
  LeaderboardQueryDto,
  SCOPED_MAX_UIDS,
  ScopedAtpBoardResponse,
  ScopedBoardQueryDto,
  ScopedChartBoardResponse,
} from './dto/leaderboard.dto';
import { LeaderboardService } from './leaderboard.service';
import { ParseLevelIdPipe } from './pipes/level-id.pipe';

const QUERY_400 = {
  description: `limit is not an integer from 1 to ${BOARD_MAX_LIMIT}, around is not a positive integer, k is not an integer from 0 to ${BOARD_MAX_K}, limit and around are both given, k is given without around, group or country is malformed (group: 1–64 of A–Z a–z 0–9 _ . -; country: 1–64 of those and space), both are given or either with period, a parameter is repeated, or an unknown parameter is given`,
  message: 'limit cannot be combined with around: give limit (top N) or around (a window)',
};

const SCOPED_400 = {
  description: `uids is missing, repeated, over ${SCOPED_MAX_UIDS} or not distinct positive integers separated by commas, or an unknown parameter is given`,
  message: `uids must be 1 to ${SCOPED_MAX_UIDS} distinct positive integers`,
};

/** The same boards as /server/leaderboards, for the admin API, its CLI and the console (admin token). */
@ApiTags(API_TAGS.admin)
@Controller('admin/boards')
@AdminAuth()
export class LeaderboardAdminController {
  constructor(private readonly leaderboards: LeaderboardService) {}

  @Get('atp')
  @Permission('boards.read')
  @ApiOperation({
    summary: 'The ATP board',
    description: 'As GET /server/leaderboards/atp: top N (`limit`) or a window around a player (`around`, `k`).',
  })
  @ApiOkResponse({ type: AtpBoardResponse })
  @ApiErrors({
    400: QUERY_400,
    404: {
      description:
        'around names no player, group names no handover group, or country is no registered server country, or the admin API is disabled',
      message: 'No player with uid 1001',
    },
  })
  atp(@Query() query: LeaderboardQueryDto, @CallerKey() caller: string): Promise<AtpBoardResponse> {
    return this.leaderboards.atpBoard(query, caller);
  }

  @Get('charts/:levelId')
  @Permission('boards.read')
  @ApiOperation({ summary: "A chart's board", description: 'As GET /server/leaderboards/charts/{levelId}.' })
  @ApiParam({ name: 'levelId', schema: { type: 'integer', minimum: 0, maximum: LEVEL_ID_MAX } })
  @ApiOkResponse({ type: ChartBoardResponse })
  @ApiErrors({
    400: {
      description: `levelId is not an integer from 0 to ${LEVEL_ID_MAX}, or the query is invalid as on the ATP board`,
      message: QUERY_400.message,
    },
    404: {
      description:
        'No chart with this levelId (placeholders have no board), around names no player, group names no handover group, or country is no registered server country, or the admin API is disabled',
      message: 'No chart with levelId 101',
    },
  })
  chart(
    @Param('levelId', ParseLevelIdPipe) levelId: number,
    @Query() query: LeaderboardQueryDto,
    @CallerKey() caller: string,
  ): Promise<ChartBoardResponse> {
    return this.leaderboards.chartBoard(levelId, query, caller);
  }

  @Get('atp/among')
  @Permission('boards.read')
  @ApiOperation({
    summary: 'The ATP board among a set of players',
    description: 'As POST /server/leaderboards/atp/among, with the set in the query: `uids=1001,1002` (one parameter).',
  })
  @ApiOkResponse({ type: ScopedAtpBoardResponse })
  @ApiErrors({ 400: SCOPED_400 })
  atpAmong(@Query() query: ScopedBoardQueryDto): Promise<ScopedAtpBoardResponse> {
    return this.leaderboards.atpAmong(query.uids);
  }

  @Get('charts/:levelId/among')
  @Permission('boards.read')
  @ApiOperation({
    summary: "A chart's board among a set of players",
    description: 'As GET /admin/boards/atp/among, on the chart.',
  })
  @ApiParam({ name: 'levelId', schema: { type: 'integer', minimum: 0, maximum: LEVEL_ID_MAX } })
  @ApiOkResponse({ type: ScopedChartBoardResponse })
  @ApiErrors({
    400: {
      description: `levelId is not an integer from 0 to ${LEVEL_ID_MAX}; or ${SCOPED_400.description}`,
      message: SCOPED_400.message,
    },
    404: {
      description: 'No chart with this levelId, or the admin API is disabled',
      message: 'No chart with levelId 101',
    },
  })
  chartAmong(
    @Param('levelId', ParseLevelIdPipe) levelId: number,
    @Query() query: ScopedBoardQueryDto,
  ): Promise<ScopedChartBoardResponse> {
    return this.leaderboards.chartAmong(levelId, query.uids);
  }
}
