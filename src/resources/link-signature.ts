import { createHmac, timingSafeEqual } from 'node:crypto';
import { strictInteger } from '../common/validation/strict-integer';

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
  const expiresAt = strictInteger(expires, 0, 999_999_999_999, 12);
  if (expiresAt === null || typeof signature !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(signature)) return 'malformed';
  const expected = Buffer.from(signResourceLink(key, path, expiresAt), 'base64url');
  const presented = Buffer.from(signature, 'base64url');
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return 'bad-signature';
  // Checked after the signature, so an altered expiry reads as a bad signature, not as "expired".
  if (expiresAt <= nowSeconds) return 'expired';
  return 'ok';
}

/**
 * A pack link: HMAC-SHA256 over the pack file's SHA-1 and its path, without an expiry. It stays
 * valid while the file is unchanged (the route compares the SHA-1 with the index) and stops
 * working when the pack changes. The message starts with `pack:`, never with a digit, so it
 * cannot collide with an expiring link's.
 */
export function signPackLink(key: Buffer, path: string, sha1: string): string {
  return createHmac('sha256', key).update(`pack:${sha1}:${path}`).digest('base64url');
}

export type PackLinkCheck = 'ok' | 'malformed' | 'bad-signature';

export function checkPackLink(key: Buffer, path: string, version: unknown, signature: unknown): PackLinkCheck {
  if (typeof version !== 'string' || typeof signature !== 'string') return 'malformed';
  if (!/^[0-9a-f]{40}$/.test(version) || !/^[A-Za-z0-9_-]{43}$/.test(signature)) return 'malformed';
  const expected = Buffer.from(signPackLink(key, path, version), 'base64url');
  const presented = Buffer.from(signature, 'base64url');
  return presented.length === expected.length && timingSafeEqual(presented, expected) ? 'ok' : 'bad-signature';
}
