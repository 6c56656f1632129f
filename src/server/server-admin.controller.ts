import { Body, Controller, HttpCode, Post, Put } from '@nestjs/common';
import { AdminAuth } from '../common/decorators/auth.decorators';
import { CreatedServerResponse, CreateServerDto } from './dto/create-server.dto';
import { MaintenanceDto, PluginPolicyDto } from './dto/settings.dto';
import { ServerService } from './server.service';
import type { MaintenanceSetting, PluginPolicy } from './server.types';

@Controller('admin')
@AdminAuth()
export class ServerAdminController {
  constructor(private readonly servers: ServerService) {}

  @Post('servers')
  @HttpCode(201)
  createServer(@Body() body: CreateServerDto): Promise<CreatedServerResponse> {
    return this.servers.register(body);
  }

  @Put('maintenance')
  setMaintenance(@Body() body: MaintenanceDto): Promise<MaintenanceSetting> {
    return this.servers.setMaintenance(body);
  }

  @Put('plugin-policy')
  setPluginPolicy(@Body() body: PluginPolicyDto): Promise<PluginPolicy> {
    return this.servers.setPluginPolicy(body);
  }
}
