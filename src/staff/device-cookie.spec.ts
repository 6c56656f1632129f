import { issueDeviceCookie, trustedDevice } from './device-cookie';
import { newDeviceKey } from './staff-secrets';

describe('device cookies', () => {
  const key = newDeviceKey();

  it('are trusted for their account under its current key only', () => {
    const cookie = issueDeviceCookie(7, key);
    const [, nonce] = cookie.split('.');
    expect(trustedDevice(cookie, 7, key)).toBe(nonce);
    expect(trustedDevice(cookie, 8, key)).toBeNull();
    // A new password gives the account a new key: every device is unknown again.
    expect(trustedDevice(cookie, 7, newDeviceKey())).toBeNull();
  });

  it('refuse a changed, forged or malformed value', () => {
    const cookie = issueDeviceCookie(7, key);
    const [id, nonce, mac] = cookie.split('.');
    expect(trustedDevice(`${id}.${nonce}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`, 7, key)).toBeNull();
    // Each other spelling of the last character, including those that decode to the same 32 bytes.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    for (const last of alphabet.replace(mac.slice(-1), ''))
      expect(trustedDevice(`${id}.${nonce}.${mac.slice(0, -1)}${last}`, 7, key)).toBeNull();
    expect(trustedDevice(`${id}.${'A'.repeat(22)}.${mac}`, 7, key)).toBeNull();
    for (const junk of [null, '', 'x', `${cookie}.x`, `07.${nonce}.${mac}`, ' '.repeat(80)])
      expect(trustedDevice(junk, 7, key)).toBeNull();
  });
});
