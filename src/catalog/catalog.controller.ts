import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import type { ServerSessionContext } from '../auth/auth.types';
import { CurrentServer } from '../common/decorators/auth.decorators';
import { CatalogService } from './catalog.service';
import { ChartResponse, CollectionResponse } from './dto/catalog.response';
import { SyncCollectionsDto } from './dto/sync-collections.dto';

/** Catalog reads of the game server and the player unlock sync; every route needs the server access token. */
@Controller()
export class CatalogController {
  constructor(private readonly catalog: CatalogService) {}

  @Get('server/collections')
  listCollections(): Promise<CollectionResponse[]> {
    return this.catalog.listCollections();
  }

  @Get('server/charts')
  listCharts(): Promise<ChartResponse[]> {
    return this.catalog.listActiveCharts();
  }

  @Post('player/collections')
  @HttpCode(204)
  syncCollections(@CurrentServer() server: ServerSessionContext, @Body() body: SyncCollectionsDto): Promise<void> {
    return this.catalog.syncPlayerCollections(server, body);
  }
}
