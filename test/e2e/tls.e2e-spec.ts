import { request as httpsRequest } from 'node:https';
import { connect as tlsConnect, SecureVersion, TLSSocket } from 'node:tls';
import WebSocket from 'ws';
import { ADMIN_TOKEN, startTestApp, TestApp } from '../support/test-app';
import { createTestCertificate, TestCertificate } from '../support/tls-certificate';

interface TlsResponse {
  status: number;
  body: any;
  protocol: string | null;
}

describe('TLS (TLS_CERT_FILE / TLS_KEY_FILE): HTTPS and WSS, TLS 1.3 only', () => {
  let certificate: TestCertificate;
  let app: TestApp;
  let port: number;

  /** One HTTPS request trusting the test certificate; answers the negotiated protocol too. */
  const request = (
    method: string,
    path: string,
    options: { token?: string; body?: unknown; maxVersion?: SecureVersion } = {},
  ) =>
    new Promise<TlsResponse>((resolve, reject) => {
      const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
      const req = httpsRequest(
        {
          host: '127.0.0.1',
          port,
          method,
          path,
          ca: certificate.cert,
          maxVersion: options.maxVersion ?? 'TLSv1.3',
          agent: false,
          headers: {
            ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}),
            ...(payload === undefined
              ? {}
              : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) }),
          },
        },
        (res) => {
          const protocol = (res.socket as TLSSocket).getProtocol();
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null, protocol }));
        },
      );
      req.on('error', reject);
      req.end(payload);
    });

  beforeAll(async () => {
    certificate = createTestCertificate();
    app = await startTestApp({ env: { TLS_CERT_FILE: certificate.certFile, TLS_KEY_FILE: certificate.keyFile } });
    port = Number(new URL(app.baseUrl).port);
  });
  afterAll(async () => {
    await app?.close();
    certificate?.remove();
  });

  it('marks the console session cookies Secure over TLS', async () => {
    const password = 'a passphrase over tls';
    const created = await request('POST', '/admin/staff', {
      token: ADMIN_TOKEN,
      body: { name: 'tls-owner', role: 'owner', password },
    });
    expect(created.status).toBe(201);
    const cookies = await new Promise<string[]>((resolve, reject) => {
      const payload = JSON.stringify({ name: 'tls-owner', password });
      const req = httpsRequest(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/admin/session',
          ca: certificate.cert,
          agent: false,
          headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.headers['set-cookie'] ?? []));
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
    expect(cookies.map((cookie) => cookie.split('=')[0])).toEqual([
      'rhythmc_session',
      'rhythmc_csrf',
      'rhythmc_device',
    ]);
    for (const cookie of cookies) {
      expect(cookie).toContain('; SameSite=Strict');
      expect(cookie).toMatch(/; Secure$/);
    }
  });

  it('answers over TLS 1.3', async () => {
    expect(await request('GET', '/server/ping')).toEqual({ status: 200, body: true, protocol: 'TLSv1.3' });
  });

  it('refuses a client limited to TLS 1.2 in the handshake (protocol_version alert)', async () => {
    const failure = await new Promise<Error>((resolve, reject) => {
      const socket = tlsConnect(
        { host: '127.0.0.1', port, ca: certificate.cert, minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' },
        () => {
          socket.destroy();
          reject(new Error(`the TLS 1.2 handshake succeeded (${String(socket.getProtocol())})`));
        },
      );
      socket.on('error', resolve);
    });
    expect((failure as NodeJS.ErrnoException).code).toBe('ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION');
  });

  it('refuses an HTTPS request limited to TLS 1.2: no answer reaches it', async () => {
    const failure = await request('GET', '/server/ping', { maxVersion: 'TLSv1.2' }).then(
      (response) => new Error(`answered ${response.status} over ${response.protocol}`),
      (error: Error) => error,
    );
    expect(failure).toMatchObject({ code: 'EPROTO', message: expect.stringMatching(/alert protocol version/) });
  });

  it('serves the API and the WebSocket (WSS) on the same port: login, then a resume_session ack over TLS 1.3', async () => {
    const server = await request('POST', '/admin/servers', {
      token: ADMIN_TOKEN,
      body: { name: 'tls-server', country: 'DE' },
    });
    expect(server.status).toBe(201);
    const login = await request('POST', '/server/login', {
      token: server.body.bootstrapToken,
      body: { pluginVersion: 10, pluginSHA: 'sha-test' },
    });
    expect(login.status).toBe(200);
    // The service advertises secure addresses (PUBLIC_BASE_URL defaults to https with TLS; the test's PORT is 0).
    expect(login.body.wsServer).toBe('wss://localhost:0/ws');
    const player = await request('POST', '/admin/players', { token: ADMIN_TOKEN, body: { username: 'tls_player' } });
    const netToken = await request('POST', `/admin/players/${player.body.uid}/net-token`, { token: ADMIN_TOKEN });
    const playerLogin = await request('POST', '/player/login', {
      token: login.body.accessToken,
      body: { mode: 'TOKEN', version: 1, authToken: netToken.body.netToken },
    });
    expect(playerLogin.status).toBe(200);

    const socket = new WebSocket(`wss://127.0.0.1:${port}/ws`, {
      ca: certificate.cert,
      headers: { Authorization: `Bearer ${login.body.accessToken}` },
    });
    try {
      let protocol: string | null = null;
      socket.once('upgrade', (response) => (protocol = (response.socket as TLSSocket).getProtocol()));
      await new Promise((resolve, reject) => {
        socket.once('open', resolve);
        socket.once('error', reject);
      });
      expect(protocol).toBe('TLSv1.3');
      const ack = new Promise<unknown>((resolve) =>
        socket.once('message', (data: Buffer) => resolve(JSON.parse(data.toString('utf8')))),
      );
      socket.send(
        JSON.stringify({
          event: 'resume_session',
          data: { uid: player.body.uid, accessToken: playerLogin.body.accessToken },
        }),
      );
      expect(await ack).toEqual({ event: 'resume_session', data: { uid: player.body.uid, ok: true, expiresIn: 600 } });
    } finally {
      socket.terminate();
    }
  });
});
