import { randomBytes } from 'node:crypto';
import { checkPackLink, checkResourceLink, signPackLink, signResourceLink } from './link-signature';

describe('resource link signatures', () => {
  const key = randomBytes(32);
  const path = 'data/songs/1/chart.json';
  const now = 1_800_000_000;

  it('signs with 256 bits in base64url and accepts its own signature until the expiry', () => {
    const sig = signResourceLink(key, path, now + 60);
    expect(sig).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(checkResourceLink(key, path, String(now + 60), sig, now)).toBe('ok');
    expect(checkResourceLink(key, path, String(now + 60), sig, now + 59)).toBe('ok');
    expect(checkResourceLink(key, path, String(now + 60), sig, now + 60)).toBe('expired');
  });

  it('binds the signature to the path, the expiry and the key', () => {
    const sig = signResourceLink(key, path, now + 60);
    expect(checkResourceLink(key, 'data/songs/1/chart.jsonx', String(now + 60), sig, now)).toBe('bad-signature');
    expect(checkResourceLink(key, path, String(now + 61), sig, now)).toBe('bad-signature');
    expect(checkResourceLink(randomBytes(32), path, String(now + 60), sig, now)).toBe('bad-signature');
  });

  it('reports an altered expiry as a bad signature even when it lies in the past', () => {
    const sig = signResourceLink(key, path, now + 60);
    expect(checkResourceLink(key, path, String(now - 60), sig, now)).toBe('bad-signature');
  });

  it.each([
    [undefined, 'x'],
    ['123', undefined],
    [['123'], 'x'],
    ['12a', 'A'.repeat(43)],
    ['-1', 'A'.repeat(43)],
    ['1'.repeat(13), 'A'.repeat(43)],
    ['123', 'A'.repeat(42)],
    ['123', `${'A'.repeat(42)}=`],
  ])('calls expires=%j sig=%j malformed', (expires, sig) => {
    expect(checkResourceLink(key, path, expires, sig, now)).toBe('malformed');
  });
});

describe('pack link signatures', () => {
  const key = randomBytes(32);
  const path = 'packs/full.zip';
  const sha1 = 'a'.repeat(40);

  it('accepts the link of the pack it was made for, with no time in it', () => {
    expect(checkPackLink(key, path, sha1, signPackLink(key, path, sha1))).toBe('ok');
  });

  it('refuses another content, another path, another key', () => {
    const sig = signPackLink(key, path, sha1);
    expect(checkPackLink(key, path, 'b'.repeat(40), sig)).toBe('bad-signature');
    expect(checkPackLink(key, 'packs/one.zip', sha1, sig)).toBe('bad-signature');
    expect(checkPackLink(randomBytes(32), path, sha1, sig)).toBe('bad-signature');
  });

  it('never equals a download link signature of the same path', () => {
    expect(signPackLink(key, path, sha1)).not.toBe(signResourceLink(key, path, 1_900_000_000));
  });

  it.each([
    [undefined, 'A'.repeat(43)],
    ['A'.repeat(40), 'A'.repeat(43)],
    ['a'.repeat(39), 'A'.repeat(43)],
    [sha1, 'A'.repeat(42)],
    [[sha1], 'A'.repeat(43)],
  ])('calls v=%j sig=%j malformed', (version, sig) => {
    expect(checkPackLink(key, path, version, sig)).toBe('malformed');
  });
});
