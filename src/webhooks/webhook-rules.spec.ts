import { refusedAddress, parseAllowedNetworks } from './webhook-address';
import { retryDelayMs, deliveryBodyOf } from './webhook-delivery-loop';
import { signDelivery, verifyDelivery } from './webhook-signature';

describe('webhook address policy', () => {
  const none = { allowed: [] };

  it.each([
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.0.10', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['fe80::1', 'linkLocal'],
    ['fd00:ec2::254', 'uniqueLocal'],
    ['100.100.100.200', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    // Unicast to ipaddr.js, not public either.
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.254', 'benchmarking'],
    ['::7f00:1', 'ipv4Compatible'],
    ['::a9fe:a9fe', 'ipv4Compatible'],
    ['fec0::1', 'siteLocal'],
    ['100::1', 'discard'],
    ['64:ff9b:1::a9fe:a9fe', 'nat64LocalUse'],
    ['64:ff9b:1::a00:1', 'nat64LocalUse'],
    ['2001:2::1', 'ietfProtocolAssignment'],
    ['2001:20::1', 'ietfProtocolAssignment'],
    ['3fff::1', 'documentation'],
    ['5f00::1', 'srv6Sid'],
    // Named by ipaddr.js itself.
    ['2001::1', 'teredo'],
    ['64:ff9b::7f00:1', 'rfc6052'],
  ])('refuses %s (%s)', (address, kind) => {
    expect(refusedAddress(address, none)).toContain(`a ${kind} address`);
  });

  it('lets public addresses through, and what the operator allowed', () => {
    expect(refusedAddress('93.184.216.34', none)).toBeNull();
    expect(refusedAddress('198.20.0.1', none)).toBeNull();
    expect(refusedAddress('2606:2800:220:1:248:1893:25c8:1946', none)).toBeNull();
    // Just past the refused IPv6 blocks: 2001:200::/23 is APNIC's.
    expect(refusedAddress('2001:200::1', none)).toBeNull();
    expect(refusedAddress('64:ff9b:2::1', none)).toBeNull();
    expect(refusedAddress('3fff:1000::1', none)).toBeNull();
    const allowed = { allowed: parseAllowedNetworks(['127.0.0.0/8', '10.0.0.5']) };
    expect(refusedAddress('127.0.0.1', allowed)).toBeNull();
    expect(refusedAddress('::ffff:127.0.0.2', allowed)).toBeNull();
    expect(refusedAddress('10.0.0.5', allowed)).toBeNull();
    expect(refusedAddress('10.0.0.6', allowed)).toContain('private');
    expect(refusedAddress('::1', allowed)).toContain('loopback');
  });

  it('names a bad allowed entry', () => {
    expect(() => parseAllowedNetworks(['10.0.0.0/33'])).toThrow('"10.0.0.0/33" is not an IP address or CIDR range');
  });
});

describe('webhook signature', () => {
  it('is HMAC-SHA256 of "timestamp.body", refused when tampered with or replayed late', () => {
    // openssl: printf '1700000000.{"a":1}' | openssl dgst -sha256 -hmac whsec_test
    const signature = signDelivery('whsec_test', 1_700_000_000, '{"a":1}');
    expect(signature).toBe('sha256=38877139021993b830af32feea6e18a8da83eb2f6e49ee50bd9e4cf4ca4d3789');
    const headers = { signature, timestamp: '1700000000' };
    expect(verifyDelivery('whsec_test', headers, '{"a":1}', 1_700_000_100)).toBe(true);
    expect(verifyDelivery('whsec_test', headers, '{"a":2}', 1_700_000_100)).toBe(false);
    expect(verifyDelivery('whsec_test', headers, '{"a":1}', 1_700_000_301)).toBe(false);
    expect(verifyDelivery('whsec_test', { ...headers, timestamp: '1700000001' }, '{"a":1}', 1_700_000_000)).toBe(false);
    expect(
      verifyDelivery('whsec_test', { signature: undefined, timestamp: '1700000000' }, '{"a":1}', 1_700_000_000),
    ).toBe(false);
  });
});

describe('webhook retries and bodies', () => {
  it('doubles the delay from the base up to an hour, within ±20 %', () => {
    expect([1, 2, 3, 4].map((attempts) => retryDelayMs(attempts, 10_000, () => 0.5))).toEqual([
      10_000, 20_000, 40_000, 80_000,
    ]);
    expect(retryDelayMs(30, 10_000, () => 0.5)).toBe(3_600_000);
    expect(retryDelayMs(1, 10_000, () => 0)).toBe(8_000);
    expect(retryDelayMs(1, 10_000, () => 1)).toBe(12_000);
    // At least 24 h of retries take this many attempts with the default base (10 s): bounded work.
    let total = 0;
    let attempts = 0;
    while (total < 86_400_000) total += retryDelayMs(++attempts, 10_000, () => 0.5);
    expect(attempts).toBeLessThan(35);
  });

  it('builds the JSON body and the Discord message of one delivery', () => {
    const delivery = {
      id: '6f1c1b8e-0000-4000-8000-000000000001',
      eventId: '6f1c1b8e-0000-4000-8000-000000000002',
      eventType: 'chart.first_place',
      payload: {
        player: { uid: 7, username: 'steve_x' },
        chart: { levelId: 3, name: 'Alpha' },
        acc: 99.12,
        previous: { player: { uid: 8, username: 'alex' }, acc: 98 },
      },
      createdAt: new Date('2026-11-28T10:00:00Z'),
    };
    expect(JSON.parse(deliveryBodyOf({ ...delivery, format: 'json' }))).toEqual({
      id: delivery.id,
      eventId: delivery.eventId,
      type: 'chart.first_place',
      createdAt: '2026-11-28T10:00:00.000Z',
      data: delivery.payload,
    });
    expect(JSON.parse(deliveryBodyOf({ ...delivery, format: 'discord' }))).toEqual({
      username: 'rhythmc',
      allowed_mentions: { parse: [] },
      embeds: [
        {
          title: 'New first place',
          description: '**steve\\_x** is first on Alpha (#3) with 99.12 % (before: alex, 98.00 %)',
          color: 0xf1c40f,
          timestamp: '2026-11-28T10:00:00.000Z',
          footer: { text: `chart.first_place · ${delivery.id}` },
          fields: [],
        },
      ],
    });
  });
});
