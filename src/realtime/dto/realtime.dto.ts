import { ApiProperty } from '@nestjs/swagger';

/** A WebSocket frame (decisions.md §7): JSON text `{"event": string, "data": object}`. */
export interface Frame<T = Record<string, unknown>> {
  event: string;
  data: T;
}

export class OpenConnectionResponse {
  @ApiProperty({ type: String, format: 'uuid', example: '0b0f4bb5-6f0c-4a86-8d7b-2f9c3a6f1e11' })
  connectionId!: string;

  @ApiProperty({ type: 'integer', example: 1 })
  serverID!: number;

  @ApiProperty({ type: String, description: 'The service instance holding the socket', example: '5d1c0e0a-3f7e-4a3b-9a34-8a1f4e2b7c55' })
  instanceId!: string;

  @ApiProperty({ type: String, nullable: true, description: 'Address of the game server as the instance saw it', example: '203.0.113.7' })
  remoteAddress!: string | null;

  @ApiProperty({ type: String, description: 'Local date-time the socket opened', example: '2026-03-20T18:00:02' })
  connectedAt!: string;
}
