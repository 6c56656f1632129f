import type { Request } from 'express';

/** The caller's address without the IPv4-mapped IPv6 prefix (`::ffff:1.2.3.4` → `1.2.3.4`). */
export function clientIp(request: Request): string | null {
  const address = request.ip ?? request.socket.remoteAddress;
  if (!address) return null;
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}
