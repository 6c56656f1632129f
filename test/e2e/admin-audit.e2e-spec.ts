/* eslint-disable @typescript-eslint/no-unsafe-return, @typescript-eslint/no-unsafe-call -- answers are untyped JSON */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPlayer } from '../factories/player.factory';
import { createServer, uniqueName } from '../factories/server.factory';
import { adminRoutes } from '../support/admin-routes';
import { startTestApp, TestApp } from '../support/test-app';
import { badLines } from '../support/bad-request';

const LOCAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;

describe('Admin audit log', () => {
  let app: TestApp;
  let resourceDir: string;

  beforeAll(async () => {
    resourceDir = mkdtempSync(join(tmpdir(), 'rhythmc-audit-'));
    mkdirSync(join(resourceDir, 'packs'), { recursive: true });
    writeFileSync(join(resourceDir, 'packs', 'p.zip'), 'zip');
    app = await startTestApp({ env: { TRUST_PROXY: 'loopback', RESOURCE_DIR: resourceDir } });
  });
  afterAll(async () => {
    await app.close();
    rmSync(resourceDir, { recursive: true, force: true });
  });

  const rows = () =>
    app.sql('SELECT id, action, target, summary, request_id, source_address, credential FROM admin_audit ORDER BY id');

  it('every admin write route carries @Audited, and no admin read does', () => {
    const handlers = adminRoutes(app);
    expect(handlers.length).toBeGreaterThan(20);
    const writes = handlers.filter((handler) => !handler.route.startsWith('GET '));
    expect(writes.filter((handler) => !handler.audited).map((handler) => handler.route)).toEqual([]);
    expect(
      handlers.filter((handler) => handler.route.startsWith('GET ') && handler.audited).map((handler) => handler.route),
    ).toEqual([]);
    // 25 of the game, its operation, the public API's keys and privacy requests, 8 of staff accounts, sessions and tokens
    // (staff.e2e-spec.ts), 3 of the second factor (staff-totp.e2e-spec.ts), 1 backup of the embedded database
    // (embedded-backup.e2e-spec.ts), 4 of webhooks (webhooks.e2e-spec.ts checks their rows), 4 of seasons
    // (seasons.e2e-spec.ts checks their rows).
    expect(writes.length).toBe(45);
  });

  it('appends exactly one row per successful admin write, with request id, source address and credential, never a token', async () => {
    const before = (await rows()).length;
    const sent: Array<{ action: string; target: string; summary: unknown; requestId: string }> = [];
    const write = async (
      method: string,
      path: string,
      body: unknown,
      action: string,
      target: (answer: any) => string,
      summary: (answer: any) => unknown,
      status = 200,
    ) => {
      const requestId = `audit-${sent.length}-${Date.now()}`;
      const response = await app.admin.request(method, path, {
        body,
        headers: { 'X-Request-Id': requestId, 'X-Forwarded-For': '203.0.113.9' },
      });
      expect({ path, status: response.status }).toEqual({ path, status });
      sent.push({ action, target: target(response.body), summary: summary(response.body), requestId });
      return response.body;
    };

    const serverName = uniqueName('aud');
    const server = await write(
      'POST',
      '/admin/servers',
      { name: serverName, country: 'DE' },
      'server.register',
      (a) => `server:${a.serverID}`,
      () => ({ name: serverName, country: 'DE' }),
      201,
    );
    const rotated = await write(
      'POST',
      `/admin/servers/${server.serverID}/bootstrap-token`,
      undefined,
      'server.bootstrap-token',
      () => `server:${server.serverID}`,
      () => ({}),
      201,
    );
    await write(
      'PUT',
      '/admin/maintenance',
      { enabled: false, message: 'm' },
      'service.maintenance',
      () => 'service:maintenance',
      () => ({ enabled: false, message: 'm' }),
    );
    const policy = { minPluginVersion: 0, latestPluginVersion: 9, allowedPluginSHAs: [], downUrl: '' };
    await write(
      'PUT',
      '/admin/plugin-policy',
      policy,
      'service.plugin-policy',
      () => 'service:plugin-policy',
      () => policy,
    );
    await write(
      'PUT',
      '/admin/session-handover',
      { mode: 'off' },
      'service.session-handover',
      () => 'service:session-handover',
      () => ({ mode: 'off' }),
    );
    const player = await write(
      'POST',
      '/admin/players',
      { username: 'Audited_1' },
      'player.create',
      (a) => `player:${a.uid}`,
      () => ({ username: 'Audited_1' }),
      201,
    );
    const netToken = await write(
      'POST',
      `/admin/players/00${player.uid}/net-token`,
      undefined,
      'player.net-token',
      () => `player:${player.uid}`,
      () => ({}),
      201,
    );
    await write(
      'POST',
      `/admin/players/${player.uid}/ban`,
      { reason: 'r', until: '2099-01-01T00:00:00' },
      'player.ban',
      () => `player:${player.uid}`,
      () => ({
        reason: 'r',
        message: 'You are banned: r',
        until: '2099-01-01T00:00:00',
      }),
    );
    await write(
      'DELETE',
      `/admin/players/${player.uid}/ban`,
      undefined,
      'player.unban',
      () => `player:${player.uid}`,
      () => ({}),
      204,
    );
    await write(
      'PUT',
      `/admin/players/${player.uid}/banstate`,
      { banstate: 1 },
      'player.banstate',
      () => `player:${player.uid}`,
      () => ({ banstate: 1 }),
    );
    const charts = [1, 2].map((levelId) => ({
      levelId,
      name: `L${levelId}`,
      difficultyConstant: 1,
      version: '1',
      active: true,
    }));
    await write(
      'PUT',
      '/admin/charts',
      charts,
      'catalog.charts',
      () => 'catalog:charts',
      () => ({ upserted: 2, levelIds: [1, 2] }),
    );
    const collections = [
      { key: 'rhythmc:title.audit', type: 'title', unlockMethod: { type: 'MANUAL' }, properties: { title: 'Audit' } },
    ];
    await write(
      'PUT',
      '/admin/collections',
      collections,
      'catalog.collections',
      () => 'catalog:collections',
      () => ({ upserted: 1, keys: ['rhythmc:title.audit'] }),
    );
    const rescan = await write(
      'POST',
      '/admin/resources/rescan',
      undefined,
      'resources.rescan',
      () => 'resources:index',
      (a) => a,
    );
    await write(
      'PUT',
      '/admin/packs',
      [{ name: 'p', displayName: 'P', type: 'CHAPTER', availableSongs: [], file: 'packs/p.zip' }],
      'resources.packs',
      () => 'resources:packs',
      () => ({ upserted: 1, names: ['p'] }),
    );
    await write(
      'DELETE',
      '/admin/packs/p',
      undefined,
      'resources.pack-delete',
      () => 'pack:p',
      () => ({}),
      204,
    );
    // A pack name is a name, not an id: `007` stays `007` in the audit target.
    await write(
      'PUT',
      '/admin/packs',
      [{ name: '007', displayName: 'Bond', type: 'CHAPTER', availableSongs: [], file: 'packs/p.zip' }],
      'resources.packs',
      () => 'resources:packs',
      () => ({ upserted: 1, names: ['007'] }),
    );
    await write(
      'DELETE',
      '/admin/packs/007',
      undefined,
      'resources.pack-delete',
      () => 'pack:007',
      () => ({}),
      204,
    );
    // Any name a pack may have (a space, letters of any script) is its target as given.
    await write(
      'PUT',
      '/admin/packs',
      [{ name: 'Île bonus', displayName: 'Île', type: 'CHAPTER', availableSongs: [], file: 'packs/p.zip' }],
      'resources.packs',
      () => 'resources:packs',
      () => ({ upserted: 1, names: ['Île bonus'] }),
    );
    await write(
      'DELETE',
      `/admin/packs/${encodeURIComponent('Île bonus')}`,
      undefined,
      'resources.pack-delete',
      () => 'pack:Île bonus',
      () => ({}),
      204,
    );
    const recompute = await write(
      'POST',
      '/admin/ratings/recompute',
      undefined,
      'ratings.recompute',
      () => 'ratings:all',
      (a) => a,
    );
    expect(rescan).toEqual(expect.objectContaining({ packs: 1 }));
    expect(recompute).toEqual(expect.objectContaining({ players: 0 }));

    const stored = (await rows()).slice(before);
    expect(stored).toEqual(
      sent.map((entry) => ({
        id: expect.any(String),
        action: entry.action,
        target: entry.target,
        summary: entry.summary,
        request_id: entry.requestId,
        source_address: '203.0.113.9',
        credential: 'admin',
      })),
    );
    const everything = JSON.stringify(await app.sql('SELECT * FROM admin_audit'));
    for (const secret of [server.bootstrapToken, rotated.bootstrapToken, netToken.netToken])
      expect(everything).not.toContain(secret);
  });

  it('writes no row for a refused or failed write', async () => {
    const before = (await rows()).length;
    expect((await app.admin.post('/admin/players/9000000000/ban', { reason: 'x' })).status).toBe(404);
    expect((await app.admin.put('/admin/players/1/banstate', { banstate: -1 })).status).toBe(400);
    expect((await app.admin.post('/admin/servers', { name: '' })).status).toBe(400);
    expect(
      (
        await app.http.put(
          '/admin/maintenance',
          { enabled: true, message: '' },
          { token: 'wrong-admin-token-xxxxxxxx' },
        )
      ).status,
    ).toBe(401);
    expect((await app.admin.delete('/admin/packs/none')).status).toBe(404);
    expect((await app.admin.put('/admin/charts', [{ levelId: -1 }])).status).toBe(400);
    expect((await rows()).length).toBe(before);
  });

  it('is append-only in the database: UPDATE, DELETE and TRUNCATE raise, even for the owner', async () => {
    await createServer(app);
    const before = await app.sql('SELECT * FROM admin_audit ORDER BY id');
    expect(before.length).toBeGreaterThan(0);
    await expect(app.sql(`UPDATE admin_audit SET action = 'x'`)).rejects.toThrow(/admin_audit is append-only/);
    await expect(app.sql('DELETE FROM admin_audit')).rejects.toThrow(/admin_audit is append-only/);
    await expect(app.sql('TRUNCATE admin_audit')).rejects.toThrow(/admin_audit is append-only/);
    await expect(app.sql('TRUNCATE admin_audit RESTART IDENTITY CASCADE')).rejects.toThrow(
      /admin_audit is append-only/,
    );
    expect(await app.sql('SELECT * FROM admin_audit ORDER BY id')).toEqual(before);
  });

  describe('GET /admin/audit', () => {
    it('pages newest first and filters by target and action', async () => {
      const player = await createPlayer(app);
      for (const banstate of [1, 2, 3])
        expect((await app.admin.put(`/admin/players/${player.uid}/banstate`, { banstate })).status).toBe(200);
      const all = await app.sql<{ id: string }>('SELECT id FROM admin_audit ORDER BY id DESC');
      const seen: number[] = [];
      let cursor: string | null = null;
      do {
        const page: { status: number; body: any } = await app.admin.get('/admin/audit', {
          query: { limit: 4, ...(cursor ? { cursor } : {}) },
        });
        expect(page.status).toBe(200);
        expect(page.body.items.length).toBeLessThanOrEqual(4);
        seen.push(...page.body.items.map((item: { id: number }) => item.id));
        cursor = page.body.nextCursor;
      } while (cursor !== null);
      expect(seen).toEqual(all.map((row) => Number(row.id)));

      const target = await app.admin.get('/admin/audit', { query: { target: `player:${player.uid}`, limit: 2 } });
      expect(target.status).toBe(200);
      expect(target.body.items).toEqual([
        {
          id: expect.any(Number),
          time: expect.stringMatching(LOCAL),
          action: 'player.banstate',
          target: `player:${player.uid}`,
          summary: { banstate: 3 },
          requestId: expect.any(String),
          sourceAddress: '127.0.0.1',
          credential: 'admin',
          actor: 'ADMIN_TOKEN',
          actorId: null,
        },
        expect.objectContaining({ summary: { banstate: 2 } }),
      ]);
      const next = await app.admin.get('/admin/audit', {
        query: { target: `player:${player.uid}`, limit: 2, cursor: target.body.nextCursor },
      });
      expect(next.body.items.map((item: { action: string }) => item.action)).toEqual([
        'player.banstate',
        'player.net-token',
      ]);
      expect(next.body.items.map((item: { summary: unknown }) => item.summary)).toEqual([{ banstate: 1 }, {}]);

      const creates = await app.admin.get('/admin/audit', {
        query: { action: 'player.create', target: `player:${player.uid}` },
      });
      expect(creates.body).toEqual({
        items: [expect.objectContaining({ action: 'player.create', summary: { username: player.username } })],
        nextCursor: null,
      });
    });

    it('filters by a pack name of any text', async () => {
      for (const name of ['Ωmega pack', 'p']) {
        expect(
          (
            await app.admin.put('/admin/packs', [
              { name, displayName: 'P', type: 'CHAPTER', availableSongs: [], file: 'packs/p.zip' },
            ])
          ).status,
        ).toBe(200);
        expect((await app.admin.delete(`/admin/packs/${encodeURIComponent(name)}`)).status).toBe(204);
      }
      const found = await app.admin.get('/admin/audit', { query: { target: 'pack:Ωmega pack' } });
      expect(found.status).toBe(200);
      expect(found.body.items).toEqual([
        expect.objectContaining({ action: 'resources.pack-delete', target: 'pack:Ωmega pack', summary: {} }),
      ]);
    });

    it.each([
      ['target', 'player', 'target must be a target such as player:1002 or server:7'],
      ['target', 'pack:a\tb', 'target must be a target such as player:1002 or server:7'],
      ['target', 'pack:a\u0000', 'target must be a target such as player:1002 or server:7'],
      ['target', `pack:${'x'.repeat(151)}`, 'target must be a target such as player:1002 or server:7'],
      ['target', 'Player:1', 'target must be a target such as player:1002 or server:7'],
      ['action', 'ban', 'action must be an action such as player.ban'],
      ['action', '', 'action must be an action such as player.ban'],
    ])('400 for %s=%s', async (name, value, message) => {
      const response = await app.admin.get(`/admin/audit?${name}=${encodeURIComponent(value)}`);
      expect(response.status).toBe(400);
      expect(response.body).toEqual(badLines(message));
    });
  });
});
