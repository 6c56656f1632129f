import WebSocket from 'ws';
import { createServer } from '../factories/server.factory';
import { runSourceScript } from '../support/source-script';
import { startTestApp, TestApp } from '../support/test-app';
import { eventually } from '../support/wait';

const LOGIN_BODY = { pluginVersion: 10, pluginSHA: 'sha-test' };

/**
 * X-Forwarded-For behind TRUST_PROXY (decisions.md "Rate limits"): the caller is the first hop
 * not trusted, unless an entry on the way there is not a well-formed address of at most 45
 * characters; then it is the last address known to be real (the hop that forwarded it). The
 * test app listens on 127.0.0.1, so with TRUST_PROXY=loopback the test is the trusted proxy.
 */
describe('Forwarded addresses (X-Forwarded-For behind TRUST_PROXY=loopback)', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ env: { TRUST_PROXY: 'loopback', THROTTLE_LOGIN_LIMIT: '3' } });
  });
  afterAll(async () => {
    await app.close();
  });

  const PROXY = '127.0.0.1';
  const cases: Array<[string, string, string]> = [
    ['over-long junk', 'a'.repeat(8_000), PROXY],
    ['over-long colons and digits', '1:'.repeat(3_000), PROXY],
    ['an address with an over-long zone', `fe80::1%${'z'.repeat(60)}`, PROXY],
    ['a word', 'not-an-address', PROXY],
    ['nginx\'s "unknown"', 'unknown', PROXY],
    ['an address with a port', '203.0.113.7:5678', PROXY],
    ['a bracketed IPv6 address', '[2001:db8::1]', PROXY],
    ['an octet over 255', '203.0.113.256', PROXY],
    ['markup', '<script>alert(1)</script>', PROXY],
    ['an empty entry', ' , ', PROXY],
    ['one hop', '203.0.113.7', '203.0.113.7'],
    ['one IPv6 hop', '2001:db8::7', '2001:db8::7'],
    ['an IPv4-mapped hop', '::ffff:203.0.113.9', '203.0.113.9'],
    [
      'the longest well-formed one',
      'ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255',
      'ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255',
    ],
    ['several hops: the first untrusted one from the right', '198.51.100.1, 203.0.113.7', '203.0.113.7'],
    ['several hops through a trusted one', '203.0.113.7, 127.0.0.5', '203.0.113.7'],
    ['junk beyond a trusted hop: that hop', 'junk, 127.0.0.5', '127.0.0.5'],
    ['junk beyond the client: the client', 'junk, 203.0.113.7', '203.0.113.7'],
    ['junk closest to the proxy', '203.0.113.7, junk', PROXY],
    ['a thousand hops', Array.from({ length: 1_000 }, (_, i) => `10.0.${i >> 8}.${i & 255}`).join(', '), '10.0.3.231'],
  ];

  it.each(cases)(
    'server login with %s: 200, and the address stored and answered is bounded',
    async (_name, xff, expected) => {
      const server = await createServer(app);
      const login = await app.http.post('/server/login', LOGIN_BODY, {
        token: server.bootstrapToken,
        headers: { 'X-Forwarded-For': xff },
      });
      expect({ status: login.status, serverIP: login.body.serverIP }).toEqual({ status: 200, serverIP: expected });
      const stored = await app.sql('SELECT client_ip FROM server_session WHERE server_id = $1', [server.serverID]);
      expect(stored).toEqual([{ client_ip: expected }]);
    },
  );

  it('an admin write with over-long, malformed or multi-hop X-Forwarded-For gets exactly one audit row each', async () => {
    const sent: Array<[string, string]> = [
      ['x'.repeat(8_000), PROXY],
      ['203.0.113.7:80', PROXY],
      ['198.51.100.1, 203.0.113.7', '203.0.113.7'],
    ];
    for (const [xff, expected] of sent) {
      const created = await app.admin.post(
        '/admin/servers',
        { name: `fwd-${expected}-${xff.length}`, country: 'DE' },
        { headers: { 'X-Forwarded-For': xff } },
      );
      expect(created.status).toBe(201);
      const serverId = created.body.serverID as number;
      const rows = await app.sql('SELECT action, source_address FROM admin_audit WHERE target = $1', [
        `server:${serverId}`,
      ]);
      expect(rows).toEqual([{ action: 'server.register', source_address: expected }]);
      const listed = await app.admin.get('/admin/audit', { query: { target: `server:${serverId}` } });
      expect(listed.body.items).toEqual([expect.objectContaining({ sourceAddress: expected })]);
    }
  });

  it('failed server logins with ever-new junk addresses all count against the proxy that sent them', async () => {
    const statuses = [];
    for (let i = 0; i < 4; i++) {
      const response = await app.http.post('/server/login', LOGIN_BODY, {
        token: `wrong-${i}`,
        headers: { 'X-Forwarded-For': `junk-${i}-${'y'.repeat(100)}` },
      });
      statuses.push(response.status);
    }
    expect(statuses).toEqual([401, 401, 401, 429]);
  });

  it('a WebSocket behind junk X-Forwarded-For is recorded with the proxy address', async () => {
    const server = await createServer(app);
    const login = await app.http.post('/server/login', LOGIN_BODY, { token: server.bootstrapToken });
    expect(login.status).toBe(200);
    const socket = new WebSocket(`${app.baseUrl.replace('http', 'ws')}/ws`, {
      headers: { Authorization: `Bearer ${login.body.accessToken as string}`, 'X-Forwarded-For': 'q'.repeat(8_000) },
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    try {
      await eventually(async () => {
        const rows = await app.sql('SELECT remote_address FROM ws_connection WHERE server_id = $1', [server.serverID]);
        return rows.length === 1 && rows[0].remote_address === PROXY;
      }, 'the connection record names the proxy');
    } finally {
      socket.close();
    }
  });
});

