import { Body, Controller, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { AdminAuth, Permission } from '../auth/auth.decorators';
import { API_TAGS } from '../openapi/api-tags';
import { CreatedServerResponse, CreateServerDto } from './dto/create-server.dto';
import {
  MaintenanceDto,
  MaintenanceResponse,
  PluginPolicyDto,
  PluginPolicyResponse,
  SessionHandoverDto,
  SessionHandoverResponse,
} from './dto/settings.dto';
import { SERVER_LIST, ServerService } from './server.service';
import { AdminServerLogoutResponse, AdminServerPage, AdminServersQueryDto } from './dto/admin-server-read.dto';
import { BootstrapTokenResponse } from './dto/bootstrap-token.response';
import { ParseIntIdPipe } from '../common/pipes/parse-id.pipe';
import { listQuery, ListSpec, serialCursorKey } from '../common/pagination/list-query';
import { Audited, pathId } from '../audit/audited.decorator';

const SERVERS: ListSpec = { list: SERVER_LIST, cursorKey: serialCursorKey };

@ApiTags(API_TAGS.admin)
@Controller('admin')
@AdminAuth()
export class ServerAdminController {
  constructor(private readonly servers: ServerService) {}

  @Get('servers')
  @Permission('servers.read')
  @ApiOperation({
    summary: 'Registered game servers',
    description:
      'By serverID ascending: online state, players online, the latest login (plugin version, address, time) and the open WebSocket.',
  })
  @ApiOkResponse({ type: AdminServerPage })
  @ApiErrors({
    400: {
      description: 'limit, cursor or online is invalid, or the query has an unknown parameter',
      message: 'online must be true or false',
    },
  })
  listServers(@Query() query: AdminServersQueryDto): Promise<AdminServerPage> {
    return this.servers.listServers(listQuery(query, SERVERS));
  }

  @Post('servers')
  @Permission('servers.manage')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Register a game server',
    description: 'Answers its first bootstrap token, for the plugin configuration.',
  })
  @ApiCreatedResponse({ type: CreatedServerResponse })
  @ApiErrors({
    400: 'A body field is missing or invalid, or a server with this name exists',
    413: 'The body is over 256 KiB',
  })
  @Audited('server.register', ({ result }) => `server:${(result as CreatedServerResponse).serverID}`)
  createServer(@Body() body: CreateServerDto): Promise<CreatedServerResponse> {
    return this.servers.register(body);
  }

  @Post('servers/:serverID/bootstrap-token')
  @Permission('servers.manage')
  @HttpCode(201)
  @ApiOperation({
    summary: "Rotate a server's bootstrap token",
    description: 'The old token stops working; live sessions stay.',
  })
  @ApiParam({ name: 'serverID', schema: { type: 'integer', minimum: 1, maximum: 2_147_483_647 } })
  @ApiCreatedResponse({ type: BootstrapTokenResponse })
  @ApiErrors({
    400: 'serverID is not a positive integer',
    404: {
      description: 'No server with this serverID, or the admin API is disabled',
      code: 'NOT_FOUND',
      message: 'No server with serverID 7',
    },
  })
  @Audited('server.bootstrap-token', (input) => `server:${pathId(input, 'serverID')}`, () => ({}))
  rotateBootstrapToken(
    @Param('serverID', new ParseIntIdPipe('serverID')) serverId: number,
  ): Promise<BootstrapTokenResponse> {
    return this.servers.rotateBootstrapToken(serverId);
  }

  @Post('servers/:serverID/logout')
  @Permission('servers.logout')
  @HttpCode(200)
  @ApiOperation({
    summary: "Log a server's session out",
    description:
      'Ends its open session as its own logout would: its players are logged out and its WebSocket is closed (4002) on every instance. ' +
      'The plugin logs in again with its bootstrap token at its next call: rotate the token first to keep it out. A server that is not logged in: endedSessions 0.',
  })
  @ApiParam({ name: 'serverID', schema: { type: 'integer', minimum: 1, maximum: 2_147_483_647 } })
  @ApiOkResponse({ type: AdminServerLogoutResponse })
  @ApiErrors({
    400: { description: 'serverID is not a positive integer', message: 'serverID must be a positive integer' },
    404: {
      description: 'No server with this serverID, or the admin API is disabled',
      message: 'No server with serverID 7',
    },
  })
  @Audited(
    'server.logout',
    (input) => `server:${pathId(input, 'serverID')}`,
    ({ result }) => ({ endedSessions: (result as AdminServerLogoutResponse).endedSessions }),
  )
  logoutServer(
    @Param('serverID', new ParseIntIdPipe('serverID')) serverId: number,
  ): Promise<AdminServerLogoutResponse> {
    return this.servers.adminLogout(serverId);
  }

  @Put('maintenance')
  @Permission('settings.write')
  @ApiOperation({
    summary: 'Switch maintenance on or off',
    description: 'While on, server logins answer 401 MAINTENANCE with the message.',
  })
  @ApiOkResponse({ type: MaintenanceResponse })
  @ApiErrors({ 400: 'A body field is missing or invalid', 413: 'The body is over 256 KiB' })
  @Audited('service.maintenance', () => 'service:maintenance')
  setMaintenance(@Body() body: MaintenanceDto): Promise<MaintenanceResponse> {
    return this.servers.setMaintenance(body);
  }

  @Put('plugin-policy')
  @Permission('settings.write')
  @ApiOperation({
    summary: 'Set the plugin policy',
    description:
      'Server logins below minPluginVersion, or with a pluginSHA not listed (when the list is not empty), answer 426.',
  })
  @ApiOkResponse({ type: PluginPolicyResponse })
  @ApiErrors({
    400: 'A body field is missing or invalid, or latestPluginVersion is below minPluginVersion',
    413: 'The body is over 256 KiB',
  })
  @Audited('service.plugin-policy', () => 'service:plugin-policy')
  setPluginPolicy(@Body() body: PluginPolicyDto): Promise<PluginPolicyResponse> {
    return this.servers.setPluginPolicy(body);
  }

  @Put('session-handover')
  @Permission('settings.write')
  @ApiOperation({
    summary: 'Declare which game servers form one network (server switching)',
    description:
      'Within one network a player login through a server while the player is bound to another answers the profile and ends the old session ' +
      '(that server receives kick_player, reason "handover") instead of 409. off (the default) keeps the 409 of the spec.',
  })
  @ApiOkResponse({ type: SessionHandoverResponse })
  @ApiErrors({
    400: 'A body field is missing or invalid; groups with a mode other than groups, none with groups, a group of fewer than two servers, a server in two groups, or an unknown serverID',
    413: 'The body is over 256 KiB',
  })
  @Audited('service.session-handover', () => 'service:session-handover')
  setSessionHandover(@Body() body: SessionHandoverDto): Promise<SessionHandoverResponse> {
    return this.servers.setSessionHandover(body);
  }
}
