import {
  applyDecorators,
  CallHandler,
  ExecutionContext,
  Injectable,
  NestInterceptor,
  Type,
  UseInterceptors,
} from '@nestjs/common';
import { ApiBody } from '@nestjs/swagger';
import type { Request } from 'express';
import type { Observable } from 'rxjs';

/** The request came without body bytes: no Transfer-Encoding, and no Content-Length or 0. */
function sentNoBody(request: Request): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] === undefined && (length === undefined || length.trim() === '0');
}

/**
 * A request that sent no body at all reads as `{}` (before the validation pipe). Only an absent
 * body: one sent with another Content-Type than JSON is still undefined here, and still refused.
 */
@Injectable()
export class AbsentBodyAsEmpty implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<Request & { body?: unknown }>();
    if (request.body === undefined && sentNoBody(request)) request.body = {};
    return next.handle();
  }
}

/**
 * The body of a route whose every field is optional (`{reason?}`, `{overlapSeconds?}`) may be left
 * out: `curl -X POST` with no body is the same call as `{}` (docs/decisions.md "Errors"). The DTO
 * still validates what is sent; the OpenAPI document says the body is optional.
 */
export const OptionalBody = (type: Type<object>): MethodDecorator =>
  applyDecorators(UseInterceptors(AbsentBodyAsEmpty), ApiBody({ type, required: false }));
