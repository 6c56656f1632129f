import type { Request } from 'express';
import type { IncomingMessage } from 'node:http';
import { addressBucket, clientAddressOf, clientIp, compileTrustProxy, MAX_FORWARDED_HOPS } from './client-ip';

const request = (forwarded: string | undefined, socketAddress = '127.0.0.1'): IncomingMessage =>
  ({
    headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded },
    socket: { remoteAddress: socketAddress },
  }) as unknown as IncomingMessage;

describe('clientAddressOf', () => {
  const loopback = compileTrustProxy(['loopback']);

  it('walks back through trusted hops to the first one not trusted', () => {
    const hops = Array.from({ length: MAX_FORWARDED_HOPS - 1 }, () => '127.0.0.1').join(', ');
    expect(clientAddressOf(request(`198.51.100.1, 203.0.113.7, ${hops}`), loopback)).toBe('203.0.113.7');
    expect(clientAddressOf(request('203.0.113.7'), compileTrustProxy(false))).toBe('127.0.0.1');
  });

  it(`reads at most the last ${MAX_FORWARDED_HOPS} entries: past them, the last trusted hop read is the caller`, () => {
    const hops = Array.from({ length: 1_400 }, () => '127.0.0.1').join(', ');
    // The address at the far end is the client's own word, 1,400 trusted hops away: not believed.
    expect(clientAddressOf(request(`203.0.113.7, ${hops}`), loopback)).toBe('127.0.0.1');
    let asked = 0;
    const counting = (address: string, hop: number) => {
      asked++;
      return loopback(address, hop);
    };
    clientAddressOf(request(hops), counting);
    expect(asked).toBe(MAX_FORWARDED_HOPS);
  });

  it('is the socket address, without the IPv4-mapped prefix, when there is no X-Forwarded-For', () => {
    for (const trust of [loopback, compileTrustProxy(false), compileTrustProxy(2)]) {
      expect(clientAddressOf(request(undefined, '::ffff:198.51.100.9'), trust)).toBe('198.51.100.9');
      expect(clientAddressOf(request(undefined, '2001:db8::1'), trust)).toBe('2001:db8::1');
    }
    expect(clientAddressOf(request(undefined, ''), loopback)).toBeNull();
  });

  it('stops before an entry that is not an address, as before', () => {
    expect(clientAddressOf(request('203.0.113.7, junk, 127.0.0.1'), loopback)).toBe('127.0.0.1');
  });
});

describe('clientIp', () => {
  it('works the address out once per request', () => {
    let asked = 0;
    const trust = (address: string, hop: number) => {
      asked++;
      return compileTrustProxy(['loopback'])(address, hop);
    };
    const req = Object.assign(request('203.0.113.7, 127.0.0.1'), {
      app: { get: (name: string) => (name === 'trust proxy fn' ? trust : undefined) },
    }) as unknown as Request;
    expect(clientIp(req)).toBe('203.0.113.7');
    const once = asked;
    expect(clientIp(req)).toBe('203.0.113.7');
    expect(asked).toBe(once);
  });
});

describe('addressBucket', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['2001:0DB8:0001:0002:0:0:0:9', '2001:db8:1:2::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['64:ff9b::203.0.113.7', '64:ff9b:0:0::/64'],
    ['::', '0:0:0:0::/64'],
    ['1::', '1:0:0:0::/64'],
    ['::FFFF:203.0.113.7', '203.0.113.7'],
    ['::ffff:cb00:7107', '203.0.113.7'],
  ])('%s counts under %s', (address, bucket) => {
    expect(addressBucket(address)).toBe(bucket);
  });

  it('puts the callers without an address in one bucket', () => {
    expect(addressBucket(null)).toBe('unknown');
  });
});
