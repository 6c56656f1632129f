import { Body, Controller, HttpCode, Post, Put } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { AdminAuth } from '../common/decorators/auth.decorators';
import { API_TAGS } from '../openapi/api-tags';
import { CreatedServerResponse, CreateServerDto } from './dto/create-server.dto';
import { MaintenanceDto, MaintenanceResponse, PluginPolicyDto, PluginPolicyResponse } from './dto/settings.dto';
import { ServerService } from './server.service';

@ApiTags(API_TAGS.admin)
@Controller('admin')
@AdminAuth()
export class ServerAdminController {
  constructor(private readonly servers: ServerService) {}

  @Post('servers')
  @HttpCode(201)
  @ApiOperation({ summary: 'Register a game server', description: 'Answers its first bootstrap token, for the plugin configuration.' })
  @ApiCreatedResponse({ type: CreatedServerResponse })
  @ApiErrors({ 400: 'A body field is missing or invalid, or a server with this name exists', 413: 'The body is over 256 KiB' })
  createServer(@Body() body: CreateServerDto): Promise<CreatedServerResponse> {
    return this.servers.register(body);
  }

  @Put('maintenance')
  @ApiOperation({ summary: 'Switch maintenance on or off', description: 'While on, server logins answer 401 MAINTENANCE with the message.' })
  @ApiOkResponse({ type: MaintenanceResponse })
  @ApiErrors({ 400: 'A body field is missing or invalid', 413: 'The body is over 256 KiB' })
  setMaintenance(@Body() body: MaintenanceDto): Promise<MaintenanceResponse> {
    return this.servers.setMaintenance(body);
  }

  @Put('plugin-policy')
  @ApiOperation({
    summary: 'Set the plugin policy',
    description: 'Server logins below minPluginVersion, or with a pluginSHA not listed (when the list is not empty), answer 426.',
  })
  @ApiOkResponse({ type: PluginPolicyResponse })
  @ApiErrors({ 400: 'A body field is missing or invalid, or latestPluginVersion is below minPluginVersion', 413: 'The body is over 256 KiB' })
  setPluginPolicy(@Body() body: PluginPolicyDto): Promise<PluginPolicyResponse> {
    return this.servers.setPluginPolicy(body);
  }
}
