import type { IncomingHttpHeaders } from 'node:http';

/**
 * The value of the first cookie named `name` in the request's Cookie header, or null. Only the
 * service's own cookies are read, whose values are base64url and dots: no decoding.
 */
export function readCookie(headers: IncomingHttpHeaders, name: string): string | null {
  const header = headers.cookie;
  if (typeof header !== 'string') return null;
  for (const part of header.split(';')) {
    const separator = part.indexOf('=');
    if (separator < 0) continue;
    if (part.slice(0, separator).trim() !== name) continue;
    const value = part.slice(separator + 1).trim();
    return value === '' ? null : value;
  }
  return null;
}

export interface CookieOptions {
  path: string;
  httpOnly: boolean;
  secure: boolean;
  /** Seconds; absent: the cookie ends with the browser session; 0 deletes it. */
  maxAge?: number;
}

/** A Set-Cookie value, always SameSite=Strict (the browser never sends it with a cross-site request). */
export function serializeCookie(name: string, value: string, options: CookieOptions): string {
  const parts = [`${name}=${value}`, `Path=${options.path}`, 'SameSite=Strict'];
  if (options.maxAge !== undefined) parts.push(`Max-Age=${options.maxAge}`);
  if (options.httpOnly) parts.push('HttpOnly');
  if (options.secure) parts.push('Secure');
  return parts.join('; ');
}
