import { base32Decode, base32Encode, matchTotp, newTotpSecret, totpCode, totpStep, totpUri } from './totp';

describe('TOTP (RFC 6238, SHA-1)', () => {
  // RFC 6238 appendix B: the ASCII secret "12345678901234567890", 8 digits.
  const rfcSecret = Buffer.from('12345678901234567890', 'ascii');

  it.each([
    [59, '94287082'],
    [1_111_111_109, '07081804'],
    [1_111_111_111, '14050471'],
    [1_234_567_890, '89005924'],
    [2_000_000_000, '69279037'],
    [20_000_000_000, '65353130'],
  ])('gives the RFC test vector at T=%i', (seconds, code) => {
    expect(totpCode(rfcSecret, totpStep(seconds * 1_000), 8)).toBe(code);
    // Six digits are the last six of the same number.
    expect(totpCode(rfcSecret, totpStep(seconds * 1_000))).toBe(code.slice(2));
  });

  it('encodes and decodes base32 as RFC 4648 (no padding)', () => {
    expect(base32Encode(Buffer.from('foobar'))).toBe('MZXW6YTBOI');
    expect(base32Decode('MZXW6YTBOI').toString()).toBe('foobar');
    expect(base32Encode(rfcSecret)).toBe('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ');
    const secret = newTotpSecret();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(base32Encode(base32Decode(secret))).toBe(secret);
    expect(() => base32Decode('A1')).toThrow('not base32');
  });

  it('accepts the step before, the current one and the next, and nothing further or already used', () => {
    const secret = base32Encode(rfcSecret);
    const now = 1_234_567_890_000;
    const step = totpStep(now);
    const codeAt = (s: number) => totpCode(rfcSecret, s);
    expect(matchTotp(secret, codeAt(step), now, null)).toBe(step);
    expect(matchTotp(secret, codeAt(step - 1), now, null)).toBe(step - 1);
    expect(matchTotp(secret, codeAt(step + 1), now, null)).toBe(step + 1);
    expect(matchTotp(secret, codeAt(step - 2), now, null)).toBeNull();
    expect(matchTotp(secret, codeAt(step + 2), now, null)).toBeNull();
    // Replay: a step at or before the last one used.
    expect(matchTotp(secret, codeAt(step), now, step)).toBeNull();
    expect(matchTotp(secret, codeAt(step - 1), now, step - 1)).toBeNull();
    expect(matchTotp(secret, codeAt(step + 1), now, step)).toBe(step + 1);
    // Not six digits.
    for (const code of ['', '12345', '1234567', '12345a', ' 123456', '１２３４５６'])
      expect(matchTotp(secret, code, now, null)).toBeNull();
  });

  it('writes the otpauth URI authenticator apps read', () => {
    expect(totpUri('rhythmc net', 'alice', 'ABCD')).toBe(
      'otpauth://totp/rhythmc%20net:alice?secret=ABCD&issuer=rhythmc+net&algorithm=SHA1&digits=6&period=30',
    );
  });
});
