import { Controller, Get, Header, UseGuards } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Registry } from 'prom-client';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { Public } from '../auth/auth.decorators';
import { API_TAGS } from '../openapi/api-tags';
import { MetricsTokenGuard } from './metrics-token.guard';
import { MetricsService } from './metrics.service';
import { CountAs } from '../common/decorators/route-metric.decorator';

/** The Prometheus scrape target. Not a game-server call: public to the session guard, METRICS_TOKEN guards it. */
@ApiTags(API_TAGS.health)
@Controller('metrics')
@Public()
@UseGuards(MetricsTokenGuard)
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  @Get()
  @CountAs('scrape')
  @Header('Content-Type', Registry.PROMETHEUS_CONTENT_TYPE)
  @ApiOperation({
    summary: 'Prometheus metrics',
    description:
      'The Prometheus text format: requests by route and status, latencies, logins by mode and result, uploads, live sessions, WebSocket connections, process metrics. ' +
      'Open unless METRICS_TOKEN is set; then it needs `Authorization: Bearer <METRICS_TOKEN>`. Keep it off the public load balancer (operations.md).',
  })
  @ApiOkResponse({
    description: 'The metrics of this instance',
    content: { [Registry.PROMETHEUS_CONTENT_TYPE]: { schema: { type: 'string' } } },
  })
  @ApiErrors(
    { 401: { description: 'METRICS_TOKEN is set and the bearer token is not it', message: 'Invalid metrics token' } },
    { database: false },
  )
  scrape(): Promise<string> {
    return this.metrics.render();
  }
}
