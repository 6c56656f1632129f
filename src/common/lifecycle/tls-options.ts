import type { NestApplicationOptions } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import type { SecureVersion } from 'node:tls';
import { AppConfig, ConfigError } from '../../config/app-config';

/** Nest's HttpsOptions type lacks the version bounds; the object goes to https.createServer whole. */
export type TlsServerOptions = NonNullable<NestApplicationOptions['httpsOptions']> & {
  minVersion: SecureVersion;
  maxVersion: SecureVersion;
};

/**
 * HTTPS options from TLS_CERT_FILE / TLS_KEY_FILE, or undefined for plain HTTP (a TLS-terminating
 * proxy in front). TLS 1.3 only (decisions.md §1): a TLS 1.2 client fails the handshake with a
 * protocol_version alert. WebSocket upgrades ride on the same server, so /ws is WSS.
 */
export function httpsOptionsOf(config: AppConfig): TlsServerOptions | undefined {
  if (config.tlsCertFile === null || config.tlsKeyFile === null) return undefined;
  return {
    cert: readPem('TLS_CERT_FILE', config.tlsCertFile),
    key: readPem('TLS_KEY_FILE', config.tlsKeyFile),
    minVersion: 'TLSv1.3',
    maxVersion: 'TLSv1.3',
  };
}

function readPem(variable: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new ConfigError(
      variable,
      `cannot be read: ${(error as NodeJS.ErrnoException).code ?? String(error)} (${file})`,
    );
  }
}
