import { createHash } from 'node:crypto';
import type { Request } from 'express';
import { STAFF_SESSION_COOKIE } from '../openapi/security-schemes';
import type { AdminCaller } from './auth.types';

/**
 * How the AuthGuard asks the staff module (src/staff) who a console session or a personal API
 * token belongs to. The staff module provides it under STAFF_CREDENTIALS: auth declares the port,
 * staff implements it, so auth (which every controller imports) does not import staff. Both
 * answers are read from the database at every request, so a disabled or deleted account, a
 * revoked token and a changed role take effect at once on every instance.
 */
export interface StaffCredentials {
  /** The caller of a live session (the cookie's secret); null when unknown, expired or its account disabled. */
  resolveSession(secret: string): Promise<AdminCaller | null>;
  /** The caller of a personal API token; null when unknown, revoked or its account disabled. */
  resolveToken(token: string): Promise<AdminCaller | null>;
}

export const STAFF_CREDENTIALS = Symbol('STAFF_CREDENTIALS');

/** Personal API tokens start with this, so the guard tells them from ADMIN_TOKEN without a lookup. */
export const STAFF_TOKEN_PREFIX = 'rst_';

/** The console session: HttpOnly, SameSite=Strict, Path=/admin. */
export const SESSION_COOKIE = STAFF_SESSION_COOKIE;
/** The session's CSRF token, readable by the console's script (which sends it back as CSRF_HEADER). */
export const CSRF_COOKIE = 'rhythmc_csrf';
export const CSRF_HEADER = 'x-csrf-token';

/**
 * The CSRF token of a session: derived from its secret (SHA-256 with a label), so it needs no
 * storage, and only who holds the secret (the browser's HttpOnly cookie) can compute it.
 */
export function csrfTokenOf(sessionSecret: string): string {
  return createHash('sha256').update('rhythmc-csrf\0').update(sessionSecret).digest('base64url');
}

/**
 * Why a browser request is not from the console's own origin, or null when nothing says so:
 * `Sec-Fetch-Site` other than `same-origin`, or an `Origin` other than the service's own (its
 * PUBLIC_BASE_URL, or the scheme and Host the request came in on). A request without either
 * header (an old browser, a script) passes this check and still needs the CSRF token.
 */
export function crossSiteProblem(request: Request, publicBaseUrl: string): string | null {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') return 'the request is cross-site (Sec-Fetch-Site)';
  const origin = request.headers.origin;
  if (origin !== undefined) {
    const own = [new URL(publicBaseUrl).origin];
    if (typeof request.headers.host === 'string') own.push(`${request.protocol}://${request.headers.host}`);
    if (!own.includes(origin)) return "the request's Origin is not this service";
  }
  return null;
}
