/**
 * The public read API's own rules (docs/decisions.md "Public API"): its scopes, its key format and
 * its rate-limit window. Ranks, bans and what counts are not here: the public routes read them
 * from the modules that own them.
 */

/** Where the public routes live; a new major version of the answers gets a new prefix beside it. */
export const PUBLIC_API_PREFIX = 'public/v1';

/** What a key may read: the boards and charts, or players (profiles, name search). */
export const PUBLIC_API_SCOPES = ['read:boards', 'read:players'] as const;
export type PublicApiScope = (typeof PUBLIC_API_SCOPES)[number];

/** Every key starts with this, so a leaked key is recognisable (secret scanners, logs). */
export const API_KEY_PREFIX = 'rpk_';

/** A key as issued: the prefix and 43 base64url characters (256 bits). Anything else is not a key. */
export const API_KEY_PATTERN = /^rpk_[A-Za-z0-9_-]{43}$/;

/** The limits count calls in windows of a minute ("1,200 a minute"). */
export const RATE_LIMIT_WINDOW_SECONDS = 60;

/** Presentations of an unknown or revoked key per address and window before that address gets 429. */
export const FAILED_KEY_LIMIT = 30;

/** The name of the limit in RateLimit-Policy and the throttler storage. */
export const RATE_LIMIT_POLICY = 'public-api';
