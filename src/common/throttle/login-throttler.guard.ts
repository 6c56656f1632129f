import { ExecutionContext, Injectable } from '@nestjs/common';
import { ThrottlerGuard, ThrottlerLimitDetail } from '@nestjs/throttler';
import { RateLimitedError } from '../errors/app-error';
import { LOGIN_RATE_LIMIT_KEY } from './login-rate-limit.decorator';

/** Applies the login limit to the routes marked @LoginRateLimit() only; runs before authentication. */
@Injectable()
export class LoginThrottlerGuard extends ThrottlerGuard {
  protected override shouldSkip(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return Promise.resolve(true);
    const marked = this.reflector.getAllAndOverride<boolean | undefined>(LOGIN_RATE_LIMIT_KEY, [context.getHandler(), context.getClass()]);
    return Promise.resolve(marked !== true);
  }

  protected override throwThrottlingException(_context: ExecutionContext, detail: ThrottlerLimitDetail): Promise<void> {
    throw new RateLimitedError(Math.max(1, Math.ceil(detail.timeToBlockExpire)));
  }
}
