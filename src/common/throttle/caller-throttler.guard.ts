import { ExecutionContext, Injectable } from '@nestjs/common';
import { ThrottlerGuard, ThrottlerLimitDetail, ThrottlerRequest } from '@nestjs/throttler';
import type { Request } from 'express';
import { RateLimitedError } from '../errors/app-error';
import { RATE_LIMIT_KEY, type RateLimitName } from './rate-limit';

/**
 * The per-caller limits of the routes marked @RateLimit(name), which attaches this guard; it runs
 * after the global AuthGuard. The tracker is the authenticated caller (the bootstrap credential's hash for server login, the
 * server session for player login and logout), never the client address, so the players of one
 * game server, or game servers behind one proxy, do not share a bucket. Only the throttler named
 * on the route counts the request; its key is the same on every route that names it (player login
 * and logout share one budget).
 */
@Injectable()
export class CallerThrottlerGuard extends ThrottlerGuard {
  protected override shouldSkip(context: ExecutionContext): Promise<boolean> {
    return Promise.resolve(context.getType() !== 'http' || this.limitOf(context) === undefined);
  }

  protected override handleRequest(request: ThrottlerRequest): Promise<boolean> {
    if (request.throttler.name !== this.limitOf(request.context)) return Promise.resolve(true);
    return super.handleRequest(request);
  }

  protected override getTracker(request: Request): Promise<string> {
    const auth = request.auth;
    switch (auth?.kind) {
      case 'bootstrap':
        return Promise.resolve(`credential:${auth.credentialHash}`);
      case 'server':
        return Promise.resolve(`server-session:${auth.session.sessionId}`);
      default:
        // A @RateLimit route is always authenticated; failing loudly beats a shared bucket.
        throw new Error(`@RateLimit route without a bootstrap or server identity (${auth?.kind ?? 'none'})`);
    }
  }

  protected override generateKey(_context: ExecutionContext, tracker: string, throttlerName: string): string {
    return `${throttlerName}:${tracker}`;
  }

  protected override throwThrottlingException(_context: ExecutionContext, detail: ThrottlerLimitDetail): Promise<void> {
    throw new RateLimitedError(Math.max(1, Math.ceil(detail.timeToBlockExpire)));
  }

  private limitOf(context: ExecutionContext): RateLimitName | undefined {
    return this.reflector.getAllAndOverride<RateLimitName | undefined>(RATE_LIMIT_KEY, [
      context.getHandler(),
      context.getClass(),
    ]);
  }
}
