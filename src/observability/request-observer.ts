import type { INestApplication } from '@nestjs/common';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger as Pino } from 'pino';
import { bindRequestLogger, createHttpLogger } from './logging';
import { MetricsService } from './metrics.service';

/**
 * The first middleware of every request: request id (answered in X-Request-Id), the request's log
 * context and its completion line, and request metrics when the response closes. Mounted before
 * the body parser so that refused bodies (400, 413) are logged and counted too.
 */
export function observeRequests(app: INestApplication, rootLogger: Pino): RequestHandler {
  const httpLogger = createHttpLogger(rootLogger);
  const metrics = app.get(MetricsService);
  return (request: Request, response: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    httpLogger(request, response);
    response.once('close', () => metrics.observeRequest(request, response, Number(process.hrtime.bigint() - started) / 1e9));
    bindRequestLogger(request, next);
  };
}
