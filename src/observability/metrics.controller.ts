import { Controller, Get, Header, UseGuards } from '@nestjs/common';
import { Registry } from 'prom-client';
import { Public } from '../common/decorators/auth.decorators';
import { MetricsTokenGuard } from './metrics-token.guard';
import { MetricsService } from './metrics.service';

/** The Prometheus scrape target. Not a game-server call: public to the session guard, METRICS_TOKEN guards it. */
@Controller('metrics')
@Public()
@UseGuards(MetricsTokenGuard)
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  @Get()
  @Header('Content-Type', Registry.PROMETHEUS_CONTENT_TYPE)
  scrape(): Promise<string> {
    return this.metrics.render();
  }
}
