import { createServer, loginServer } from '../factories/server.factory';
import { startTestApp, TestApp } from '../support/test-app';

describe('Data survives a restart', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  it('a server created before a restart still logs in after it; settings are kept', async () => {
    const server = await createServer(app);
    const before = await loginServer(app, server);
    await app.admin.put('/admin/plugin-policy', {
      minPluginVersion: 2,
      latestPluginVersion: 3,
      allowedPluginSHAs: [],
      downUrl: 'https://d',
    });

    await app.restart();

    // The session opened before the restart is still the live one.
    expect((await app.http.get('/server/refresh', { token: before.accessToken })).status).toBe(200);
    const after = await app.http.post(
      '/server/login',
      { pluginVersion: 2, pluginSHA: 'x' },
      { token: server.bootstrapToken },
    );
    expect(after.status).toBe(200);
    expect(after.body.serverID).toBe(server.serverID);
    const refused = await app.http.post(
      '/server/login',
      { pluginVersion: 1, pluginSHA: 'x' },
      { token: server.bootstrapToken },
    );
    expect(refused.status).toBe(426);
  });
});
