import { createHash } from 'node:crypto';
import { onlinePlayer } from '../factories/player.factory';
import { createServer, loginServer, uniqueName } from '../factories/server.factory';
import { WsClient } from '../support/ws-client';
import { ADMIN_TOKEN, startTestApp, TestApp } from '../support/test-app';
import { badField, badLines } from '../support/bad-request';

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

describe('Admin API: servers, maintenance, plugin policy', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  afterEach(async () => {
    await app.admin.put('/admin/maintenance', { enabled: false, message: '' });
    await app.sql(`DELETE FROM service_setting WHERE key = 'plugin_policy'`);
  });

  describe('authentication', () => {
    it.each([
      ['no token', null],
      ['a wrong token', 'wrong-admin-token-xxxxxxxx'],
    ])('answers 401 with %s', async (_label, token) => {
      const response = await app.http.post('/admin/servers', { name: uniqueName('s'), country: 'DE' }, { token });
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ error: 'UNAUTHORIZED', message: 'Invalid admin token' });
    });

    it('does not accept a server access token', async () => {
      const server = await createServer(app);
      const session = await loginServer(app, server);
      const response = await app.http.put(
        '/admin/maintenance',
        { enabled: true, message: 'x' },
        { token: session.accessToken },
      );
      expect(response.status).toBe(401);
    });
  });

  describe('POST /admin/servers', () => {
    it('creates a server with a working bootstrap token', async () => {
      const name = uniqueName('lobby');
      const response = await app.admin.post('/admin/servers', { name, country: 'JP', ip: '198.51.100.4' });
      expect(response.status).toBe(201);
      expect(response.body).toEqual({
        serverID: expect.any(Number),
        serverName: name,
        bootstrapToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      });
      const rows = await app.sql('SELECT name, country, ip FROM game_server WHERE id = $1', [response.body.serverID]);
      expect(rows).toEqual([{ name, country: 'JP', ip: '198.51.100.4' }]);
      const login = await app.http.post(
        '/server/login',
        { pluginVersion: 1, pluginSHA: 'x' },
        { token: response.body.bootstrapToken },
      );
      expect(login.status).toBe(200);
    });

    it.each([
      [{ country: 'DE' }, 'name'],
      [{ name: '', country: 'DE' }, 'name'],
      [{ name: 'x'.repeat(65), country: 'DE' }, 'name'],
      [{ name: 'ok-name', country: 7 }, 'country'],
      [{ name: 'ok-name', country: 'DE', ip: 'not-an-ip' }, 'ip'],
      [{ name: 'ok-name', country: 'DE', admin: true }, 'admin'],
    ])('answers 400 for %j and stores nothing', async (body, field) => {
      const before = await app.sql('SELECT count(*)::int AS n FROM game_server');
      const response = await app.admin.post('/admin/servers', body);
      expect(response.status).toBe(400);
      expect(response.body.error).toBe('BAD_REQUEST');
      expect(response.body.message).toContain(field);
      expect(await app.sql('SELECT count(*)::int AS n FROM game_server')).toEqual(before);
    });

    it('refuses a duplicate name with 400 and stores nothing', async () => {
      const server = await createServer(app);
      const response = await app.admin.post('/admin/servers', { name: server.serverName, country: 'DE' });
      expect(response.status).toBe(400);
      expect(response.body).toEqual(badField('name', `a server named "${server.serverName}" already exists`, 'label'));
      expect(await app.sql('SELECT count(*)::int AS n FROM game_server WHERE name = $1', [server.serverName])).toEqual([
        { n: 1 },
      ]);
    });
  });

  describe('POST /admin/servers/{serverID}/bootstrap-token', () => {
    it('rotates the bootstrap token; the old one stops working', async () => {
      const server = await createServer(app);
      const response = await app.admin.post(`/admin/servers/${server.serverID}/bootstrap-token`);
      expect(response.status).toBe(201);
      expect(response.body).toEqual({ bootstrapToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
      expect(response.body.bootstrapToken).not.toBe(server.bootstrapToken);
      expect(await app.sql('SELECT token_hash FROM server_credential WHERE server_id = $1', [server.serverID])).toEqual(
        [{ token_hash: sha256(response.body.bootstrapToken) }],
      );
      expect(
        (await app.http.post('/server/login', { pluginVersion: 1, pluginSHA: 'x' }, { token: server.bootstrapToken }))
          .status,
      ).toBe(401);
      expect(
        (
          await app.http.post(
            '/server/login',
            { pluginVersion: 1, pluginSHA: 'x' },
            { token: response.body.bootstrapToken },
          )
        ).status,
      ).toBe(200);
    });

    it('answers 404 for an unknown server and 400 for a malformed id', async () => {
      expect((await app.admin.post('/admin/servers/987654/bootstrap-token')).body).toEqual({
        error: 'NOT_FOUND',
        message: 'No server with serverID 987654',
      });
      for (const id of ['abc', '0', '-1', '1.5', '99999999999']) {
        const response = await app.admin.post(`/admin/servers/${id}/bootstrap-token`);
        expect(response.status).toBe(400);
        expect(response.body).toEqual(badLines('serverID must be a positive integer'));
      }
    });

    it('takes only the decimal digits of an existing id, not another spelling of it (nothing rotates)', async () => {
      const server = await createServer(app);
      const id = server.serverID;
      for (const spelling of [
        `+${id}`,
        `%2B${id}`,
        `%20${id}`,
        `${id}%20`,
        `${id}.0`,
        `${id}e0`,
        `0x${id.toString(16)}`,
        `0${id}e0`,
      ]) {
        const response = await app.admin.post(`/admin/servers/${spelling}/bootstrap-token`);
        expect({ spelling, status: response.status, body: response.body }).toEqual({
          spelling,
          status: 400,
          body: badLines('serverID must be a positive integer'),
        });
      }
      expect(await app.sql('SELECT token_hash FROM server_credential WHERE server_id = $1', [id])).toEqual([
        { token_hash: sha256(server.bootstrapToken) },
      ]);
    });
  });

  describe('POST /admin/servers/{serverID}/logout', () => {
    it("ends the server's session: its token and its players' sessions stop, its WebSocket closes, and it can log in again", async () => {
      const server = await createServer(app);
      const session = await loginServer(app, server);
      const player = await onlinePlayer(app, session);
      const socket = await WsClient.connect(app.baseUrl, session.accessToken);

      const response = await app.admin.post(`/admin/servers/${server.serverID}/logout`);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ serverID: server.serverID, endedSessions: 1 });
      expect(await socket.closed).toEqual({ code: 4002, reason: 'Server logged out by an admin' });
      expect((await app.http.get('/server/charts', { token: session.accessToken })).status).toBe(401);
      expect(await app.sql('SELECT end_reason FROM server_session WHERE server_id = $1', [server.serverID])).toEqual([
        { end_reason: 'admin' },
      ]);
      expect(await app.sql('SELECT logout_reason FROM player_session WHERE uid = $1', [player.uid])).toEqual([
        { logout_reason: 'server_session_ended' },
      ]);
      // Nothing open any more: a second call changes nothing; the bootstrap token still logs in.
      expect((await app.admin.post(`/admin/servers/${server.serverID}/logout`)).body).toEqual({
        serverID: server.serverID,
        endedSessions: 0,
      });
      expect(
        (await app.http.post('/server/login', { pluginVersion: 1, pluginSHA: 'x' }, { token: server.bootstrapToken }))
          .status,
      ).toBe(200);
      expect(
        await app.sql(
          `SELECT action, target, summary FROM admin_audit WHERE action = 'server.logout' AND target = $1`,
          [`server:${server.serverID}`],
        ),
      ).toEqual([
        { action: 'server.logout', target: `server:${server.serverID}`, summary: { endedSessions: 1 } },
        { action: 'server.logout', target: `server:${server.serverID}`, summary: { endedSessions: 0 } },
      ]);
    });

    it('answers 404 for an unknown server and 400 for a malformed id', async () => {
      expect((await app.admin.post('/admin/servers/987654/logout')).body).toEqual({
        error: 'NOT_FOUND',
        message: 'No server with serverID 987654',
      });
      const response = await app.admin.post('/admin/servers/abc/logout');
      expect(response.status).toBe(400);
      expect(response.body).toEqual(badLines('serverID must be a positive integer'));
    });
  });

  describe('PUT /admin/maintenance', () => {
    it('makes server login answer 401 MAINTENANCE with the message, until disabled', async () => {
      const server = await createServer(app);
      const set = await app.admin.put('/admin/maintenance', { enabled: true, message: 'Back at 18:00' });
      expect(set.status).toBe(200);
      expect(set.body).toEqual({ enabled: true, message: 'Back at 18:00' });

      const refused = await app.http.post(
        '/server/login',
        { pluginVersion: 1, pluginSHA: 'x' },
        { token: server.bootstrapToken },
      );
      expect(refused.status).toBe(401);
      expect(refused.body).toEqual({ error: 'MAINTENANCE', message: 'Back at 18:00' });
      expect(await app.sql('SELECT 1 FROM server_session WHERE server_id = $1', [server.serverID])).toHaveLength(0);

      expect((await app.admin.put('/admin/maintenance', { enabled: false, message: '' })).status).toBe(200);
      expect(
        (await app.http.post('/server/login', { pluginVersion: 1, pluginSHA: 'x' }, { token: server.bootstrapToken }))
          .status,
      ).toBe(200);
    });

    it('still checks the bootstrap token first', async () => {
      await app.admin.put('/admin/maintenance', { enabled: true, message: 'down' });
      const response = await app.http.post(
        '/server/login',
        { pluginVersion: 1, pluginSHA: 'x' },
        { token: 'unknown-token' },
      );
      expect(response.body).toEqual({ error: 'UNAUTHORIZED', message: 'Invalid bootstrap token' });
    });

    it('answers 400 for a non-boolean enabled', async () => {
      const response = await app.admin.put('/admin/maintenance', { enabled: 'yes', message: 'x' });
      expect(response.status).toBe(400);
      expect(response.body.message).toContain('enabled');
    });
  });

  describe('PUT /admin/plugin-policy', () => {
    const policy = {
      minPluginVersion: 5,
      latestPluginVersion: 7,
      allowedPluginSHAs: ['good-sha'],
      downUrl: 'https://example.org/rhythmc-7.jar',
    };

    it('stores the policy and answers it', async () => {
      const response = await app.admin.put('/admin/plugin-policy', policy);
      expect(response.status).toBe(200);
      expect(response.body).toEqual(policy);
    });

    it('answers 426 with toVersion and downUrl for a version below the minimum', async () => {
      await app.admin.put('/admin/plugin-policy', policy);
      const server = await createServer(app);
      const response = await app.http.post(
        '/server/login',
        { pluginVersion: 4, pluginSHA: 'good-sha' },
        { token: server.bootstrapToken },
      );
      expect(response.status).toBe(426);
      expect(response.body).toEqual({
        error: 'UPGRADE_REQUIRED',
        message: 'Plugin version 4 is below the minimum 5',
        toVersion: 7,
        downUrl: 'https://example.org/rhythmc-7.jar',
      });
      expect(await app.sql('SELECT 1 FROM server_session WHERE server_id = $1', [server.serverID])).toHaveLength(0);
    });

    it('answers 426 for a SHA outside a non-empty allow list', async () => {
      await app.admin.put('/admin/plugin-policy', policy);
      const server = await createServer(app);
      const response = await app.http.post(
        '/server/login',
        { pluginVersion: 6, pluginSHA: 'other-sha' },
        { token: server.bootstrapToken },
      );
      expect(response.status).toBe(426);
      expect(response.body).toEqual({
        error: 'UPGRADE_REQUIRED',
        message: 'This plugin build is not allowed',
        toVersion: 7,
        downUrl: 'https://example.org/rhythmc-7.jar',
      });
      const ok = await app.http.post(
        '/server/login',
        { pluginVersion: 5, pluginSHA: 'good-sha' },
        { token: server.bootstrapToken },
      );
      expect(ok.status).toBe(200);
    });

    it('accepts any SHA with an empty allow list, and every version without a policy', async () => {
      const server = await createServer(app);
      expect(
        (
          await app.http.post(
            '/server/login',
            { pluginVersion: 0, pluginSHA: 'anything' },
            { token: server.bootstrapToken },
          )
        ).status,
      ).toBe(200);
      await app.admin.put('/admin/plugin-policy', { ...policy, allowedPluginSHAs: [] });
      expect(
        (
          await app.http.post(
            '/server/login',
            { pluginVersion: 5, pluginSHA: 'anything' },
            { token: server.bootstrapToken },
          )
        ).status,
      ).toBe(200);
    });

    it.each([
      [{ ...policy, minPluginVersion: 'x' }, 'minPluginVersion'],
      [{ ...policy, latestPluginVersion: 4 }, 'latestPluginVersion'],
      [{ ...policy, allowedPluginSHAs: 'sha' }, 'allowedPluginSHAs'],
      [{ ...policy, allowedPluginSHAs: [1] }, 'allowedPluginSHAs'],
      [{ minPluginVersion: 1, latestPluginVersion: 2, allowedPluginSHAs: [] }, 'downUrl'],
    ])('answers 400 for %j and keeps the previous policy', async (body, field) => {
      await app.admin.put('/admin/plugin-policy', policy);
      const response = await app.admin.put('/admin/plugin-policy', body);
      expect(response.status).toBe(400);
      expect(response.body.error).toBe('BAD_REQUEST');
      expect(response.body.message).toContain(field);
      expect(await app.sql(`SELECT value FROM service_setting WHERE key = 'plugin_policy'`)).toEqual([
        { value: policy },
      ]);
    });
  });
});

describe('Admin API without ADMIN_TOKEN', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ env: { ADMIN_TOKEN: '' } });
  });
  afterAll(async () => {
    await app.close();
  });

  it.each([
    ['POST', '/admin/servers'],
    ['POST', '/admin/servers/1/bootstrap-token'],
    ['PUT', '/admin/maintenance'],
    ['PUT', '/admin/plugin-policy'],
    ['GET', '/admin/anything'],
  ])('%s %s answers 404, whatever the token', async (method, path) => {
    const body = method === 'GET' ? undefined : { name: 'x', country: 'DE' };
    const response = await app.http.request(method, path, { token: ADMIN_TOKEN, body });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ error: 'NOT_FOUND', message: 'Not found' });
  });
});
