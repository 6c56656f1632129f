import { Controller, Get } from '@nestjs/common';
import { AdminAuth } from '../common/decorators/auth.decorators';
import { OpenConnectionResponse } from './dto/realtime.dto';
import { RealtimeService } from './realtime.service';

@Controller('admin/realtime')
@AdminAuth()
export class RealtimeController {
  constructor(private readonly realtime: RealtimeService) {}

  /** Game servers connected over WebSocket, on every instance. */
  @Get('connections')
  connections(): Promise<OpenConnectionResponse[]> {
    return this.realtime.listConnections();
  }
}
