import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { mapError } from '../errors/error-body';

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
      this.logger.error(
        `${request.method} ${request.path} -> ${mapped.status}: ${exception instanceof Error ? (exception.stack ?? exception.message) : String(exception)}`,
      );
    }
    if (response.headersSent) return;
    for (const [name, value] of Object.entries(mapped.headers)) response.setHeader(name, value);
    response.status(mapped.status).json(mapped.body);
  }
}
