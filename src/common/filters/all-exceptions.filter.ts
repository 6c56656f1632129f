import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { mapError } from '../errors/error-body';
import { requestIdOf } from '../http/request-id';
import { routeOf } from '../http/route';

/** The wire error code of a response this filter wrote, for request metrics (login and upload outcomes). */
export function errorCodeOf(response: Response): string | undefined {
  const code: unknown = response.locals.errorCode;
  return typeof code === 'string' ? code : undefined;
}

/** The one place where HTTP errors become `{error, message}` bodies; 5xx causes are logged, never sent. */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('HTTP');

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') return;
    const ctx = host.switchToHttp();
    const response = ctx.getResponse<Response>();
    const request = ctx.getRequest<Request>();
    const mapped = mapError(exception);
    if (mapped.internal) {
      // With the request's id, as its completion line; never its body, headers or query.
      this.logger.error(
        {
          reqId: requestIdOf(response),
          err: exception,
          method: request.method,
          route: routeOf(request),
          status: mapped.status,
        },
        'Request failed',
      );
    }
    response.locals.errorCode = mapped.body.error;
    if (response.headersSent) return;
    for (const [name, value] of Object.entries(mapped.headers)) response.setHeader(name, value);
    response.status(mapped.status).json(mapped.body);
  }
}
