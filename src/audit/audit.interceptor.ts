import { CallHandler, ExecutionContext, Injectable, Logger, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { concatMap, Observable } from 'rxjs';
import { clientIp } from '../common/http/client-ip';
import { requestIdOf } from '../common/http/request-id';
import { AUDITED_KEY, AuditInput, AuditSpec } from './audit-spec';
import { AuditService } from './audit.service';

/** Who made the write: the caller the AuthGuard resolved (never a secret). */
function actorOf(request: Request): { credential: string; actor: string; actorId: number | null } {
  if (request.auth?.kind !== 'admin') return { credential: 'unknown', actor: 'unknown', actorId: null };
  const { credentialId, name, accountId } = request.auth.caller;
  return { credential: credentialId, actor: name, actorId: accountId };
}

/**
 * Appends one admin_audit row after an @Audited handler succeeded (its answer is not sent
 * before the row is written). A handler that throws writes no row: refused attempts are in the
 * request log, not the audit log. The row is written after the handler's own transaction
 * committed; if appending fails the write stands and is answered, and the failure is logged
 * with the request id (docs/decisions.md "Audit log").
 */
@Injectable()
export class AuditInterceptor implements NestInterceptor {
  private readonly logger = new Logger('Audit');

  constructor(
    private readonly reflector: Reflector,
    private readonly audit: AuditService,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const spec =
      context.getType() === 'http'
        ? this.reflector.get<AuditSpec | undefined>(AUDITED_KEY, context.getHandler())
        : undefined;
    if (!spec) return next.handle();
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    return next.handle().pipe(
      concatMap(async (result: unknown) => {
        await this.record(spec, request, response, result);
        return result;
      }),
    );
  }

  private async record(spec: AuditSpec, request: Request, response: Response, result: unknown): Promise<void> {
    const requestId = requestIdOf(response) ?? null;
    try {
      const input: AuditInput = {
        params: request.params as Record<string, string>,
        body: request.body as unknown,
        result,
        accountId: request.auth?.kind === 'admin' ? request.auth.caller.accountId : null,
      };
      await this.audit.append({
        action: spec.action,
        target: spec.target(input),
        summary: spec.summary(input),
        requestId,
        sourceAddress: clientIp(request),
        ...actorOf(request),
      });
    } catch (error) {
      this.logger.error(
        { err: error, requestId, action: spec.action },
        'The admin write succeeded but its audit row could not be written',
      );
    }
  }
}
