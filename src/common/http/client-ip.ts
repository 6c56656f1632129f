import type { Request } from 'express';
import type { IncomingMessage } from 'node:http';
import proxyaddr from 'proxy-addr';
import type { TrustProxy } from '../../config/app-config';

/** Which hops of X-Forwarded-For are believed: proxy-addr's trust function (as Express's `trust proxy fn`). */
export type TrustFunction = (address: string, hop: number) => boolean;

/** TRUST_PROXY compiled the way Express compiles its `trust proxy` setting. */
export function compileTrustProxy(value: TrustProxy): TrustFunction {
  if (value === false) return () => false;
  if (typeof value === 'number') return (_address, hop) => hop < value;
  return proxyaddr.compile(value);
}

/** `::ffff:1.2.3.4` → `1.2.3.4`. */
function withoutMappedPrefix(address: string): string {
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

/**
 * The caller's address of an Express request: `request.ip`, which follows the app's `trust proxy`
 * setting (TRUST_PROXY), without the IPv4-mapped IPv6 prefix.
 */
export function clientIp(request: Request): string | null {
  const address = request.ip ?? request.socket.remoteAddress;
  return address ? withoutMappedPrefix(address) : null;
}

/** The caller's address of a plain Node request (the WebSocket upgrade), under the same trust rule. */
export function clientAddressOf(request: IncomingMessage, trust: TrustFunction): string | null {
  if (!request.socket.remoteAddress) return null;
  return withoutMappedPrefix(proxyaddr(request, trust));
}
