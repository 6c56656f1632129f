import { PasswordHasher, SCRYPT_PARAMETERS } from './password-hasher';

describe('PasswordHasher (scrypt)', () => {
  const hasher = new PasswordHasher();

  it('stores its parameters, salt and key, and verifies the password it was made from only', async () => {
    const stored = await hasher.hash('correct horse battery staple');
    expect(stored).toMatch(/^scrypt\$N=32768,r=8,p=3\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(SCRYPT_PARAMETERS).toEqual({ N: 32768, r: 8, p: 3 });
    await expect(hasher.verify('correct horse battery staple', stored)).resolves.toBe(true);
    await expect(hasher.verify('correct horse battery stapler', stored)).resolves.toBe(false);
    // A new salt each time.
    expect(await hasher.hash('correct horse battery staple')).not.toBe(stored);
  });

  it('compares NFKC-normalised text (the same password typed on another keyboard)', async () => {
    const stored = await hasher.hash('ｃａｆé passphrase!!');
    await expect(hasher.verify('cafe\u0301 passphrase!!', stored)).resolves.toBe(true);
  });

  it('reads the parameters stored with a hash, so older hashes keep working after the cost changes', async () => {
    const stored = await hasher.hash('an older passphrase');
    const [, , salt, key] = stored.split('$');
    const { scryptSync } = await import('node:crypto');
    const cheaper = `scrypt$N=1024,r=8,p=1$${salt}$${scryptSync('an older passphrase', Buffer.from(salt, 'base64url'), 32, { N: 1024, r: 8, p: 1 }).toString('base64url')}`;
    expect(cheaper).not.toContain(key);
    await expect(hasher.verify('an older passphrase', cheaper)).resolves.toBe(true);
  });

  it('never verifies against no account (a scrypt all the same) or a malformed hash', async () => {
    await expect(hasher.verify('anything at all here', null)).resolves.toBe(false);
    await expect(hasher.verify('anything at all here', 'sha256$abc')).resolves.toBe(false);
  });
});
