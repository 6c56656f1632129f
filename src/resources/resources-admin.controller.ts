import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { UpsertedResponse } from '../common/dto/upserted.response';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { AdminAuth, Permission } from '../auth/auth.decorators';
import { API_TAGS } from '../openapi/api-tags';
import { AdminPackList, PackDto } from './dto/pack.dto';
import { RescanResponse } from './dto/rescan.response';
import { DtoArrayPipe } from '../common/pipes/dto-array.pipe';
import { PackNamePipe } from './pipes/pack-name.pipe';
import { ResourcesService } from './resources.service';
import { Audited } from '../audit/audited.decorator';

/** Most packs one PUT /admin/packs may describe. */
const MAX_PACKS_PER_REQUEST = 1_000;

/** Resource administration (decisions.md §8). */
@ApiTags(API_TAGS.admin)
@ApiExtraModels(PackDto)
@Controller('admin')
@AdminAuth()
export class ResourcesAdminController {
  constructor(private readonly resources: ResourcesService) {}

  @Post('resources/rescan')
  @Permission('resources.write')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Re-index RESOURCE_DIR',
    description: 'Only changed files are hashed again; a scan that fails (500) leaves the previous index in place. No body.',
  })
  @ApiOkResponse({ type: RescanResponse })
  @ApiErrors({})
  @Audited('resources.rescan', () => 'resources:index', ({ result }) => ({ ...(result as RescanResponse) }))
  rescan(): Promise<RescanResponse> {
    return this.resources.rescan();
  }

  @Get('packs')
  @Permission('catalog.read')
  @ApiOperation({ summary: 'Described resource packs', description: 'By name, with the size and SHA-1 of each file as indexed.' })
  @ApiOkResponse({ type: AdminPackList })
  listPacks(): Promise<AdminPackList> {
    return this.resources.listPacks();
  }

  @Put('packs')
  @Permission('resources.write')
  @ApiOperation({ summary: 'Describe resource packs', description: 'Upsert by name; the whole batch is checked first, then stored in one transaction.' })
  @ApiBody({ schema: { type: 'array', items: { $ref: getSchemaPath(PackDto) }, maxItems: MAX_PACKS_PER_REQUEST } })
  @ApiOkResponse({ type: UpsertedResponse })
  @ApiErrors({
    400: {
      description: 'The body is not an array, has too many entries, or an entry is invalid, repeats a name, or names a file that is not an indexed packs/*.zip; nothing is stored',
      message: '[0].file: "packs/missing.zip" is not in the resource index',
    },
    413: 'The body is over 256 KiB',
  })
  @Audited('resources.packs', () => 'resources:packs', ({ body, result }) => ({
    upserted: (result as UpsertedResponse).upserted,
    names: (body as { name: unknown }[]).map((pack) => pack.name),
  }))
  upsertPacks(@Body(new DtoArrayPipe(PackDto, { maxItems: MAX_PACKS_PER_REQUEST })) packs: PackDto[]): Promise<UpsertedResponse> {
    return this.resources.upsertPacks(packs);
  }

  @Delete('packs/:name')
  @Permission('resources.write')
  @HttpCode(204)
  @ApiOperation({ summary: 'Remove a pack description', description: 'The file stays in RESOURCE_DIR.' })
  @ApiParam({ name: 'name', type: String, description: 'Pack name' })
  @ApiNoContentResponse({ description: 'The pack is no longer described' })
  @ApiErrors({
    400: { description: 'Not a pack name (empty, too long, or with a NUL)', message: 'name must be 1 to 128 characters without the NUL character' },
    404: { description: 'No pack with this name, or the admin API is disabled', message: 'No pack named "chapter-1"' },
  })
  @Audited('resources.pack-delete', (input) => `pack:${String(input.params.name)}`, () => ({}))
  deletePack(@Param('name', PackNamePipe) name: string): Promise<void> {
    return this.resources.deletePack(name);
  }
}
