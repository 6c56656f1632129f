import { Injectable } from '@nestjs/common';
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

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

  /** One-shot `crypto.hash`: a third of createHash().update().digest()'s time on a token (every authenticated request hashes one). */
  hash(token: string): string {
    return hash('sha256', token, 'hex');
  }

  /** Constant-time comparison of a presented token with a stored hash. */
  matches(token: string, storedHash: string): boolean {
    const presented = Buffer.from(this.hash(token), 'hex');
    const stored = Buffer.from(storedHash, 'hex');
    return presented.length === stored.length && timingSafeEqual(presented, stored);
  }
}
