import { Injectable } from '@nestjs/common';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export interface IssuedToken {
  /** The secret handed to the client once; never stored. */
  token: string;
  /** SHA-256 (hex) of the token: the only form kept at rest. */
  hash: string;
}

/** 32 random bytes = 256 bits of entropy (decisions.md §3). */
const TOKEN_BYTES = 32;

@Injectable()
export class TokenService {
  issue(): IssuedToken {
    const token = randomBytes(TOKEN_BYTES).toString('base64url');
    return { token, hash: this.hash(token) };
  }

  hash(token: string): string {
    return createHash('sha256').update(token, 'utf8').digest('hex');
  }

  /** Constant-time comparison of a presented token with a stored hash. */
  matches(token: string, storedHash: string): boolean {
    const presented = Buffer.from(this.hash(token), 'hex');
    const stored = Buffer.from(storedHash, 'hex');
    return presented.length === stored.length && timingSafeEqual(presented, stored);
  }
}
