import { ApiProperty } from '@nestjs/swagger';
import { MaintenanceResponse, PluginPolicyResponse, SessionHandoverResponse } from '../../server/dto/settings.dto';

export class OverviewUploads {
  @ApiProperty({ type: 'integer', description: 'Score records received in the last minute', example: 42 })
  lastMinute!: number;

  @ApiProperty({
    type: 'integer',
    description: 'Score records received in the last 15 minutes (at most the newest 100,000 are counted)',
    example: 512,
  })
  last15Minutes!: number;
}

/** GET /admin/overview: the state of the network at a glance. */
export class AdminOverviewResponse {
  @ApiProperty({ type: 'integer', description: 'Servers with a live server session', example: 97 })
  serversOnline!: number;

  @ApiProperty({ type: 'integer', description: 'Live player sessions', example: 1830 })
  playersOnline!: number;

  @ApiProperty({ type: OverviewUploads })
  uploads!: OverviewUploads;

  @ApiProperty({ type: MaintenanceResponse, description: 'Maintenance in force' })
  maintenance!: MaintenanceResponse;

  @ApiProperty({
    type: PluginPolicyResponse,
    nullable: true,
    description: 'The plugin policy in force; null when none was set',
  })
  pluginPolicy!: PluginPolicyResponse | null;

  @ApiProperty({ type: SessionHandoverResponse, description: 'Session handover between servers in force' })
  sessionHandover!: SessionHandoverResponse;
}
