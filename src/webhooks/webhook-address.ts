import ipaddr from 'ipaddr.js';

/**
 * Which addresses a webhook delivery may connect to (docs/decisions.md "Webhooks"): only public
 * unicast ones. Private, loopback, link-local (the cloud metadata address 169.254.169.254 among
 * them), unique-local, carrier-grade NAT, multicast, reserved and unspecified addresses are refused
 * unless they fall in a range the operator allowed (WEBHOOK_ALLOWED_NETWORKS). The check runs on
 * the address the connection is about to use (webhook-sender.ts), so a name that resolves to a
 * public address when the webhook is saved and to a private one later (DNS rebinding) is refused.
 */
export interface AddressPolicy {
  /** Ranges the operator allowed although they are not public (CIDR, parsed at boot). */
  readonly allowed: ReadonlyArray<[ipaddr.IPv4 | ipaddr.IPv6, number]>;
}

/** Parses WEBHOOK_ALLOWED_NETWORKS entries (`127.0.0.0/8`, `::1/128`, `10.1.2.3`); throws naming the bad one. */
export function parseAllowedNetworks(entries: readonly string[]): AddressPolicy['allowed'] {
  return entries.map((entry) => {
    try {
      return entry.includes('/')
        ? ipaddr.parseCIDR(entry)
        : ipaddr.parseCIDR(`${entry}/${ipaddr.parse(entry).kind() === 'ipv4' ? 32 : 128}`);
    } catch {
      throw new Error(`"${entry}" is not an IP address or CIDR range`);
    }
  });
}

/**
 * Ranges ipaddr.js counts as unicast that are not public either: the benchmarking network
 * (198.18.0.0/15, RFC 2544), IPv4-compatible IPv6 (`::a.b.c.d`, deprecated: `::7f00:1` is
 * 127.0.0.1 on a host that tunnels them), site-local (fec0::/10, deprecated), the discard
 * prefix (100::/64), the local-use NAT64 prefix (64:ff9b:1::/48, RFC 8215: it maps to any IPv4
 * address, private ones included, where the network routes it to a translator), the IETF protocol
 * assignments (2001::/23: the IPv6 benchmarking network 2001:2::/48, ORCHID; Teredo, 2001::/32,
 * ipaddr.js names itself), the second documentation prefix (3fff::/20, RFC 9637) and SRv6
 * segment identifiers (5f00::/16, RFC 9602). ipaddr.js 1.9 knows none of these last four.
 */
const NOT_PUBLIC: ReadonlyArray<[string, ipaddr.IPv4 | ipaddr.IPv6, number]> = [
  ['benchmarking', '198.18.0.0/15'],
  ['ipv4Compatible', '::/96'],
  ['siteLocal', 'fec0::/10'],
  ['discard', '100::/64'],
  ['nat64LocalUse', '64:ff9b:1::/48'],
  ['ietfProtocolAssignment', '2001::/23'],
  ['documentation', '3fff::/20'],
  ['srv6Sid', '5f00::/16'],
].map(([kind, cidr]) => [kind, ...ipaddr.parseCIDR(cidr)]);

/** Whether `address` is in the range `from`/`bits` (ranges of the other family never hold it). */
function inRange(address: ipaddr.IPv4 | ipaddr.IPv6, from: ipaddr.IPv4 | ipaddr.IPv6, bits: number): boolean {
  return from.kind() === address.kind() && (address as ipaddr.IPv4).match(from as ipaddr.IPv4, bits);
}

/** The reason an address is refused, or null when a delivery may connect to it. */
export function refusedAddress(address: string, policy: AddressPolicy): string | null {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress())
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  if (policy.allowed.some(([from, bits]) => inRange(parsed, from, bits))) return null;
  const range = parsed.range();
  const kind =
    range !== 'unicast' ? range : (NOT_PUBLIC.find(([, from, bits]) => inRange(parsed, from, bits))?.[0] ?? range);
  return kind === 'unicast'
    ? null
    : `${parsed.toString()} is a ${kind} address (WEBHOOK_ALLOWED_NETWORKS does not allow it)`;
}
