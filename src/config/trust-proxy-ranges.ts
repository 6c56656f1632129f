import ipaddr from 'ipaddr.js';

/** proxy-addr's named ranges (its IP_RANGES table), which TRUST_PROXY may name. */
export const NAMED_PROXY_RANGES: Readonly<Record<string, readonly string[]>> = {
  loopback: ['127.0.0.1/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

/** One range as an interval of the 128-bit IPv6 space, IPv4 inside `::ffff:0:0/96`. */
interface Interval {
  first: bigint;
  last: bigint;
}

const SPACE_LAST = (1n << 128n) - 1n;
/** `::ffff:0:0/96`, where IPv4 addresses sit in the IPv6 space. */
const MAPPED: Interval = { first: 0xffffn << 32n, last: (0xffffn << 32n) + (1n << 32n) - 1n };

/**
 * An entry as proxy-addr reads it (`address`, `address/prefix`, IPv4 `address/netmask`), or null
 * when proxy-addr would refuse it. The parser is proxy-addr's own (ipaddr.js), so forms such as
 * `0/1` (0.0.0.0/1) or `2130706433` (127.0.0.1) mean here what they mean there. A prefix of 0 is kept (proxy-addr refuses
 * it, but it is first of all a range of every address).
 */
function intervalOf(entry: string): Interval | null {
  const slash = entry.lastIndexOf('/');
  const text = slash === -1 ? entry : entry.slice(0, slash);
  if (!ipaddr.isValid(text)) return null;
  const address = ipaddr.parse(text);
  const ipv4 = address.kind() === 'ipv4';
  const bits = ipv4 ? 32 : 128;
  let prefix: number | null = bits;
  if (slash !== -1) {
    const range = entry.slice(slash + 1);
    if (/^\d+$/.test(range)) prefix = Number(range);
    else if (ipv4 && ipaddr.IPv4.isValid(range)) prefix = ipaddr.IPv4.parse(range).prefixLengthFromSubnetMask();
    else prefix = null;
  }
  if (prefix === null || prefix < 0 || prefix > bits) return null;
  let value = address.toByteArray().reduce((sum, byte) => (sum << 8n) | BigInt(byte), 0n);
  if (ipv4) value |= MAPPED.first;
  const size = 1n << BigInt(bits - prefix);
  const first = value - (value % size);
  return { first, last: first + size - 1n };
}

/** Whether the intervals together contain every address of `wanted`. */
function covers(intervals: Interval[], wanted: Interval): boolean {
  let next = wanted.first;
  for (const interval of [...intervals].sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0))) {
    if (interval.first > next) break;
    if (interval.last >= next) next = interval.last + 1n;
    if (next > wanted.last) return true;
  }
  return next > wanted.last;
}

/**
 * Which whole address family a TRUST_PROXY list trusts, if any (decisions.md "Rate limits"): its
 * ranges read in one 128-bit space, IPv4 ranges as their IPv4-mapped form, together containing
 * every IPv4 address (all of `::ffff:0:0/96`) or every IPv6 address (all outside it). Read that
 * way an IPv6 range that spans `::ffff:0:0/96` trusts the IPv4 addresses in it too, as some
 * proxy-addr versions match them; so the rule errs on the side of refusing. Entries proxy-addr
 * would refuse are left to it.
 */
export function familyTrustedWhole(entries: readonly string[]): 'IPv4' | 'IPv6' | null {
  const intervals = entries
    .flatMap((entry) => (Object.hasOwn(NAMED_PROXY_RANGES, entry) ? NAMED_PROXY_RANGES[entry] : [entry]))
    .map(intervalOf)
    .filter((interval): interval is Interval => interval !== null);
  if (covers(intervals, MAPPED)) return 'IPv4';
  if (
    covers(intervals, { first: 0n, last: MAPPED.first - 1n }) &&
    covers(intervals, { first: MAPPED.last + 1n, last: SPACE_LAST })
  )
    return 'IPv6';
  return null;
}
