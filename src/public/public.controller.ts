import { Controller, Get, Param, Query, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { CallerKey } from '../auth/auth.decorators';
import { LEVEL_ID_MAX } from '../catalog/catalog.rules';
import { ChartResponse } from '../catalog/dto/catalog.response';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { ParseBigIdPipe } from '../common/pipes/parse-id.pipe';
import { ApiUidParam } from '../common/validation/is-uid';
import { HISTORY_DAYS, RatingHistoryResponse } from '../upload/dto/rating-history.dto';
import { API_TAGS } from '../openapi/api-tags';
import {
  AtpBoardResponse,
  BOARD_MAX_K,
  BOARD_MAX_LIMIT,
  ChartBoardResponse,
  LeaderboardQueryDto,
  ParseLevelIdPipe,
  RANKS_503,
  SCOPED_MAX_UIDS,
  ScopedAtpBoardResponse,
  ScopedBoardQueryDto,
  ScopedChartBoardResponse,
} from '../ranking';
import {
  FirstPlacesQueryDto,
  FirstPlacesResponse,
  PlayerProfileQueryDto,
  PlayerSearchQueryDto,
  PlayerSearchResponse,
  PublicPlayerProfile,
} from './dto/public-read.dto';
import { NoQuery } from '../common/decorators/no-query.decorator';
import { PUBLIC_OK_HEADERS, ParseUuidPipe, PublicApiAuth } from './public-api.decorators';
import { PUBLIC_API_PREFIX } from './public-api.rules';
import { PublicResponder } from './public-http';
import { PublicService } from './public.service';

const BOARD_QUERY_400 = {
  description: `limit is not an integer from 1 to ${BOARD_MAX_LIMIT}, around is not a positive integer, k is not an integer from 0 to ${BOARD_MAX_K}, limit and around are both given, k is given without around, group or country is malformed (group: 1–64 of A–Z a–z 0–9 _ . -; country: 1–64 of those and space), both are given or either with period, a parameter is repeated, or an unknown parameter is given`,
  message: 'limit cannot be combined with around: give limit (top N) or around (a window)',
};
const SCOPED_UIDS_MESSAGE = `uids must be 1 to ${SCOPED_MAX_UIDS} distinct positive integers`;
const SCOPED_QUERY_400 = `uids is missing, repeated, over ${SCOPED_MAX_UIDS} or not distinct positive integers separated by commas, or an unknown parameter is given`;
const SAME_AS_GAME =
  'Ranks are the game’s own (the siteRank / trackRank of the score upload, from the same rank index): players under an active ban, ' +
  'and plays that are flagged, voided or on a placeholder chart, are left out.';
const PROFILE_404 = {
  description: 'No player with this id, or the player is under an active ban (the same answer)',
  message: 'No player with uid 1001',
};
const PROFILE_QUERY_400 =
  'bests is not an integer from 1 to 100, recent is not an integer from 0 to 50, or an unknown parameter is given';
const PROFILE_DESCRIPTION =
  `Identity, ATP and siteRank, the best charts with their trackRank, the newest plays that count, and the unlocked titles. ${SAME_AS_GAME} ` +
  'Sessions, addresses, tokens and the balance are never shown (the balance only where PUBLIC_API_FIELDS lists it).';

/**
 * The public read API (docs/decisions.md "Public API"): boards, charts and players for websites,
 * bots and lobby plugins, behind a key (or the anonymous tier), cacheable (ETag, 304,
 * Cache-Control). Each handler calls one PublicService method and sends its answer through the
 * PublicResponder.
 */
@ApiTags(API_TAGS.public)
@Controller(PUBLIC_API_PREFIX)
export class PublicController {
  constructor(
    private readonly reads: PublicService,
    private readonly responder: PublicResponder,
  ) {}

  @Get('boards/atp')
  @PublicApiAuth('read:boards')
  @ApiOperation({
    summary: 'The ATP board',
    description: `As GET /server/leaderboards/atp: top N (\`limit\`) or a window around a player (\`around\`, \`k\`). ${SAME_AS_GAME}`,
  })
  @ApiOkResponse({ type: AtpBoardResponse, headers: PUBLIC_OK_HEADERS })
  @ApiErrors({
    400: BOARD_QUERY_400,
    404: {
      description: 'around names no player, group names no handover group, or country is no registered server country',
      message: 'No player with uid 1001',
    },
    503: RANKS_503,
  })
  async atpBoard(
    @Req() request: Request,
    @Res() response: Response,
    @Query() query: LeaderboardQueryDto,
    @CallerKey() caller: string,
  ): Promise<void> {
    this.responder.send(request, response, await this.reads.atpBoard(query, caller));
  }

  @Get('boards/charts/:levelId')
  @PublicApiAuth('read:boards')
  @ApiOperation({
    summary: "A chart's board",
    description: `As GET /server/leaderboards/charts/{levelId}. ${SAME_AS_GAME}`,
  })
  @ApiParam({ name: 'levelId', schema: { type: 'integer', minimum: 0, maximum: LEVEL_ID_MAX } })
  @ApiOkResponse({ type: ChartBoardResponse, headers: PUBLIC_OK_HEADERS })
  @ApiErrors({
    400: {
      description: `levelId is not an integer from 0 to ${LEVEL_ID_MAX}, or the query is invalid as on the ATP board`,
      message: BOARD_QUERY_400.message,
    },
    404: {
      description:
        'No chart with this levelId (placeholders have no board), or around names no player, group names no handover group, or country is no registered server country',
      message: 'No chart with levelId 101',
    },
    503: RANKS_503,
  })
  async chartBoard(
    @Req() request: Request,
    @Res() response: Response,
    @Param('levelId', ParseLevelIdPipe) levelId: number,
    @Query() query: LeaderboardQueryDto,
    @CallerKey() caller: string,
  ): Promise<void> {
    this.responder.send(request, response, await this.reads.chartBoard(levelId, query, caller));
  }

  @Get('boards/atp/among')
  @PublicApiAuth('read:boards')
  @ApiOperation({
    summary: 'The ATP board among a set of players',
    description: `As POST /server/leaderboards/atp/among, with the set in the query: \`uids=1001,1002\` (1 to ${SCOPED_MAX_UIDS} distinct uids, one parameter). ${SAME_AS_GAME}`,
  })
  @ApiOkResponse({ type: ScopedAtpBoardResponse, headers: PUBLIC_OK_HEADERS })
  @ApiErrors({
    400: { description: SCOPED_QUERY_400, message: SCOPED_UIDS_MESSAGE },
  })
  async atpAmong(
    @Req() request: Request,
    @Res() response: Response,
    @Query() query: ScopedBoardQueryDto,
  ): Promise<void> {
    this.responder.send(request, response, await this.reads.atpAmong(query.uids));
  }

  @Get('boards/charts/:levelId/among')
  @PublicApiAuth('read:boards')
  @ApiOperation({
    summary: "A chart's board among a set of players",
    description: `As GET /public/v1/boards/atp/among, on the chart's board. ${SAME_AS_GAME}`,
  })
  @ApiParam({ name: 'levelId', schema: { type: 'integer', minimum: 0, maximum: LEVEL_ID_MAX } })
  @ApiOkResponse({ type: ScopedChartBoardResponse, headers: PUBLIC_OK_HEADERS })
  @ApiErrors({
    400: {
      description: `levelId is not an integer from 0 to ${LEVEL_ID_MAX}; or ${SCOPED_QUERY_400}`,
      message: SCOPED_UIDS_MESSAGE,
    },
    404: {
      description: 'No chart with this levelId (placeholders have no board)',
      message: 'No chart with levelId 101',
    },
  })
  async chartAmong(
    @Req() request: Request,
    @Res() response: Response,
    @Param('levelId', ParseLevelIdPipe) levelId: number,
    @Query() query: ScopedBoardQueryDto,
  ): Promise<void> {
    this.responder.send(request, response, await this.reads.chartAmong(levelId, query.uids));
  }

  @Get('charts')
  @PublicApiAuth('read:boards')
  @ApiOperation({ summary: 'The active charts', description: 'As GET /server/charts: by levelId.' })
  @ApiOkResponse({ type: [ChartResponse], headers: PUBLIC_OK_HEADERS })
  @ApiErrors({ 400: { description: 'A query parameter is given', message: 'x: property x should not exist' } })
  async charts(@Req() request: Request, @Res() response: Response, @NoQuery() _query: void): Promise<void> {
    this.responder.send(request, response, await this.reads.charts());
  }

  @Get('first-places')
  @PublicApiAuth('read:boards')
  @ApiOperation({
    summary: 'Recent first places',
    description:
      "Rank 1 of every chart's board (the entry its top 1 shows), the most recently reached first. Read over every chart at once " +
      'and kept for PUBLIC_API_MAX_AGE_SECONDS (at least a second) on each instance.',
  })
  @ApiOkResponse({ type: FirstPlacesResponse, headers: PUBLIC_OK_HEADERS })
  @ApiErrors({
    400: {
      description: 'limit is not an integer from 1 to 100, or an unknown parameter is given',
      message: 'limit must be an integer from 1 to 100',
    },
  })
  async firstPlaces(
    @Req() request: Request,
    @Res() response: Response,
    @Query() query: FirstPlacesQueryDto,
  ): Promise<void> {
    this.responder.send(request, response, await this.reads.firstPlaces(query));
  }

  @Get('players')
  @PublicApiAuth('read:players')
  @ApiOperation({
    summary: 'Find players by name',
    description:
      'The players with exactly this `name`, or every name starting with `prefix`, ignoring case; players under an active ban are left out. ' +
      'A name is 1–32 characters of A–Z, a–z, 0–9 and _ (what a username holds): anything else is 400, never a pattern.',
  })
  @ApiOkResponse({ type: PlayerSearchResponse, headers: PUBLIC_OK_HEADERS })
  @ApiErrors({
    400: {
      description:
        'Neither or both of name and prefix, a name that is not 1–32 characters of A–Z a–z 0–9 _, a bad limit, or an unknown parameter',
      message: 'name must be 1-32 characters of A-Z, a-z, 0-9 and _',
    },
  })
  async searchPlayers(
    @Req() request: Request,
    @Res() response: Response,
    @Query() query: PlayerSearchQueryDto,
  ): Promise<void> {
    this.responder.send(request, response, await this.reads.searchPlayers(query));
  }

  @Get('players/:uid')
  @PublicApiAuth('read:players')
  @ApiOperation({ summary: "A player's profile", description: PROFILE_DESCRIPTION })
  @ApiUidParam()
  @ApiOkResponse({ type: PublicPlayerProfile, headers: PUBLIC_OK_HEADERS })
  @ApiErrors({
    400: {
      description: `uid is not a positive integer; or ${PROFILE_QUERY_400}`,
      message: 'uid must be a positive integer',
    },
    404: PROFILE_404,
    503: RANKS_503,
  })
  async profile(
    @Req() request: Request,
    @Res() response: Response,
    @Param('uid', new ParseBigIdPipe('uid')) uid: string,
    @Query() query: PlayerProfileQueryDto,
    @CallerKey() caller: string,
  ): Promise<void> {
    this.responder.send(request, response, await this.reads.profile({ uid }, query, caller));
  }

  @Get('players/:uid/history')
  @PublicApiAuth('read:players')
  @ApiOperation({
    summary: "A player's rating history",
    description: `ATP, site rank and counted plays at the end of each of the last ${HISTORY_DAYS} closed days on which the player had a counted play (days in the service's time zone), oldest first.`,
  })
  @ApiUidParam()
  @ApiOkResponse({ type: RatingHistoryResponse, headers: PUBLIC_OK_HEADERS })
  @ApiErrors({
    400: {
      description: 'uid is not a positive integer, or a query parameter is given',
      message: 'uid must be a positive integer',
    },
    404: PROFILE_404,
  })
  async history(
    @Req() request: Request,
    @Res() response: Response,
    @Param('uid', new ParseBigIdPipe('uid')) uid: string,
    @NoQuery() _query: void,
  ): Promise<void> {
    this.responder.send(request, response, await this.reads.history(uid));
  }

  @Get('players/uuid/:uuid')
  @PublicApiAuth('read:players')
  @ApiOperation({ summary: "A player's profile, by Mojang uuid", description: PROFILE_DESCRIPTION })
  @ApiParam({
    name: 'uuid',
    description: 'Mojang uuid, with or without dashes',
    schema: { type: 'string', format: 'uuid' },
  })
  @ApiOkResponse({ type: PublicPlayerProfile, headers: PUBLIC_OK_HEADERS })
  @ApiErrors({
    400: {
      description: `uuid is not a uuid; or ${PROFILE_QUERY_400}`,
      message: 'uuid must be a uuid (32 hexadecimal digits, with or without dashes)',
    },
    404: { ...PROFILE_404, message: 'No player with uuid 069a79f4-44e9-4726-a5be-fca90e38aaf5' },
    503: RANKS_503,
  })
  async profileByUuid(
    @Req() request: Request,
    @Res() response: Response,
    @Param('uuid', ParseUuidPipe) uuid: string,
    @Query() query: PlayerProfileQueryDto,
    @CallerKey() caller: string,
  ): Promise<void> {
    this.responder.send(request, response, await this.reads.profile({ uuid }, query, caller));
  }
}
