import { Body, Controller, Put } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOkResponse, ApiOperation, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { AdminAuth } from '../auth/auth.decorators';
import { API_TAGS } from '../openapi/api-tags';
import { CatalogService } from './catalog.service';
import { MAX_BATCH_ENTRIES } from './catalog.rules';
import { ChartDefinitionDto, CollectionDefinitionDto } from './dto/catalog-admin.dto';
import { UpsertedResponse } from '../common/dto/upserted.response';

const BATCH_400 = {
  description: 'The body is not an array, has too many entries, or an entry is invalid (every problem is listed as [index] field: problem); nothing is stored',
  message: '[0] key: must look like namespace:category.id (at most 128 characters)',
};

/**
 * Batch upserts of the catalogs (decisions.md §8). The bodies are JSON arrays validated as a
 * whole by catalog.rules (the global ValidationPipe does not look into arrays); `unknown[]`
 * keeps the pipe from insisting on an object.
 */
@ApiTags(API_TAGS.admin)
@ApiExtraModels(CollectionDefinitionDto, ChartDefinitionDto)
@Controller('admin')
@AdminAuth()
export class CatalogAdminController {
  constructor(private readonly catalog: CatalogService) {}

  @Put('collections')
  @ApiOperation({ summary: 'Upsert collection definitions', description: 'By key; the whole batch is validated first, then stored in one go.' })
  @ApiBody({ schema: { type: 'array', items: { $ref: getSchemaPath(CollectionDefinitionDto) }, maxItems: MAX_BATCH_ENTRIES } })
  @ApiOkResponse({ type: UpsertedResponse })
  @ApiErrors({ 400: BATCH_400, 413: 'The body is over 256 KiB' })
  upsertCollections(@Body() body: unknown[]): Promise<UpsertedResponse> {
    return this.catalog.upsertCollections(body);
  }

  @Put('charts')
  @ApiOperation({ summary: 'Upsert charts', description: 'By levelId; the whole batch is validated first, then stored in one transaction. Game servers see the active ones.' })
  @ApiBody({ schema: { type: 'array', items: { $ref: getSchemaPath(ChartDefinitionDto) }, maxItems: MAX_BATCH_ENTRIES } })
  @ApiOkResponse({ type: UpsertedResponse })
  @ApiErrors({ 400: { ...BATCH_400, message: '[0] levelId: must be an integer from 0 to 2147483647' }, 413: 'The body is over 256 KiB' })
  upsertCharts(@Body() body: unknown[]): Promise<UpsertedResponse> {
    return this.catalog.upsertCharts(body);
  }
}
