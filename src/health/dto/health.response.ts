import { ApiProperty } from '@nestjs/swagger';

const INDICATORS = {
  type: 'object',
  additionalProperties: {
    type: 'object',
    properties: { status: { type: 'string', example: 'up' } },
    additionalProperties: true,
  },
} as const;

/** 200 of /health and /health/ready: terminus's result (a failed check is 503 with the error body instead). */
export class HealthResponse {
  @ApiProperty({ type: String, enum: ['ok'], example: 'ok' })
  status!: 'ok';

  @ApiProperty({
    ...INDICATORS,
    description: 'Checks that passed, by name (readiness: database)',
    example: { database: { status: 'up' } },
  })
  info!: Record<string, unknown>;

  @ApiProperty({ ...INDICATORS, description: 'Checks that failed: none in a 200', example: {} })
  error!: Record<string, unknown>;

  @ApiProperty({ ...INDICATORS, description: 'Every check, by name', example: { database: { status: 'up' } } })
  details!: Record<string, unknown>;
}
