import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { bearerToken } from '../auth/auth.guard';
import { UnauthorizedError } from '../common/errors/app-error';
import { clientIp } from '../common/http/client-ip';
import { AdminAuthLimiter } from '../common/throttle/admin-auth.limiter';
import { APP_CONFIG, AppConfig } from '../config/app-config';

/**
 * GET /metrics: open without METRICS_TOKEN (private network), else that bearer token (constant-time
 * compare), with wrong tokens limited per source address.
 */
@Injectable()
export class MetricsTokenGuard implements CanActivate {
  private readonly tokenHash: Buffer | null;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly metricsAuth: AdminAuthLimiter,
  ) {
    this.tokenHash = config.metricsToken === null ? null : createHash('sha256').update(config.metricsToken).digest();
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.tokenHash === null) return true;
    const request = context.switchToHttp().getRequest<Request>();
    const address = clientIp(request);
    // Wrong tokens lock their source address out of /metrics, as for the admin API (AdminAuthLimiter).
    await this.metricsAuth.assertOpen('metrics', address);
    const token = bearerToken(request.headers.authorization);
    if (token === null || !timingSafeEqual(createHash('sha256').update(token).digest(), this.tokenHash)) {
      if (token !== null) await this.metricsAuth.failed('metrics', address);
      throw new UnauthorizedError('Invalid metrics token');
    }
    await this.metricsAuth.succeeded('metrics', address);
    return true;
  }
}
