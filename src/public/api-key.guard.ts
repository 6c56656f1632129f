import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { bearerToken } from '../auth/auth.guard';
import { ForbiddenError, RateLimitedError, UnauthorizedError } from '../common/errors/app-error';
import { addressBucket, clientIp } from '../common/http/client-ip';
import { WindowLimiter, WindowState } from '../common/throttle/window-limiter';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { ApiKeyService } from './api-key.service';
import {
  FAILED_KEY_LIMIT,
  type PublicApiScope,
  RATE_LIMIT_POLICY,
  RATE_LIMIT_WINDOW_SECONDS,
} from './public-api.rules';

export const PUBLIC_SCOPE_KEY = 'rhythmc:public-scope';

/**
 * Whether an answer may be kept by shared caches (a CDN): only the anonymous tier's, which anyone
 * may have anyway. Read by PublicCacheInterceptor.
 */
export const SHARED_CACHE_LOCAL = 'publicApiShared';

/**
 * The public API's door, on every `/public/v1` route (attached by @PublicApiAuth, after the
 * global AuthGuard): the caller is a live key with the route's scope, or, with no Authorization
 * header at all and PUBLIC_API_ANONYMOUS_RATE_LIMIT above 0, the anonymous tier of its address
 * (TRUST_PROXY). Every call then counts against the caller's budget of a minute (WindowLimiter:
 * Redis when set, so every instance shares it) and is answered with the RateLimit-Limit,
 * -Remaining, -Reset and -Policy fields of draft-ietf-httpapi-ratelimit-headers-06; the call over
 * the budget is 429 RATE_LIMITED with Retry-After.
 *
 * A presented key that is no live key is 401, and counts against its address: over
 * FAILED_KEY_LIMIT a minute the address gets 429 instead (a live key is never refused by that).
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly keys: ApiKeyService,
    private readonly limiter: WindowLimiter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    const scope = this.reflector.get<PublicApiScope | undefined>(PUBLIC_SCOPE_KEY, context.getHandler());
    if (scope === undefined) throw new Error('ApiKeyGuard on a route without @PublicApiAuth(scope)');

    const header = request.headers.authorization;
    let counter: string;
    let limit: number;
    let keyId: number | null = null;
    if (header === undefined) {
      limit = this.config.publicApiAnonymousRateLimit;
      if (limit === 0)
        throw new UnauthorizedError('An API key is required (Authorization: Bearer <key>); ask the network for one');
      counter = `address:${addressBucket(clientIp(request))}`;
    } else {
      const presented = bearerToken(header);
      const key = presented === null ? null : await this.keys.resolve(presented);
      if (key === null) throw await this.refused(request);
      if (!key.scopes.has(scope)) throw new ForbiddenError(`This API key does not have the scope ${scope}`);
      this.keys.noteUse(key.id);
      keyId = key.id;
      counter = `key:${key.id}`;
      limit = key.rateLimit;
    }
    request.auth = { kind: 'api-key', keyId };
    const state = await this.limiter.hit(RATE_LIMIT_POLICY, counter, limit, RATE_LIMIT_WINDOW_SECONDS);
    setRateLimitFields(response, state);
    if (state.retryAfterSeconds !== null) throw new RateLimitedError(state.retryAfterSeconds);
    response.locals[SHARED_CACHE_LOCAL] = keyId === null;
    return true;
  }

  /** 401 for a key that is not a live key, or 429 once its address presented too many of them. */
  private async refused(request: Request): Promise<Error> {
    const state = await this.limiter.hit(
      `${RATE_LIMIT_POLICY}-failed-key`,
      `address:${addressBucket(clientIp(request))}`,
      FAILED_KEY_LIMIT,
      RATE_LIMIT_WINDOW_SECONDS,
    );
    if (state.retryAfterSeconds !== null) return new RateLimitedError(state.retryAfterSeconds);
    return new UnauthorizedError('Invalid or revoked API key');
  }
}

/** The current-limit fields of draft-ietf-httpapi-ratelimit-headers-06 (the RateLimit-* names, each an Integer). */
export function setRateLimitFields(response: Response, state: WindowState): void {
  response.setHeader('RateLimit-Limit', String(state.limit));
  response.setHeader('RateLimit-Remaining', String(state.remaining));
  response.setHeader('RateLimit-Reset', String(state.resetSeconds));
  response.setHeader('RateLimit-Policy', `${state.limit};w=${RATE_LIMIT_WINDOW_SECONDS}`);
}
