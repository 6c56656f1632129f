import { Body, Controller, Get, Put, Query } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOkResponse, ApiOperation, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { AdminAuth, Permission } from '../auth/auth.decorators';
import { API_TAGS } from '../openapi/api-tags';
import { CatalogService, CHART_LIST, COLLECTION_LIST } from './catalog.service';
import {
  AdminChartPage,
  AdminChartsQueryDto,
  AdminCollectionPage,
  AdminCollectionsQueryDto,
} from './dto/catalog-admin-read.dto';
import { isCollectionKey, LEVEL_ID_MAX, MAX_BATCH_ENTRIES } from './catalog.rules';
import { ChartDefinitionDto, CollectionDefinitionDto } from './dto/catalog-admin.dto';
import { UpsertedResponse } from '../common/dto/upserted.response';
import { Audited } from '../audit/audited.decorator';
import { DtoArrayPipe } from '../common/pipes/dto-array.pipe';
import { integerCursorKey, listQuery, ListSpec } from '../common/pagination/list-query';

const CHARTS: ListSpec = { list: CHART_LIST, cursorKey: integerCursorKey(0n, BigInt(LEVEL_ID_MAX)) };
const COLLECTIONS: ListSpec = { list: COLLECTION_LIST, cursorKey: isCollectionKey };
const LIST_400 = {
  description: 'limit, cursor or a filter is invalid, or the query has an unknown parameter',
  message: 'active must be true or false',
};

/** The batch's keys (at most MAX_BATCH_ENTRIES) and how many rows it upserted. */
const batchSummary =
  (field: string) =>
  ({ body, result }: { body: unknown; result: unknown }) => ({
    upserted: (result as UpsertedResponse).upserted,
    [`${field}s`]: (body as Record<string, unknown>[]).map((entry) => entry[field]),
  });

const BATCH_400 = {
  description:
    'The body is not an array, has too many entries, or an entry is invalid (every problem is listed as [index] field: problem); nothing is stored',
  message: '[0] key: must look like namespace:category.id (at most 128 characters)',
};

const COLLECTION_BATCH = new DtoArrayPipe(CollectionDefinitionDto, {
  maxItems: MAX_BATCH_ENTRIES,
  wording: 'label',
  unique: 'key',
});
const CHART_BATCH = new DtoArrayPipe(ChartDefinitionDto, {
  maxItems: MAX_BATCH_ENTRIES,
  wording: 'label',
  unique: 'levelId',
});

/**
 * Batch upserts of the catalogs (decisions.md §8). The bodies are JSON arrays validated as a
 * whole by DtoArrayPipe (the global ValidationPipe does not look into arrays).
 */
@ApiTags(API_TAGS.admin)
@ApiExtraModels(CollectionDefinitionDto, ChartDefinitionDto)
@Controller('admin')
@AdminAuth()
export class CatalogAdminController {
  constructor(private readonly catalog: CatalogService) {}

  @Get('collections')
  @Permission('catalog.read')
  @ApiOperation({ summary: 'Collections as stored', description: 'By key (byte order), asset collections included.' })
  @ApiOkResponse({ type: AdminCollectionPage })
  @ApiErrors({ 400: { ...LIST_400, message: 'type must be 1-32 characters of A-Z, a-z, 0-9, _, ., : and -' } })
  listCollections(@Query() query: AdminCollectionsQueryDto): Promise<AdminCollectionPage> {
    return this.catalog.listStoredCollections(listQuery(query, COLLECTIONS));
  }

  @Get('charts')
  @Permission('catalog.read')
  @ApiOperation({
    summary: 'Charts as stored',
    description: 'By levelId, inactive charts and upload placeholders included.',
  })
  @ApiOkResponse({ type: AdminChartPage })
  @ApiErrors({ 400: LIST_400 })
  listCharts(@Query() query: AdminChartsQueryDto): Promise<AdminChartPage> {
    return this.catalog.listStoredCharts(listQuery(query, CHARTS));
  }

  @Put('collections')
  @Permission('catalog.write')
  @ApiOperation({
    summary: 'Upsert collection definitions',
    description: 'By key; the whole batch is validated first, then stored in one go.',
  })
  @ApiBody({
    schema: { type: 'array', items: { $ref: getSchemaPath(CollectionDefinitionDto) }, maxItems: MAX_BATCH_ENTRIES },
  })
  @ApiOkResponse({ type: UpsertedResponse })
  @ApiErrors({ 400: BATCH_400, 413: 'The body is over 256 KiB' })
  @Audited('catalog.collections', () => 'catalog:collections', batchSummary('key'))
  upsertCollections(@Body(COLLECTION_BATCH) collections: CollectionDefinitionDto[]): Promise<UpsertedResponse> {
    return this.catalog.upsertCollections(collections);
  }

  @Put('charts')
  @Permission('catalog.write')
  @ApiOperation({
    summary: 'Upsert charts',
    description:
      'By levelId; the whole batch is validated first, then stored in one transaction. Game servers see the active ones.',
  })
  @ApiBody({
    schema: { type: 'array', items: { $ref: getSchemaPath(ChartDefinitionDto) }, maxItems: MAX_BATCH_ENTRIES },
  })
  @ApiOkResponse({ type: UpsertedResponse })
  @ApiErrors({
    400: { ...BATCH_400, message: '[0] levelId: must be an integer from 0 to 2147483647' },
    413: 'The body is over 256 KiB',
  })
  @Audited('catalog.charts', () => 'catalog:charts', batchSummary('levelId'))
  upsertCharts(@Body(CHART_BATCH) charts: ChartDefinitionDto[]): Promise<UpsertedResponse> {
    return this.catalog.upsertCharts(charts);
  }
}
