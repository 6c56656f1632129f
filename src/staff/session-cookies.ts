import type { Request, Response } from 'express';
import { CSRF_COOKIE, SESSION_COOKIE } from '../auth/staff-credentials';
import { serializeCookie } from '../common/http/cookies';
import { DEVICE_COOKIE, DEVICE_COOKIE_MAX_AGE_SECONDS } from './device-cookie';
import type { SignedIn } from './staff-session.service';

/**
 * The cookies of a console session (docs/decisions.md "Staff accounts"), all SameSite=Strict and
 * Secure when the request came over TLS (directly, or through a proxy TRUST_PROXY trusts):
 * - rhythmc_session: the secret, HttpOnly, Path=/admin (no other route ever sees it), no Max-Age
 *   (gone with the browser; the service ends it sooner by its own timeouts);
 * - rhythmc_csrf: its CSRF token, readable by the console's script, which echoes it as a header;
 * - rhythmc_device: this browser signed in to the account before (a year, HttpOnly, only sent to
 *   the sign-in route).
 */
export function setSessionCookies(request: Request, response: Response, signedIn: SignedIn): void {
  const secure = request.secure;
  const cookies = [
    serializeCookie(SESSION_COOKIE, signedIn.sessionSecret, { path: '/admin', httpOnly: true, secure }),
    serializeCookie(CSRF_COOKIE, signedIn.response.csrfToken, { path: '/', httpOnly: false, secure }),
  ];
  if (signedIn.deviceCookie !== null)
    cookies.push(
      serializeCookie(DEVICE_COOKIE, signedIn.deviceCookie, {
        path: '/admin/session',
        httpOnly: true,
        secure,
        maxAge: DEVICE_COOKIE_MAX_AGE_SECONDS,
      }),
    );
  response.append('Set-Cookie', cookies);
}

/** Sign-out: the browser forgets the session and its CSRF token (the device cookie stays). */
export function clearSessionCookies(request: Request, response: Response): void {
  const secure = request.secure;
  response.append('Set-Cookie', [
    serializeCookie(SESSION_COOKIE, '', { path: '/admin', httpOnly: true, secure, maxAge: 0 }),
    serializeCookie(CSRF_COOKIE, '', { path: '/', httpOnly: false, secure, maxAge: 0 }),
  ]);
}
