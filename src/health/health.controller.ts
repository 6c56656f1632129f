import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckResult, HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { Public } from '../auth/auth.decorators';
import { API_TAGS } from '../openapi/api-tags';
import { HealthResponse } from './dto/health.response';

// terminus documents its own 503 body; ours is the error body (AllExceptionsFilter), so the docs are ours too.
const HEALTH_CHECK = { noCache: true, swaggerDocumentation: false };

@ApiTags(API_TAGS.health)
@Controller('health')
@Public()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly db: TypeOrmHealthIndicator,
  ) {}

  /** Liveness: the process answers. */
  @Get()
  @HealthCheck(HEALTH_CHECK)
  @ApiOperation({ summary: 'Liveness', description: 'The process answers; no dependency is checked.' })
  @ApiOkResponse({ type: HealthResponse })
  alive(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  /** Readiness: the database answers within 3 s (503 UNAVAILABLE otherwise). */
  @Get('ready')
  @HealthCheck(HEALTH_CHECK)
  @ApiOperation({ summary: 'Readiness', description: 'The database answers within 3 s.' })
  @ApiOkResponse({ type: HealthResponse })
  @ApiErrors(
    { 503: { description: 'The database did not answer within 3 s', message: 'Service unavailable' } },
    { database: false },
  )
  ready(): Promise<HealthCheckResult> {
    return this.health.check([() => this.db.pingCheck('database', { timeout: 3_000 })]);
  }
}
