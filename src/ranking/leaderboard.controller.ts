import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { LEVEL_ID_MAX } from '../catalog/catalog.rules';
import { CallerKey } from '../auth/auth.decorators';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { RANKS_503 } from './count-gate';
import { API_TAGS } from '../openapi/api-tags';
import {
  AtpBoardResponse,
  BOARD_MAX_K,
  BOARD_MAX_LIMIT,
  ChartBoardResponse,
  LeaderboardQueryDto,
  SCOPED_MAX_UIDS,
  ScopedAtpBoardResponse,
  ScopedBoardDto,
  ScopedChartBoardResponse,
} from './dto/leaderboard.dto';
import { LeaderboardService } from './leaderboard.service';
import { ParseLevelIdPipe } from './pipes/level-id.pipe';

const QUERY_400 = {
  description: `limit is not an integer from 1 to ${BOARD_MAX_LIMIT}, around is not a positive integer, k is not an integer from 0 to ${BOARD_MAX_K}, limit and around are both given, k is given without around, group or country is malformed (group: 1–64 of A–Z a–z 0–9 _ . -; country: 1–64 of those and space), both are given or either with period, a parameter is repeated, or an unknown parameter is given`,
  message: 'limit cannot be combined with around: give limit (top N) or around (a window)',
};
const SCOPED_400 = `uids is missing, not an array, empty, longer than ${SCOPED_MAX_UIDS}, holds a value that is not a positive integer, or names a uid twice`;
const SERVER_TOKEN_401 = 'Missing, unknown or expired server access token';
const RANKS =
  'Ranks are those of the score upload (siteRank, trackRank): players under an active ban are left out and take no rank. ' +
  '`limit` (default 10): the top N. `around=<uid>&k=<n>` (k default 5): that player, its `rank`, and up to k entries on each side ' +
  '(fewer at either end of the board); `rank: null` and no entries when the player has no rank. ' +
  '`group=<name>` (a session-handover group) or `country=<country>` (a registered server country): the same board limited to ' +
  'the players whose home server (the server of their latest login) is in the scope, ranked by place within it (same `limit`, `around`, `k`; all time only).';

/** Leaderboard reads for game servers (in-world boards); every route needs the server access token. */
@ApiTags(API_TAGS.upload)
@Controller('server/leaderboards')
export class LeaderboardController {
  constructor(private readonly leaderboards: LeaderboardService) {}

  @Get('atp')
  @ApiOperation({
    summary: 'The ATP board',
    description: `ATP descending, then uid ascending, among players with a counted play. ${RANKS}`,
  })
  @ApiOkResponse({ type: AtpBoardResponse })
  @ApiErrors({
    400: QUERY_400,
    401: SERVER_TOKEN_401,
    404: {
      description: 'around names no player, group names no handover group, or country is no registered server country',
      message: 'No player with uid 1001',
    },
    503: RANKS_503,
  })
  atp(@Query() query: LeaderboardQueryDto, @CallerKey() caller: string): Promise<AtpBoardResponse> {
    return this.leaderboards.atpBoard(query, caller);
  }

  @Get('charts/:levelId')
  @ApiOperation({
    summary: "A chart's board",
    description: `Each player's best counted play on the chart: acc descending, then the time it was first reached ascending, then uid ascending. ${RANKS}`,
  })
  @ApiParam({
    name: 'levelId',
    description: 'Level id of a chart of the catalog (active or not)',
    schema: { type: 'integer', minimum: 0, maximum: LEVEL_ID_MAX },
  })
  @ApiOkResponse({ type: ChartBoardResponse })
  @ApiErrors({
    400: {
      description: `levelId is not an integer from 0 to ${LEVEL_ID_MAX}; or, as on the ATP board, ${QUERY_400.description}`,
      message: QUERY_400.message,
    },
    401: SERVER_TOKEN_401,
    404: {
      description:
        'The catalog has no chart with this levelId, or around names no player, group names no handover group, or country is no registered server country',
      message: 'No chart with levelId 101',
    },
    503: RANKS_503,
  })
  chart(
    @Param('levelId', ParseLevelIdPipe) levelId: number,
    @Query() query: LeaderboardQueryDto,
    @CallerKey() caller: string,
  ): Promise<ChartBoardResponse> {
    return this.leaderboards.chartBoard(levelId, query, caller);
  }

  @Post('atp/among')
  @HttpCode(200)
  @ApiOperation({
    summary: 'The ATP board among a set of players',
    description: `The players of \`uids\` (a party, a friends list: 1 to ${SCOPED_MAX_UIDS} distinct uids) that the ATP board ranks, in its order, each with its place among them as \`rank\`. As everywhere, players under an active ban and plays that do not count are left out; unknown uids and players without a counted play are not in the answer.`,
  })
  @ApiOkResponse({ type: ScopedAtpBoardResponse })
  @ApiErrors({
    400: { description: SCOPED_400, message: `uids must be 1 to ${SCOPED_MAX_UIDS} distinct positive integers` },
    401: SERVER_TOKEN_401,
    413: 'The body is over 256 KiB',
  })
  atpAmong(@Body() body: ScopedBoardDto): Promise<ScopedAtpBoardResponse> {
    return this.leaderboards.atpAmong(body.uids);
  }

  @Post('charts/:levelId/among')
  @HttpCode(200)
  @ApiOperation({
    summary: "A chart's board among a set of players",
    description:
      "As POST /server/leaderboards/atp/among, on the chart's board (each player's best counted play on it).",
  })
  @ApiParam({
    name: 'levelId',
    description: 'Level id of a chart of the catalog (active or not)',
    schema: { type: 'integer', minimum: 0, maximum: LEVEL_ID_MAX },
  })
  @ApiOkResponse({ type: ScopedChartBoardResponse })
  @ApiErrors({
    400: {
      description: `levelId is not an integer from 0 to ${LEVEL_ID_MAX}; or ${SCOPED_400}`,
      message: `uids must be 1 to ${SCOPED_MAX_UIDS} distinct positive integers`,
    },
    401: SERVER_TOKEN_401,
    404: { description: 'The catalog has no chart with this levelId', message: 'No chart with levelId 101' },
    413: 'The body is over 256 KiB',
  })
  chartAmong(
    @Param('levelId', ParseLevelIdPipe) levelId: number,
    @Body() body: ScopedBoardDto,
  ): Promise<ScopedChartBoardResponse> {
    return this.leaderboards.chartAmong(levelId, body.uids);
  }
}
