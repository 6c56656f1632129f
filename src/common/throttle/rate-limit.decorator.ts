import { applyDecorators, SetMetadata, UseGuards } from '@nestjs/common';
import { CallerThrottlerGuard } from './caller-throttler.guard';
import { RATE_LIMIT_KEY, type RateLimitName } from './rate-limit';

export type { RateLimitName } from './rate-limit';

/**
 * Puts the route under the named per-caller limit: the name, and the guard that counts it. The
 * guard runs after the global AuthGuard (Nest runs global guards first), so it knows the caller;
 * routes without a limit do not pay for a throttler guard on every request (docs/benchmarks-archive.md,
 * "The plugin's reads").
 */
export const RateLimit = (name: RateLimitName) =>
  applyDecorators(SetMetadata(RATE_LIMIT_KEY, name), UseGuards(CallerThrottlerGuard));
