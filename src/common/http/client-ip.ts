import type { Request } from 'express';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
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

/** The longest textual IP address, an IPv6 one ending in dotted IPv4 (`ffff:…:255.255.255.255`). */
export const MAX_ADDRESS_LENGTH = 45;

/** An IPv4 or IPv6 address as text, at most MAX_ADDRESS_LENGTH characters (no port, brackets or long zone). */
function isWellFormedAddress(address: string): boolean {
  return address.length <= MAX_ADDRESS_LENGTH && isIP(address) !== 0;
}

/** `::ffff:1.2.3.4` → `1.2.3.4`. */
function withoutMappedPrefix(address: string): string {
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

/**
 * The caller's address under a trust rule (TRUST_PROXY): proxy-addr's walk from the socket back
 * through X-Forwarded-For to the first hop not trusted, except that the walk also stops before an
 * entry that is not a well-formed address: the caller is then the last address known to be real,
 * the hop that forwarded it. So what reaches a column, a log line or a rate-limit key is always an
 * address of at most 45 characters (decisions.md "Rate limits").
 */
export function clientAddressOf(request: IncomingMessage, trust: TrustFunction): string | null {
  if (!request.socket.remoteAddress) return null;
  // No header to walk (every direct caller): the socket's address, as proxy-addr's walk would give.
  if (request.headers['x-forwarded-for'] === undefined) return withoutMappedPrefix(request.socket.remoteAddress);
  const chain = proxyaddr.all(withLastHops(request), trust);
  let address = chain[0];
  for (let hop = 1; hop < chain.length && isWellFormedAddress(chain[hop]); hop++) address = chain[hop];
  return withoutMappedPrefix(address);
}

/**
 * The X-Forwarded-For entries walked at most, the last ones (the nearest hops). A real chain of
 * proxies is a handful; a header of 16 KiB is 1,450 entries, each parsed by the trust function,
 * 4–6 ms of the main thread per walk. Past this many trusted hops the walk ends at the last one
 * read: the caller is then an address a trusted proxy wrote, never one the client chose.
 */
export const MAX_FORWARDED_HOPS = 32;

/** `request` itself, or a view of it whose X-Forwarded-For holds only its last MAX_FORWARDED_HOPS entries. */
function withLastHops(request: IncomingMessage): IncomingMessage {
  const header = request.headers['x-forwarded-for'];
  if (header === undefined || header.length <= MAX_FORWARDED_HOPS * 2) return request;
  let at = header.length;
  for (let hop = 0; hop < MAX_FORWARDED_HOPS; hop++) {
    at = at > 0 ? header.lastIndexOf(',', at - 1) : -1;
    if (at < 0) return request;
  }
  return {
    headers: { 'x-forwarded-for': header.slice(at + 1) },
    socket: request.socket,
    connection: request.socket,
  } as unknown as IncomingMessage;
}

const CLIENT_IP = Symbol('rhythmc.clientIp');
type WithClientIp = Request & { [CLIENT_IP]?: string | null };

/**
 * The caller's address of an Express request, under the app's `trust proxy` setting
 * (TRUST_PROXY); worked out once per request (the guard, the route, the audit and the log line
 * each ask).
 */
export function clientIp(request: Request): string | null {
  const known = (request as WithClientIp)[CLIENT_IP];
  if (known !== undefined) return known;
  const trust = request.app?.get('trust proxy fn') as TrustFunction | undefined;
  const address = clientAddressOf(request, trust ?? (() => false));
  (request as WithClientIp)[CLIENT_IP] = address;
  return address;
}

/**
 * What an address's budgets count under (rate limits, failure lockouts, fair shares): an IPv4
 * address itself; an IPv6 address its /64 (`2001:db8:1:2::/64`), the network one subscriber gets,
 * where a host may take any of 2^64 addresses, so a budget per full IPv6 address would be none;
 * `unknown` without an address. Logs and the audit keep the full address.
 */
export function addressBucket(address: string | null): string {
  if (address === null) return 'unknown';
  const bare = address.split('%', 1)[0];
  if (isIP(bare) !== 6) return address;
  // The URL parser writes any IPv6 form (upper case, leading zeros, a dotted IPv4 tail, which
  // ipaddr.js 1.9 refuses) as lower-case hex groups with at most one `::`.
  const groups = new URL(`http://[${bare}]/`).hostname.slice(1, -1).split('::');
  const head = groups[0] === '' ? [] : groups[0].split(':');
  const tail = groups.length === 1 || groups[1] === '' ? [] : groups[1].split(':');
  const all = [...head, ...Array<string>(8 - head.length - tail.length).fill('0'), ...tail];
  if (all.slice(0, 5).every((group) => group === '0') && all[5] === 'ffff') {
    // An IPv4-mapped address in any spelling: the IPv4 address's own budget.
    const [high, low] = [parseInt(all[6], 16), parseInt(all[7], 16)];
    return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  }
  return `${all.slice(0, 4).join(':')}::/64`;
}
