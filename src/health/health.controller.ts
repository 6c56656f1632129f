import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckResult, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { Public } from '../auth/auth.decorators';
import { API_TAGS } from '../openapi/api-tags';
import { HealthResponse } from './dto/health.response';
import { ReadinessService } from './readiness.service';

// terminus documents its own 503 body; ours is the error body (AllExceptionsFilter), so the docs are ours too.
const HEALTH_CHECK = { noCache: true, swaggerDocumentation: false };

@ApiTags(API_TAGS.health)
@Controller('health')
@Public()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly readiness: ReadinessService,
  ) {}

  /** Liveness: the process answers. */
  @Get()
  @HealthCheck(HEALTH_CHECK)
  @ApiOperation({ summary: 'Liveness', description: 'The process answers; no dependency is checked.' })
  @ApiOkResponse({ type: HealthResponse })
  alive(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  /** Readiness: the database takes a write within 3 s and has refused none for want of a resource in 10 s (503 UNAVAILABLE otherwise). */
  @Get('ready')
  @HealthCheck(HEALTH_CHECK)
  @ApiOperation({
    summary: 'Readiness',
    description:
      'A pooled connection commits a one-row write within 3 s, and no statement was refused for want of a resource (disk, memory, connections) or as read-only in the last 10 s.',
  })
  @ApiOkResponse({ type: HealthResponse })
  @ApiErrors(
    {
      503: {
        description: 'The database takes no write within 3 s, or refused one for want of a resource in the last 10 s',
        message: 'Service unavailable',
      },
    },
    { database: false },
  )
  ready(): Promise<HealthCheckResult> {
    return this.health.check([
      async () => {
        const database = this.indicators.check('database');
        const reason = await this.readiness.check();
        return reason === null ? database.up() : database.down({ message: reason });
      },
    ]);
  }
}
