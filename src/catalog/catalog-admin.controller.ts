import { Body, Controller, Put } from '@nestjs/common';
import { AdminAuth } from '../common/decorators/auth.decorators';
import { CatalogService } from './catalog.service';
import { UpsertedResponse } from './dto/catalog.response';

/**
 * Batch upserts of the catalogs (decisions.md §8). The bodies are JSON arrays validated as a
 * whole by catalog.rules (the global ValidationPipe does not look into arrays); `unknown[]`
 * keeps the pipe from insisting on an object.
 */
@Controller('admin')
@AdminAuth()
export class CatalogAdminController {
  constructor(private readonly catalog: CatalogService) {}

  @Put('collections')
  upsertCollections(@Body() body: unknown[]): Promise<UpsertedResponse> {
    return this.catalog.upsertCollections(body);
  }

  @Put('charts')
  upsertCharts(@Body() body: unknown[]): Promise<UpsertedResponse> {
    return this.catalog.upsertCharts(body);
  }
}
