import { Body, Controller, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { ServerSessionContext } from '../auth/auth.types';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { CurrentServer } from '../auth/auth.decorators';
import { sendPreparedJson } from '../common/http/prepared-json';
import { API_TAGS } from '../openapi/api-tags';
import { CatalogService } from './catalog.service';
import { ChartResponse, CollectionResponse } from './dto/catalog.response';
import { SyncCollectionsDto } from './dto/sync-collections.dto';

const SERVER_TOKEN_401 = 'Missing, unknown or expired server access token';
const CACHED_READ =
  'Served from memory with an `ETag` (and `Cache-Control: no-cache`); an admin write is seen at once on the instance that took it ' +
  'and within a second on every other.';
const NOT_MODIFIED = '`If-None-Match` names the current ETag: no body';

/** Catalog reads of the game server and the player unlock sync; every route needs the server access token. */
@ApiTags(API_TAGS.catalog)
@Controller()
export class CatalogController {
  constructor(private readonly catalog: CatalogService) {}

  @Get('server/collections')
  @ApiOperation({
    summary: 'List the collections',
    description: `Every collection (titles, tags, …) except the asset collections created by unlock syncs. ${CACHED_READ}`,
  })
  @ApiResponse({ status: 304, description: NOT_MODIFIED })
  @ApiOkResponse({ type: [CollectionResponse] })
  @ApiErrors({ 401: SERVER_TOKEN_401 })
  async listCollections(@Req() request: Request, @Res() response: Response): Promise<void> {
    sendPreparedJson(request, response, await this.catalog.listCollections());
  }

  @Get('server/charts')
  @ApiOperation({ summary: 'List the active charts', description: `Ordered by levelId. ${CACHED_READ}` })
  @ApiResponse({ status: 304, description: NOT_MODIFIED })
  @ApiOkResponse({ type: [ChartResponse] })
  @ApiErrors({ 401: SERVER_TOKEN_401 })
  async listCharts(@Req() request: Request, @Res() response: Response): Promise<void> {
    sendPreparedJson(request, response, await this.catalog.listActiveCharts());
  }

  @Post('player/collections')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Grant collections to a player',
    description: 'Incremental: keys missing from the list are not removed. All keys are granted, or none.',
  })
  @ApiNoContentResponse({ description: 'The keys are granted' })
  @ApiErrors({
    400: {
      description:
        'uid, accessToken or collections is missing or invalid, a key is unknown and not an asset key (the message lists them), or the call would give the player more than MAX_PLAYER_COLLECTIONS (10,000) collections; nothing is written',
      message: 'collections: unknown collection keys: rhythmc:titles.nope',
    },
    401: {
      description: `${SERVER_TOKEN_401}; or the player token is invalid, expired, of another uid or of another server session`,
      message: 'Invalid or expired player access token',
    },
    413: 'The body is over 256 KiB',
  })
  syncCollections(@CurrentServer() server: ServerSessionContext, @Body() body: SyncCollectionsDto): Promise<void> {
    return this.catalog.syncPlayerCollections(server, body);
  }
}
