import { SetMetadata } from '@nestjs/common';

/**
 * What a route means to the request metrics (src/observability/metrics.service.ts), beyond the
 * request count and latency every route gets: the login and upload outcome counters, or no
 * counting at all (the scrape). Read from the handler at start-up, so renaming or moving a route
 * keeps its counter; a controller needs no import of observability/ (nothing depends on it).
 */
export type RouteMetric = 'server-login' | 'player-login' | 'upload' | 'scrape';

export const ROUTE_METRIC_KEY = 'rhythmc:route-metric';

export const CountAs = (metric: RouteMetric) => SetMetadata(ROUTE_METRIC_KEY, metric);
