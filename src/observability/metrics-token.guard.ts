import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { bearerToken } from '../auth/auth.guard';
import { UnauthorizedError } from '../common/errors/app-error';
import { APP_CONFIG, AppConfig } from '../config/app-config';

/** GET /metrics: open without METRICS_TOKEN (private network), else that bearer token (constant-time compare). */
@Injectable()
export class MetricsTokenGuard implements CanActivate {
  private readonly tokenHash: Buffer | null;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.tokenHash = config.metricsToken === null ? null : createHash('sha256').update(config.metricsToken).digest();
  }

  canActivate(context: ExecutionContext): boolean {
    if (this.tokenHash === null) return true;
    const token = bearerToken(context.switchToHttp().getRequest<Request>().headers.authorization);
    if (token === null || !timingSafeEqual(createHash('sha256').update(token).digest(), this.tokenHash)) {
      throw new UnauthorizedError('Invalid metrics token');
    }
    return true;
  }
}
