import { createHash } from 'node:crypto';
import { createServer, loginServer, onlineServer } from '../factories/server.factory';
import { startTestApp, TestApp } from '../support/test-app';
import { sleep } from '../support/wait';

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

describe('Server sessions (POST /server/login, GET /server/refresh, POST /server/logout, GET /server/ping)', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  describe('POST /server/login', () => {
    it('answers the server session and stores only the token hash', async () => {
      const server = await createServer(app, { country: 'FR', ip: '203.0.113.7' });
      const response = await app.http.post(
        '/server/login',
        { pluginVersion: 12, pluginSHA: 'abc123' },
        { token: server.bootstrapToken },
      );

      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        serverID: server.serverID,
        serverName: server.serverName,
        assetServer: app.config.publicBaseUrl,
        serverIP: '203.0.113.7',
        country: 'FR',
        wsServer: `${app.config.publicBaseUrl.replace(/^http/, 'ws')}/ws`,
        accessToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        expiresIn: 600,
      });
      const rows = await app.sql(
        'SELECT token_hash, plugin_version, plugin_sha, ended_at FROM server_session WHERE server_id = $1',
        [server.serverID],
      );
      expect(rows).toEqual([
        { token_hash: sha256(response.body.accessToken), plugin_version: 12, plugin_sha: 'abc123', ended_at: null },
      ]);
      const stored = await app.sql('SELECT token_hash FROM server_credential WHERE server_id = $1', [server.serverID]);
      expect(stored).toEqual([{ token_hash: sha256(server.bootstrapToken) }]);
    });

    it('advertises the caller address as serverIP when the server has no configured ip', async () => {
      const server = await createServer(app);
      const session = await loginServer(app, server);
      expect(session.body.serverIP).toBe('127.0.0.1');
    });

    it('reads the legacy serverAuthToken body field when the header is absent', async () => {
      const server = await createServer(app);
      const response = await app.http.post(
        '/server/login',
        { pluginVersion: 1, pluginSHA: 'x', serverAuthToken: server.bootstrapToken },
        { token: null },
      );
      expect(response.status).toBe(200);
      expect(response.body.serverID).toBe(server.serverID);
    });

    it('prefers the header over the legacy field', async () => {
      const server = await createServer(app);
      const response = await app.http.post(
        '/server/login',
        { pluginVersion: 1, pluginSHA: 'x', serverAuthToken: server.bootstrapToken },
        { token: 'not-a-bootstrap-token' },
      );
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ error: 'UNAUTHORIZED', message: 'Invalid bootstrap token' });
    });

    it.each([
      ['no token at all', null],
      ['an unknown token', 'definitely-not-issued'],
    ])('answers 401 with %s', async (_label, token) => {
      const response = await app.http.post('/server/login', { pluginVersion: 1, pluginSHA: 'x' }, { token });
      expect(response.status).toBe(401);
      expect(response.body.error).toBe('UNAUTHORIZED');
      expect(typeof response.body.message).toBe('string');
    });

    it('does not accept a server access token as bootstrap token', async () => {
      const session = await onlineServer(app);
      const response = await app.http.post(
        '/server/login',
        { pluginVersion: 1, pluginSHA: 'x' },
        { token: session.accessToken },
      );
      expect(response.status).toBe(401);
    });

    it.each([
      [{ pluginSHA: 'x' }, 'pluginVersion'],
      [{ pluginVersion: '3', pluginSHA: 'x' }, 'pluginVersion'],
      [{ pluginVersion: 1.5, pluginSHA: 'x' }, 'pluginVersion'],
      [{ pluginVersion: -1, pluginSHA: 'x' }, 'pluginVersion'],
      [{ pluginVersion: 1 }, 'pluginSHA'],
      [{ pluginVersion: 1, pluginSHA: 5 }, 'pluginSHA'],
      [{ pluginVersion: 1, pluginSHA: null, extra: true }, 'pluginSHA'],
    ])('answers 400 naming the field for %j', async (body, field) => {
      const server = await createServer(app);
      const response = await app.http.post('/server/login', body, { token: server.bootstrapToken });
      expect(response.status).toBe(400);
      expect(response.body.error).toBe('BAD_REQUEST');
      expect(response.body.message).toContain(field);
      const sessions = await app.sql('SELECT 1 FROM server_session WHERE server_id = $1', [server.serverID]);
      expect(sessions).toHaveLength(0);
    });

    it('replaces the live session of the same server', async () => {
      const server = await createServer(app);
      const first = await loginServer(app, server);
      const second = await loginServer(app, server);
      expect(second.accessToken).not.toBe(first.accessToken);

      expect((await app.http.get('/server/refresh', { token: first.accessToken })).status).toBe(401);
      expect((await app.http.get('/server/refresh', { token: second.accessToken })).status).toBe(200);

      const rows = await app.sql<{ end_reason: string | null; open: boolean }>(
        'SELECT end_reason, ended_at IS NULL AS open FROM server_session WHERE server_id = $1 ORDER BY created_at',
        [server.serverID],
      );
      expect(rows).toEqual([
        { end_reason: 'replaced', open: false },
        { end_reason: null, open: true },
      ]);
    });

    it('keeps exactly one open session under concurrent logins of one server', async () => {
      const server = await createServer(app);
      const responses = await Promise.all(
        Array.from({ length: 8 }, () =>
          app.http.post('/server/login', { pluginVersion: 1, pluginSHA: 'x' }, { token: server.bootstrapToken }),
        ),
      );
      expect(responses.map((r) => r.status)).toEqual(Array(8).fill(200));
      const open = await app.sql('SELECT id FROM server_session WHERE server_id = $1 AND ended_at IS NULL', [
        server.serverID,
      ]);
      expect(open).toHaveLength(1);
      const valid = await Promise.all(
        responses.map((r) => app.http.get('/server/refresh', { token: r.body.accessToken })),
      );
      expect(valid.filter((r) => r.status === 200)).toHaveLength(1);
    });
  });

  describe('GET /server/refresh', () => {
    it('issues a new token for the same session and retires the old one', async () => {
      const session = await onlineServer(app);
      const refreshed = await app.http.get('/server/refresh', { token: session.accessToken });
      expect(refreshed.status).toBe(200);
      expect(refreshed.body).toEqual({ accessToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), expiresIn: 600 });
      expect(refreshed.body.accessToken).not.toBe(session.accessToken);

      expect((await app.http.get('/server/refresh', { token: session.accessToken })).status).toBe(401);
      const rows = await app.sql('SELECT token_hash FROM server_session WHERE server_id = $1', [session.serverID]);
      expect(rows).toEqual([{ token_hash: sha256(refreshed.body.accessToken) }]);
    });

    it('answers 401 without a token, with a bootstrap token and after logout', async () => {
      const session = await onlineServer(app);
      expect((await app.http.get('/server/refresh', { token: null })).body).toEqual({
        error: 'UNAUTHORIZED',
        message: 'Missing bearer server access token',
      });
      expect((await app.http.get('/server/refresh', { token: session.server.bootstrapToken })).status).toBe(401);
      expect((await app.http.post('/server/logout', undefined, { token: session.accessToken })).status).toBe(204);
      expect((await app.http.get('/server/refresh', { token: session.accessToken })).status).toBe(401);
    });
  });

  describe('POST /server/logout', () => {
    it('ends the session with 204 and no body', async () => {
      const session = await onlineServer(app);
      const response = await app.http.post('/server/logout', undefined, { token: session.accessToken });
      expect(response.status).toBe(204);
      expect(response.text).toBe('');
      const rows = await app.sql('SELECT end_reason FROM server_session WHERE server_id = $1', [session.serverID]);
      expect(rows).toEqual([{ end_reason: 'logout' }]);
      expect((await app.http.post('/server/logout', undefined, { token: session.accessToken })).status).toBe(401);
    });
  });

  describe('GET /server/ping', () => {
    it('answers the JSON body true without authentication', async () => {
      const response = await app.http.get('/server/ping', { token: null });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.body).toBe(true);
    });
  });
});

