import { createHash } from 'node:crypto';
import { TokenService } from './token.service';

describe('TokenService', () => {
  const tokens = new TokenService();

  it('issues url-safe tokens of 256 bits whose hash is their SHA-256', () => {
    const { token, hash } = tokens.issue();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(token, 'base64url')).toHaveLength(32);
    expect(hash).toBe(createHash('sha256').update(token).digest('hex'));
  });

  it('never issues the same token twice', () => {
    const seen = new Set(Array.from({ length: 1000 }, () => tokens.issue().token));
    expect(seen.size).toBe(1000);
  });

  it('matches a token only against its own hash', () => {
    const a = tokens.issue();
    const b = tokens.issue();
    expect(tokens.matches(a.token, a.hash)).toBe(true);
    expect(tokens.matches(a.token, b.hash)).toBe(false);
    expect(tokens.matches(`${a.token}x`, a.hash)).toBe(false);
    expect(tokens.matches('', a.hash)).toBe(false);
  });

  it('rejects a malformed stored hash without throwing', () => {
    const a = tokens.issue();
    expect(tokens.matches(a.token, 'abc')).toBe(false);
    expect(tokens.matches(a.token, '')).toBe(false);
  });
});
