import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { AdminAuth, Permission } from '../auth/auth.decorators';
import { API_TAGS } from '../openapi/api-tags';
import { OpenConnectionResponse } from './dto/realtime.dto';
import { ConnectionRegistry } from './connection-registry';

@ApiTags(API_TAGS.admin)
@Controller('admin/realtime')
@AdminAuth()
export class RealtimeController {
  constructor(private readonly registry: ConnectionRegistry) {}

  /** Game servers connected over WebSocket, on every instance. */
  @Get('connections')
  @Permission('servers.read')
  @ApiOperation({
    summary: 'Game servers connected over WebSocket',
    description: 'On every instance (rows seen in the last 90 s).',
  })
  @ApiOkResponse({ type: [OpenConnectionResponse] })
  @ApiErrors({})
  connections(): Promise<OpenConnectionResponse[]> {
    return this.registry.listConnections();
  }
}
