/**
 * The named limits of the login routes (decisions.md "Rate limits"). Each is counted per caller,
 * after authentication has said who the caller is:
 * - `server-login`: per presented bootstrap credential (THROTTLE_LOGIN_LIMIT / _TTL_SECONDS);
 * - `player-login`: player login and logout together, per calling server session
 *   (THROTTLE_PLAYER_LOGIN_LIMIT / _TTL_SECONDS).
 * Failed attempts are counted separately (LoginFailureLimiter, NetTokenGuesses).
 */
export type RateLimitName = 'server-login' | 'player-login';

export const RATE_LIMIT_KEY = 'rhythmc:rate-limit';
