import { Body, Controller, Delete, HttpCode, Param, Post, Put } from '@nestjs/common';
import { AdminAuth } from '../common/decorators/auth.decorators';
import { PackDto, UpsertedResponse } from './dto/pack.dto';
import { RescanResponse } from './dto/rescan.response';
import { DtoArrayPipe } from './pipes/dto-array.pipe';
import { PackNamePipe } from './pipes/pack-name.pipe';
import { ResourcesService } from './resources.service';

/** Most packs one PUT /admin/packs may describe. */
const MAX_PACKS_PER_REQUEST = 1_000;

/** Resource administration (decisions.md §8). */
@Controller('admin')
@AdminAuth()
export class ResourcesAdminController {
  constructor(private readonly resources: ResourcesService) {}

  @Post('resources/rescan')
  @HttpCode(200)
  rescan(): Promise<RescanResponse> {
    return this.resources.rescan();
  }

  @Put('packs')
  upsertPacks(@Body(new DtoArrayPipe(PackDto, MAX_PACKS_PER_REQUEST)) packs: PackDto[]): Promise<UpsertedResponse> {
    return this.resources.upsertPacks(packs);
  }

  @Delete('packs/:name')
  @HttpCode(204)
  deletePack(@Param('name', PackNamePipe) name: string): Promise<void> {
    return this.resources.deletePack(name);
  }
}
