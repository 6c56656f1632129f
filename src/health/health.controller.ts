import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckResult, HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { Public } from '../common/decorators/auth.decorators';

@Controller('health')
@Public()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly db: TypeOrmHealthIndicator,
  ) {}

  /** Liveness: the process answers. */
  @Get()
  @HealthCheck()
  alive(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  /** Readiness: the database answers within 3 s (503 UNAVAILABLE otherwise). */
  @Get('ready')
  @HealthCheck()
  ready(): Promise<HealthCheckResult> {
    return this.health.check([() => this.db.pingCheck('database', { timeout: 3_000 })]);
  }
}
