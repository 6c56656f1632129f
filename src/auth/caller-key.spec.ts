import { callerKey } from './caller-key';

describe('callerKey', () => {
  const noAddress = () => {
    throw new Error('the address is read only for the anonymous tier');
  };

  it('names a game server by its id, whatever its session', () => {
    const session = { sessionId: 'a', serverId: 7, tokenExpiresAt: new Date(0), tokenHash: 'h' };
    expect(callerKey({ kind: 'server', session }, noAddress)).toBe('server:7');
    expect(callerKey({ kind: 'server', session: { ...session, sessionId: 'b' } }, noAddress)).toBe('server:7');
    expect(callerKey({ kind: 'bootstrap', serverId: 7, credentialHash: 'x' }, noAddress)).toBe('server:7');
  });

  it('names staff by account, ADMIN_TOKEN apart, and a key by its id', () => {
    const caller = { accountId: 3, name: 'ann', role: 'read-only' as const, credentialId: 'token:1', sessionId: null };
    expect(callerKey({ kind: 'admin', caller }, noAddress)).toBe('staff:3');
    expect(callerKey({ kind: 'admin', caller: { ...caller, accountId: null } }, noAddress)).toBe('staff:admin-token');
    expect(callerKey({ kind: 'api-key', keyId: 12 }, noAddress)).toBe('key:12');
  });

  it('names the anonymous tier (and anything else) by its address', () => {
    expect(callerKey({ kind: 'api-key', keyId: null }, () => '203.0.113.9')).toBe('address:203.0.113.9');
    expect(callerKey({ kind: 'public' }, () => null)).toBe('address:unknown');
    // An IPv6 address by its /64 (addressBucket): every host of one network is one caller.
    expect(callerKey(undefined, () => '::1')).toBe('address:0:0:0:0::/64');
    expect(callerKey({ kind: 'public' }, () => '2001:db8:1:2::7')).toBe('address:2001:db8:1:2::/64');
  });
});
