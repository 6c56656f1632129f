import { onlinePlayer } from '../factories/player.factory';
import { createServer, onlineServer, uniqueName } from '../factories/server.factory';
import { gameplayPayload } from '../factories/upload.factory';
import { ADMIN_TOKEN, startTestApp, TestApp } from '../support/test-app';

describe('GET /admin/overview', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  it('answers zeros and the default settings on a fresh network', async () => {
    await createServer(app, { name: uniqueName('idle') });
    const response = await app.admin.get('/admin/overview');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      serversOnline: 0,
      playersOnline: 0,
      uploads: { lastMinute: 0, last15Minutes: 0 },
      maintenance: { enabled: false, message: '' },
      pluginPolicy: null,
      sessionHandover: { mode: 'off', groups: [], modes: ['ONLINE', 'TOKEN', 'OFFLINE_REFRESH'] },
    });
  });

  it('counts live sessions and recent uploads, and shows the settings in force', async () => {
    const server = await onlineServer(app, { name: uniqueName('ov') });
    const player = await onlinePlayer(app, server);
    await onlinePlayer(app, server);
    const payload = gameplayPayload(4201, Date.now());
    const upload = await app.http.post(
      '/player/upload',
      {
        player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: payload.time + 250 },
        server: { serverID: server.serverID, serverName: server.body.serverName, country: 'DE' },
        payload,
      },
      { token: server.accessToken },
    );
    expect(upload.status).toBe(200);
    // A record received 5 minutes ago counts in the 15 minutes only.
    const old = gameplayPayload(4201, Date.now() - 1_000);
    expect(
      (
        await app.http.post(
          '/player/upload',
          {
            player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: old.time + 250 },
            server: { serverID: server.serverID, serverName: server.body.serverName, country: 'DE' },
            payload: old,
          },
          { token: server.accessToken },
        )
      ).status,
    ).toBe(200);
    await app.sql(`UPDATE play_record SET received_at = now() - interval '5 minutes' WHERE time_ms = $1`, [old.time]);
    const policy = {
      minPluginVersion: 1,
      latestPluginVersion: 12,
      allowedPluginSHAs: [],
      downUrl: 'https://example.org/p.jar',
    };
    expect((await app.admin.put('/admin/plugin-policy', policy)).status).toBe(200);
    expect((await app.admin.put('/admin/maintenance', { enabled: true, message: 'Back soon' })).status).toBe(200);
    const handover = { mode: 'all', groups: [], modes: ['TOKEN'] };
    expect((await app.admin.put('/admin/session-handover', handover)).status).toBe(200);

    const response = await app.admin.get('/admin/overview');
    expect(response.body).toEqual({
      serversOnline: 1,
      playersOnline: 2,
      uploads: { lastMinute: 1, last15Minutes: 2 },
      maintenance: { enabled: true, message: 'Back soon' },
      pluginPolicy: policy,
      sessionHandover: handover,
    });
    // A read: no audit row.
    const audit = await app.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM admin_audit WHERE action LIKE 'overview%'`,
    );
    expect(audit[0].n).toBe(0);
  });

  it('answers 401 for a wrong token', async () => {
    expect((await app.http.get('/admin/overview', { token: 'wrong-token-0123456789' })).body).toEqual({
      error: 'UNAUTHORIZED',
      message: 'Invalid admin token',
    });
  });
});

describe('GET /admin/overview without ADMIN_TOKEN', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ env: { ADMIN_TOKEN: '' } });
  });
  afterAll(async () => {
    await app.close();
  });

  it('answers 404', async () => {
    const response = await app.http.get('/admin/overview', { token: ADMIN_TOKEN });
    expect(response).toEqual(
      expect.objectContaining({ status: 404, body: { error: 'NOT_FOUND', message: 'Not found' } }),
    );
  });
});
