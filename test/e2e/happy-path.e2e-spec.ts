import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPlayer, loginPlayer, TestPlayerSession } from '../factories/player.factory';
import { onlineServer, TestServerSession } from '../factories/server.factory';
import { createStaff, signIn } from '../factories/staff.factory';
import { defineCharts, gameplayPayload } from '../factories/upload.factory';
import { startTestApp, TestApp } from '../support/test-app';
import { WsClient } from '../support/ws-client';

/**
 * One happy path through every module, on one app instance, in the order a network meets them:
 * the fast tier's end-to-end part (`npm run test:fast`, README "Tests"). Each step is the plain
 * success of its module; the other files hold the edge cases. The steps share state, in order.
 */
describe('Happy path through every module (fast tier)', () => {
  let app: TestApp;
  let resourceDir: string;
  let server: TestServerSession & { server: { serverID: number; serverName: string } };
  let player: TestPlayerSession;
  const LEVEL = 101;

  beforeAll(async () => {
    resourceDir = mkdtempSync(join(tmpdir(), 'rhythmc-happy-'));
    mkdirSync(join(resourceDir, 'data', 'songs', String(LEVEL)), { recursive: true });
    writeFileSync(join(resourceDir, 'data', 'songs', String(LEVEL), 'chart.json'), '{"notes":[]}');
    app = await startTestApp({
      env: { RESOURCE_DIR: resourceDir, SITE_ENABLED: 'true', PUBLIC_API_ANONYMOUS_RATE_LIMIT: '600' },
    });
  });

  afterAll(async () => {
    await app?.close();
    rmSync(resourceDir, { recursive: true, force: true });
  });

  it('health: live and ready', async () => {
    expect(await app.http.get('/health', { token: null })).toMatchObject({ status: 200 });
    expect(await app.http.get('/health/ready', { token: null })).toMatchObject({ status: 200 });
  });

  it('server: registered by an admin, logged in with its bootstrap token, pinged', async () => {
    server = await onlineServer(app, { name: 'happy-lobby' });
    expect(server.body).toMatchObject({ serverID: server.serverID, serverName: 'happy-lobby' });
    expect(await app.http.get('/server/ping', { token: null })).toMatchObject({ status: 200, body: true });
  });

  it('catalog: charts and collections an admin defines reach the game server', async () => {
    await defineCharts(app, [LEVEL], 12);
    const collections = await app.admin.put('/admin/collections', [
      {
        key: 'rhythmc:tag.happy',
        type: 'tag',
        unlockMethod: { type: 'MANUAL' },
        properties: { title: '&aHappy', description: 'A happy tag', rarity: 'COMMON', position: false },
      },
    ]);
    expect(collections.status).toBe(200);
    const charts = await app.http.get('/server/charts', { token: server.accessToken });
    expect(charts.status).toBe(200);
    expect(charts.body).toEqual([
      expect.objectContaining({ levelId: LEVEL, name: `Chart ${LEVEL}`, difficultyConstant: 12 }),
    ]);
    const served = await app.http.get('/server/collections', { token: server.accessToken });
    expect(served.body).toEqual([expect.objectContaining({ key: 'rhythmc:tag.happy', type: 'tag' })]);
  });

  it('player: created, given a Net Token, logged in; options stored', async () => {
    player = await loginPlayer(app, server, await createPlayer(app, { displayName: 'Happy' }));
    expect(player.profile).toMatchObject({
      uid: player.uid,
      username: player.username,
      displayName: 'Happy',
      version: 0,
    });
    const options = await app.http.post(
      '/player/options',
      { uid: player.uid, accessToken: player.accessToken, options: { noteSpeed: 7 } },
      { token: server.accessToken },
    );
    expect(options.status).toBe(200);
    expect(await app.sql('SELECT extra_options FROM player WHERE uid = $1', [player.uid])).toEqual([
      { extra_options: { noteSpeed: 7 } },
    ]);
  });

  it('economy: a balance synced, ranked, and its history read by an admin', async () => {
    const synced = await app.http.post(
      '/player/economy',
      { uid: player.uid, accessToken: player.accessToken, wattHour: 1234 },
      { token: server.accessToken },
    );
    expect(synced).toMatchObject({ status: 200, body: { uid: player.uid, wattHour: 1234 } });
    const baltop = await app.http.get('/server/baltop', { token: server.accessToken });
    expect(baltop.body).toEqual([expect.objectContaining({ rank: 1, uid: player.uid, wattHour: 1234 })]);
    const history = await app.admin.get(`/admin/players/${player.uid}/economy`, { query: { limit: 5 } });
    expect(history.body).toMatchObject({ uid: player.uid, wattHour: 1234, nextBefore: null });
    expect(history.body.history).toHaveLength(1);
  });

  it('upload: a play is scored and ranked, and the boards show it', async () => {
    const time = Date.now() - 60_000;
    const upload = await app.http.post(
      '/player/upload',
      {
        player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: time + 250 },
        server: { serverID: server.serverID, serverName: 'happy-lobby', country: 'DE' },
        payload: gameplayPayload(LEVEL, time, { acc: 99.5 }),
      },
      { token: server.accessToken },
    );
    // 12 + 1 + (99.5 − 98)/2 = 13.75; ATP 13.75 / 30 = 0.45833… → 0.4583.
    expect(upload).toMatchObject({
      status: 200,
      body: { atp: 0.4583, siteRank: 1, trackRank: 1, playRating: 13.75, personalBest: true },
    });
    const atp = await app.http.get('/server/leaderboards/atp', { token: server.accessToken });
    expect(atp.body).toMatchObject({ entries: [{ rank: 1, uid: player.uid, atp: 0.4583 }] });
    const chart = await app.http.get(`/server/leaderboards/charts/${LEVEL}`, { token: server.accessToken });
    expect(chart.body).toMatchObject({ entries: [{ rank: 1, uid: player.uid }] });
    const plays = await app.admin.get('/admin/plays', { query: { uid: String(player.uid), state: 'all' } });
    expect(plays.body.items).toEqual([expect.objectContaining({ uid: player.uid, levelId: LEVEL })]);
  });

  it('public: an API key reads the board and the player', async () => {
    const key = await app.admin.post('/admin/api-keys', {
      name: 'happy-site',
      scopes: ['read:boards', 'read:players'],
    });
    expect(key.status).toBe(201);
    const board = await app.http.get('/public/v1/boards/atp', { token: key.body.key });
    expect(board.body).toMatchObject({ entries: [{ rank: 1, uid: player.uid }] });
    const profile = await app.http.get(`/public/v1/players/${player.uid}`, { token: key.body.key });
    expect(profile).toMatchObject({ status: 200, body: { uid: player.uid, username: player.username } });
  });

  it('resources: a rescan indexes RESOURCE_DIR and the manifest lists it', async () => {
    const rescan = await app.admin.post('/admin/resources/rescan');
    expect(rescan.status).toBe(200);
    const manifest = await app.http.get('/resources/manifest', { token: server.accessToken });
    expect(manifest.status).toBe(200);
    expect(JSON.stringify(manifest.body)).toContain(`data/songs/${LEVEL}/chart.json`);
  });

  it('realtime: a ban reaches the game server as kick_player over the WebSocket; the ban is lifted', async () => {
    const socket = await WsClient.connect(app.baseUrl, server.accessToken);
    try {
      const ban = await app.admin.post(`/admin/players/${player.uid}/ban`, { reason: 'test', message: 'Bye' });
      expect(ban.status).toBe(200);
      expect(await socket.next((frame) => frame.event === 'kick_player')).toEqual({
        event: 'kick_player',
        data: { uid: player.uid, message: 'Bye', reason: 'test', until: '' },
      });
    } finally {
      socket.socket.terminate();
    }
    expect((await app.admin.delete(`/admin/players/${player.uid}/ban`)).status).toBe(204);
    // The kick ended the player's session; the plugin logs the player in again.
    player = await loginPlayer(app, server, player);
    // `version` answers the one stored by the previous login.
    expect(player.profile).toMatchObject({ uid: player.uid, version: 1 });
  });

  it('webhooks: registered and listed', async () => {
    const created = await app.admin.post('/admin/webhooks', {
      name: 'happy',
      url: 'https://hooks.example.com/rhythmc',
      events: ['player.banned'],
    });
    expect(created.status).toBe(201);
    const listed = await app.admin.get('/admin/webhooks');
    expect(listed.body.items).toEqual([expect.objectContaining({ id: created.body.id, name: 'happy' })]);
  });

  it('staff: an owner signs in with a password and reads its own account', async () => {
    const owner = await createStaff(app, 'owner');
    const session = await signIn(app, owner);
    const me = await session.client.get('/admin/me');
    expect(me).toMatchObject({ status: 200, body: { name: owner.name, role: 'owner' } });
  });

  it('admin and audit: the overview and the player profile read, every write above audited', async () => {
    expect(await app.admin.get('/admin/overview')).toMatchObject({ status: 200 });
    const profile = await app.admin.get(`/admin/players/${player.uid}`);
    expect(profile).toMatchObject({ status: 200, body: { uid: player.uid, username: player.username } });
    const audit = await app.admin.get('/admin/audit', { query: { limit: 200 } });
    const actions = (audit.body.items as { action: string }[]).map((item) => item.action);
    expect(actions).toEqual([
      'staff.sign-in',
      'staff.create',
      'webhook.create',
      'player.unban',
      'player.ban',
      'resources.rescan',
      'api-key.create',
      'player.net-token',
      'player.create',
      'catalog.collections',
      'catalog.charts',
      'server.register',
    ]);
  });

  it('privacy: a player export holds the player', async () => {
    const exported = await app.admin.post(`/admin/players/${player.uid}/export`);
    expect(exported).toMatchObject({ status: 200, body: { uid: player.uid } });
  });

  it('observability, OpenAPI, console and site: served', async () => {
    const metrics = await app.http.get('/metrics', { token: null });
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('rhythmc_');
    const openapi = await app.http.get('/docs/openapi.json', { token: null });
    expect(openapi).toMatchObject({ status: 200, body: { openapi: expect.stringMatching(/^3\./) } });
    expect((await app.http.get('/console/', { token: null })).status).toBe(200);
    expect((await app.http.get('/site/', { token: null })).status).toBe(200);
  });

  it('logouts: the player, then the server', async () => {
    const logout = await app.http.post(
      '/player/logout',
      { uid: player.uid, accessToken: player.accessToken },
      { token: server.accessToken },
    );
    expect(logout.status).toBe(204);
    expect((await app.http.post('/server/logout', {}, { token: server.accessToken })).status).toBe(204);
    expect((await app.http.get('/server/charts', { token: server.accessToken })).status).toBe(401);
  });
});
