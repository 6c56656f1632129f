import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../config/app-config';
import { httpsOptionsOf } from './tls-options';

describe('httpsOptionsOf', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'rhythmc-tls-spec-'));
    writeFileSync(join(dir, 'cert.pem'), 'CERT');
    writeFileSync(join(dir, 'key.pem'), 'KEY');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is undefined without TLS files: plain HTTP behind a proxy', () => {
    expect(httpsOptionsOf(loadConfig({}))).toBeUndefined();
  });

  it('reads both files and allows TLS 1.3 only', () => {
    const options = httpsOptionsOf(
      loadConfig({ TLS_CERT_FILE: join(dir, 'cert.pem'), TLS_KEY_FILE: join(dir, 'key.pem') }),
    );
    expect(options).toEqual({
      cert: Buffer.from('CERT'),
      key: Buffer.from('KEY'),
      minVersion: 'TLSv1.3',
      maxVersion: 'TLSv1.3',
    });
  });

  it('names the variable of a file it cannot read', () => {
    expect(() =>
      httpsOptionsOf(loadConfig({ TLS_CERT_FILE: join(dir, 'cert.pem'), TLS_KEY_FILE: join(dir, 'missing.pem') })),
    ).toThrow(/^Invalid configuration: TLS_KEY_FILE cannot be read: ENOENT/);
  });
});
