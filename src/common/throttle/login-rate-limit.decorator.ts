import { SetMetadata } from '@nestjs/common';

export const LOGIN_RATE_LIMIT_KEY = 'rhythmc:login-rate-limit';

/**
 * Server login, player login and player logout share one limit per client address:
 * THROTTLE_LOGIN_LIMIT requests per THROTTLE_LOGIN_TTL_SECONDS (decisions.md §1).
 */
export const LoginRateLimit = () => SetMetadata(LOGIN_RATE_LIMIT_KEY, true);
