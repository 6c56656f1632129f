import type { INestApplication } from '@nestjs/common';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger as Pino } from 'pino';
import { routeOf } from '../common/http/route';
import { REQUEST_ID_HEADER, requestIdFor, setRequestId } from '../common/http/request-id';
import { logRequest } from './logging';
import { MetricsService } from './metrics.service';

const REQUEST_ID_HEADER_KEY = REQUEST_ID_HEADER.toLowerCase();

/**
 * The first middleware of every request: its id (answered in X-Request-Id, kept for the exception
 * filter's line), then, when the response closes, its log line and metrics. Mounted before the
 * body parser, so that refused bodies (400, 413) are logged and counted too. One listener, no
 * per-request logger or async context: upload and baltop are benchmarked (docs/benchmarks.md).
 */
export function observeRequests(app: INestApplication, rootLogger: Pino): RequestHandler {
  const metrics = app.get(MetricsService);
  return (request: Request, response: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    const id = requestIdFor(request.headers[REQUEST_ID_HEADER_KEY]);
    response.setHeader(REQUEST_ID_HEADER, id);
    setRequestId(response, id);
    response.once('close', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = routeOf(request);
      metrics.observeRequest(request, response, route, seconds);
      logRequest(rootLogger, id, request, response, route, seconds);
    });
    next();
  };
}
