import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * A browser that signed in to an account before (OWASP's "device cookie"): `<account id>.<nonce>.<mac>`,
 * the MAC an HMAC-SHA256 under the account's device key, so only the service makes one and only for
 * that account. Its wrong passwords are counted per device, not with everyone else's against the
 * account: a guesser who names the account can lock out unknown browsers, never this one
 * (docs/decisions.md "Staff accounts").
 */
export const DEVICE_COOKIE = 'rhythmc_device';
/** A year: a device stays trusted until its account's password changes. */
export const DEVICE_COOKIE_MAX_AGE_SECONDS = 365 * 24 * 3600;

const SHAPE = /^([1-9]\d{0,9})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;

export function issueDeviceCookie(accountId: number, deviceKey: string): string {
  const nonce = randomBytes(16).toString('base64url');
  return `${accountId}.${nonce}.${mac(accountId, nonce, deviceKey)}`;
}

/** The device's id (its nonce) when the cookie is one the service issued for this account, else null. */
export function trustedDevice(cookie: string | null, accountId: number, deviceKey: string): string | null {
  const match = cookie === null ? null : SHAPE.exec(cookie);
  if (!match || Number(match[1]) !== accountId) return null;
  // The text compared, not the decoded bytes: the last of 43 base64url characters carries two
  // unused bits, and a changed value must not pass as the same MAC.
  const presented = Buffer.from(match[3], 'utf8');
  const expected = Buffer.from(mac(accountId, match[2], deviceKey), 'utf8');
  return presented.length === expected.length && timingSafeEqual(presented, expected) ? match[2] : null;
}

function mac(accountId: number, nonce: string, deviceKey: string): string {
  return createHmac('sha256', Buffer.from(deviceKey, 'hex')).update(`${accountId}.${nonce}`).digest('base64url');
}
