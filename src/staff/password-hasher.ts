import { Injectable } from '@nestjs/common';
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { RateLimitedError } from '../common/errors/app-error';

/**
 * scrypt (RFC 7914) from Node's own crypto, at OWASP's "N=2^15, r=8, p=3" point (32 MiB and about
 * 0.2 s of one core per hash here; docs/decisions.md "Staff accounts"). The parameters are stored
 * with each hash, so raising them later re-hashes nobody and new hashes use the new ones.
 */
export const SCRYPT_PARAMETERS = { N: 2 ** 15, r: 8, p: 3 } as const;
const KEY_BYTES = 32;
const SALT_BYTES = 16;
/** Above 128·N·r (32 MiB) plus OpenSSL's own working space. */
const MAX_MEMORY = 64 * 1024 * 1024;

/** Hashes computed at once (libuv runs four threads, shared with file reads), and how many may wait. */
const CONCURRENT = 2;
const MAX_WAITING = 32;

const FORMAT = /^scrypt\$N=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/;

interface Parameters {
  N: number;
  r: number;
  p: number;
}

@Injectable()
export class PasswordHasher {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  /** `scrypt$N=32768,r=8,p=3$<salt>$<key>` of a password (NFKC-normalised first, as NIST 800-63B asks). */
  async hash(password: string): Promise<string> {
    return (await this.derive(password, randomBytes(SALT_BYTES), SCRYPT_PARAMETERS)).text;
  }

  /**
   * Whether `password` is the one `stored` was made from. `stored` null (no account has the name):
   * always false, after the same work, one scrypt at today's parameters with a random salt, so an
   * unknown name costs what a known one does. (No decoy hash is made at start: that took 0.2 s of a
   * core at every start of the service, and of every test service.)
   */
  async verify(password: string, stored: string | null): Promise<boolean> {
    if (stored === null) {
      await this.derive(password, randomBytes(SALT_BYTES), SCRYPT_PARAMETERS);
      return false;
    }
    const match = FORMAT.exec(stored);
    if (!match) return false;
    const [, n, r, p, salt, key] = match;
    const expected = Buffer.from(key, 'base64url');
    const { key: derived } = await this.derive(
      password,
      Buffer.from(salt, 'base64url'),
      { N: Number(n), r: Number(r), p: Number(p) },
      expected.length,
    );
    return timingSafeEqual(derived, expected);
  }

  private async derive(
    password: string,
    salt: Buffer,
    parameters: Parameters,
    length = KEY_BYTES,
  ): Promise<{ key: Buffer; text: string }> {
    await this.acquire();
    try {
      const key = await new Promise<Buffer>((resolve, reject) =>
        scrypt(password.normalize('NFKC'), salt, length, { ...parameters, maxmem: MAX_MEMORY }, (error, derived) =>
          error ? reject(error) : resolve(derived),
        ),
      );
      const { N, r, p } = parameters;
      return { key, text: `scrypt$N=${N},r=${r},p=${p}$${salt.toString('base64url')}$${key.toString('base64url')}` };
    } finally {
      this.release();
    }
  }

  /** A slot to hash in; 429 when too many sign-ins already wait (a flood must not queue without end). */
  private acquire(): Promise<void> {
    if (this.running < CONCURRENT) {
      this.running++;
      return Promise.resolve();
    }
    if (this.waiting.length >= MAX_WAITING) return Promise.reject(new RateLimitedError(1));
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }
}
