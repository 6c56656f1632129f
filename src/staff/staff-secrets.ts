import { createHash, randomBytes } from 'node:crypto';
import { STAFF_TOKEN_PREFIX } from '../auth/staff-credentials';

/** SHA-256 (hex) of a session secret or a personal token: the only form stored. */
export function secretHash(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** A console session's secret: 256 random bits, the cookie's value. */
export function newSessionSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** A personal API token: `rst_` and 256 random bits. */
export function newPersonalToken(): string {
  return `${STAFF_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/** A device-cookie key for an account (hex), new with every password. */
export function newDeviceKey(): string {
  return randomBytes(32).toString('hex');
}