describe('Forwarded addresses behind a hop count (TRUST_PROXY=2)', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ env: { TRUST_PROXY: '2' } });
  });
  afterAll(async () => {
    await app.close();
  });

  it.each([
    ['two hops: the second from the right', '198.51.100.1, 203.0.113.7, 192.0.2.1', '203.0.113.7'],
    ['junk as the first hop: the socket', '203.0.113.7, junk', '127.0.0.1'],
    ['junk as the second hop: the first', `${'j'.repeat(5_000)}, 192.0.2.1`, '192.0.2.1'],
    ['fewer hops than trusted: the leftmost', '192.0.2.1', '192.0.2.1'],
  ])('server login with %s', async (_name, xff, expected) => {
    const server = await createServer(app);
    const login = await app.http.post('/server/login', LOGIN_BODY, {
      token: server.bootstrapToken,
      headers: { 'X-Forwarded-For': xff },
    });
    expect({ status: login.status, serverIP: login.body.serverIP }).toEqual({ status: 200, serverIP: expected });
    expect(await app.sql('SELECT client_ip FROM server_session WHERE server_id = $1', [server.serverID])).toEqual([
      { client_ip: expected },
    ]);
  });
});

describe('TRUST_PROXY that trusts every address', () => {
  it.each([
    ['0.0.0.0/1,128.0.0.0/1', 'IPv4'],
    ['loopback, ::ffff:0:0/96', 'IPv4'],
  ])(
    'stops the start with TRUST_PROXY=%s, naming the variable',
    async (value, family) => {
      const result = await runSourceScript('src/main.ts', [], { TRUST_PROXY: value, PORT: '0', HOST: '127.0.0.1' });
      expect(result).toEqual({
        code: 1,
        stdout: '',
        stderr: `Invalid configuration: TRUST_PROXY must not trust every ${family} address (its ranges together cover them all, so every client could choose its own address): give a hop count or the proxies' addresses\n`,
      });
    },
    90_000,
  );
});