describe('Server token lifetime and refresh grace', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ env: { SERVER_TOKEN_TTL_SECONDS: '1', SERVER_TOKEN_REFRESH_GRACE_SECONDS: '2' } });
  });
  afterAll(async () => {
    await app.close();
  });

  it('answers expiresIn from SERVER_TOKEN_TTL_SECONDS and refuses an expired token on protected calls', async () => {
    const session = await onlineServer(app);
    expect(session.expiresIn).toBe(1);
    await sleep(1300);
    const response = await app.http.post('/server/logout', undefined, { token: session.accessToken });
    expect(response.status).toBe(401);
    expect(response.body.error).toBe('UNAUTHORIZED');
  });

  it('refreshes a token that expired within the grace, keeping the session', async () => {
    const session = await onlineServer(app);
    await sleep(1500);
    const refreshed = await app.http.get('/server/refresh', { token: session.accessToken });
    expect(refreshed.status).toBe(200);
    const rows = await app.sql('SELECT count(*)::int AS n FROM server_session WHERE server_id = $1', [
      session.serverID,
    ]);
    expect(rows).toEqual([{ n: 1 }]);
    expect((await app.http.post('/server/logout', undefined, { token: refreshed.body.accessToken })).status).toBe(204);
  });

  it('refuses a refresh once the grace has passed', async () => {
    const session = await onlineServer(app);
    await sleep(3300);
    const response = await app.http.get('/server/refresh', { token: session.accessToken });
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ error: 'UNAUTHORIZED', message: 'Invalid or expired server access token' });
  });
});
