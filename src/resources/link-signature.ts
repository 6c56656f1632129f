import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * HMAC-SHA256 over the expiry and the relative path of a resource file, base64url. The expiry
 * comes first and is all digits, so no path can be made to collide with another (path, expiry).
 */
export function signResourceLink(key: Buffer, path: string, expiresAt: number): string {
  return createHmac('sha256', key).update(`${expiresAt}:${path}`).digest('base64url');
}

export type LinkCheck = 'ok' | 'malformed' | 'expired' | 'bad-signature';

/** Checks a signed link's query values; the comparison is constant-time. */
export function checkResourceLink(key: Buffer, path: string, expires: unknown, signature: unknown, nowSeconds: number): LinkCheck {
  if (typeof expires !== 'string' || typeof signature !== 'string') return 'malformed';
  if (!/^\d{1,12}$/.test(expires) || !/^[A-Za-z0-9_-]{43}$/.test(signature)) return 'malformed';
  const expected = Buffer.from(signResourceLink(key, path, Number(expires)), 'base64url');
  const presented = Buffer.from(signature, 'base64url');
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return 'bad-signature';
  // Checked after the signature, so an altered expiry reads as a bad signature, not as "expired".
  if (Number(expires) <= nowSeconds) return 'expired';
  return 'ok';
}
