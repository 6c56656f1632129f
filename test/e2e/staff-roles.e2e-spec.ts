import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PERMISSIONS, roleAllows, ROLES, type Role } from '../../src/auth/permissions';
import { csrfTokenOf } from '../../src/auth/staff-credentials';
import { base32Decode, totpCode, totpStep } from '../../src/staff/totp';
import { createPlayer, onlinePlayer, randomUsername } from '../factories/player.factory';
import { createServer, onlineServer, uniqueName } from '../factories/server.factory';
import {
  createStaff,
  createToken,
  signIn,
  staffName,
  staffPassword,
  type TestStaff,
  type TestStaffSession,
} from '../factories/staff.factory';
import { gameplayPayload } from '../factories/upload.factory';
import { adminRoutes } from '../support/admin-routes';
import type { HttpClient } from '../support/http';
import { testDatabaseServerUrl } from '../setup/test-env';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * Roles against every admin route (issue 42): each route declares a permission, the lowest role
 * that holds it is the one written below (the role table of docs/operations.md), and every role
 * is walked through every route with a console session and with a personal API token: allowed →
 * the route's 2xx, not allowed → 403; nobody signed in → 401. ADMIN_TOKEN is the owner's.
 */

/** The lowest role that may call each admin route. A new admin route fails the first test until it is here. */
const LOWEST_ROLE: Record<string, Role> = {
  'DELETE /admin/api-keys/:id': 'admin',
  'GET /admin/api-keys': 'admin',
  'PATCH /admin/api-keys/:id': 'admin',
  'POST /admin/api-keys': 'admin',
  'DELETE /admin/webhooks/:id': 'admin',
  'GET /admin/webhooks': 'admin',
  'GET /admin/webhooks/:id/deliveries': 'admin',
  'PATCH /admin/webhooks/:id': 'admin',
  'POST /admin/webhooks': 'admin',
  'POST /admin/webhooks/:id/secret': 'admin',
  'DELETE /admin/seasons/:id': 'admin',
  'GET /admin/seasons': 'read-only',
  'GET /admin/seasons/:id': 'read-only',
  'PATCH /admin/seasons/:id': 'admin',
  'POST /admin/seasons': 'admin',
  'POST /admin/seasons/:id/close': 'admin',
  'DELETE /admin/me/tokens/:id': 'read-only',
  'DELETE /admin/me/totp': 'read-only',
  'DELETE /admin/packs/:name': 'admin',
  'DELETE /admin/players/:uid/ban': 'moderator',
  'DELETE /admin/session': 'read-only',
  'DELETE /admin/staff/:id': 'owner',
  'DELETE /admin/staff/:id/tokens/:tokenId': 'owner',
  'GET /admin/audit': 'moderator',
  'GET /admin/bans': 'read-only',
  'GET /admin/boards/atp': 'read-only',
  'GET /admin/boards/charts/:levelId': 'read-only',
  'GET /admin/boards/atp/among': 'read-only',
  'GET /admin/boards/charts/:levelId/among': 'read-only',
  'GET /admin/charts': 'read-only',
  'GET /admin/collections': 'read-only',
  'GET /admin/me': 'read-only',
  'GET /admin/me/tokens': 'read-only',
  'GET /admin/overview': 'read-only',
  'GET /admin/packs': 'read-only',
  'GET /admin/players': 'read-only',
  'GET /admin/players/:uid': 'read-only',
  'GET /admin/players/:uid/economy': 'read-only',
  'GET /admin/players/:uid/history': 'read-only',
  'GET /admin/plays': 'read-only',
  'GET /admin/plays/:id': 'read-only',
  'GET /admin/realtime/connections': 'read-only',
  'GET /admin/servers': 'read-only',
  'GET /admin/staff': 'owner',
  'GET /admin/staff/:id': 'owner',
  'PATCH /admin/staff/:id': 'owner',
  'POST /admin/me/tokens': 'read-only',
  'POST /admin/me/totp': 'read-only',
  'POST /admin/players': 'support',
  'POST /admin/players/:uid/ban': 'moderator',
  'POST /admin/players/:uid/erase': 'admin',
  'POST /admin/players/:uid/export': 'admin',
  'POST /admin/players/:uid/net-token': 'support',
  'POST /admin/plays/:id/approve': 'moderator',
  'POST /admin/plays/:id/restore': 'moderator',
  'POST /admin/plays/:id/void': 'moderator',
  'POST /admin/database/backup': 'owner',
  'POST /admin/ratings/recompute': 'admin',
  'POST /admin/resources/rescan': 'admin',
  'POST /admin/servers': 'admin',
  'POST /admin/servers/:serverID/bootstrap-token': 'admin',
  'POST /admin/servers/:serverID/logout': 'moderator',
  'POST /admin/staff': 'owner',
  'PUT /admin/charts': 'admin',
  'PUT /admin/collections': 'admin',
  'PUT /admin/maintenance': 'admin',
  'PUT /admin/me/password': 'read-only',
  'PUT /admin/me/totp': 'read-only',
  'PUT /admin/packs': 'admin',
  'PUT /admin/players/:uid/banstate': 'moderator',
  'PUT /admin/plugin-policy': 'admin',
  'PUT /admin/session-handover': 'admin',
};

type Caller = 'session' | 'token' | 'ADMIN_TOKEN';

interface WalkContext {
  caller: Caller;
  /** Whether this caller may call the route (setups that cost something run only then). */
  allowed: boolean;
  /** The staff member walking (its session also when the walk uses its token); null for ADMIN_TOKEN. */
  staff: TestStaff | null;
  session: TestStaffSession | null;
}

interface RouteCall {
  method: string;
  path: string;
  body?: unknown;
}

interface WalkEntry {
  call: (ctx: WalkContext) => Promise<RouteCall> | RouteCall;
  /** The 2xx of an allowed call. */
  status: number;
  /**
   * Only a staff account may call it (ADMIN_TOKEN: 403), or only its console session (a token:
   * `tokenStatus`), or anything but a personal token (`not-token`: ADMIN_TOKEN and a session may).
   */
  needs?: 'account' | 'session' | 'not-token';
  /** What a token answers on a route that needs a session. */
  tokenStatus?: number;
}

interface Fixtures {
  uid: number;
  bannable: number;
  serverId: number;
  offlineServerId: number;
  playId: string;
  levelId: number;
  target: TestStaff;
}

describe('Staff roles on every admin route', () => {
  let app: TestApp;
  let resourceDir: string;
  let fx: Fixtures;
  let table: Record<string, WalkEntry>;

  const admin = async (method: string, path: string, body?: unknown, status = 200) => {
    const response = await app.admin.request(method, path, { body });
    if (response.status !== status) throw new Error(`${method} ${path}: ${response.status} ${response.text}`);
    return response.body as unknown;
  };

  beforeAll(async () => {
    resourceDir = mkdtempSync(join(tmpdir(), 'rhythmc-roles-'));
    mkdirSync(join(resourceDir, 'packs'), { recursive: true });
    writeFileSync(join(resourceDir, 'packs', 'p.zip'), 'zip');
    app = await startTestApp({ env: { RESOURCE_DIR: resourceDir } });
    await admin('POST', '/admin/resources/rescan');
    const levelId = 9_100;
    await admin('PUT', '/admin/charts', [
      { levelId, name: 'Walk', difficultyConstant: 10, version: '1', active: true },
    ]);
    const server = await onlineServer(app);
    const player = await onlinePlayer(app, server);
    const time = Date.now() - 60_000;
    const upload = await app.http.post(
      '/player/upload',
      {
        player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: time + 250 },
        server: { serverID: server.serverID, serverName: server.body.serverName as string, country: 'DE' },
        // maxCombo above the notes judged: flagged.
        payload: gameplayPayload(levelId, time, { maxCombo: 5_000 }),
      },
      { token: server.accessToken },
    );
    expect(upload.status).toBe(200);
    const [play] = await app.sql<{ id: string }>('SELECT id::text FROM play_record WHERE uid = $1', [player.uid]);
    fx = {
      uid: player.uid,
      bannable: (await createPlayer(app)).uid,
      serverId: server.serverID,
      offlineServerId: (await createServer(app)).serverID,
      playId: play.id,
      levelId,
      target: await createStaff(app, 'support'),
    };
    table = walkTable(fx, app);
  });

  afterAll(async () => {
    await app?.close();
    rmSync(resourceDir, { recursive: true, force: true });
  });

  it('every admin route declares a permission, and the lowest role holding it is the one of the role table', () => {
    const routes = adminRoutes(app);
    expect(routes.filter((route) => route.permission === null).map((route) => route.route)).toEqual([]);
    const lowest = Object.fromEntries(
      routes.map((route) => [route.route, route.permission === null ? null : PERMISSIONS[route.permission].role]),
    );
    expect(lowest).toEqual(LOWEST_ROLE);
    // …and the walk below has a request for each.
    expect(Object.keys(table).sort()).toEqual(Object.keys(LOWEST_ROLE).sort());
  });

  it('answers 401 to every admin route without a credential, and with a cookie that is no session', async () => {
    const stale = app.http.withHeaders({ Cookie: 'rhythmc_session=nothing', 'X-CSRF-Token': 'nothing' });
    for (const route of Object.keys(LOWEST_ROLE)) {
      const { method, path } = await table[route].call({
        caller: 'session',
        allowed: false,
        staff: null,
        session: null,
      });
      const body = { error: 'UNAUTHORIZED', message: 'Invalid admin token' };
      expect({ route, ...pick(await app.http.request(method, path)) }).toEqual({ route, status: 401, body });
      // A cookie whose CSRF token matches it but that names no session.
      const forged = await stale.request(method, path, {
        headers: { Cookie: 'rhythmc_session=nothing', 'X-CSRF-Token': csrfTokenOf('nothing') },
      });
      expect({ route, ...pick(forged) }).toEqual({
        route,
        status: 401,
        body: { error: 'UNAUTHORIZED', message: 'The session has ended; sign in again' },
      });
    }
  });

  it.each([...ROLES])(
    'walks every admin route as %s, with a console session and with a personal API token',
    async (role) => {
      const staff = await createStaff(app, role);
      const session = await signIn(app, staff);
      const token = await createToken(session);
      for (const caller of ['token', 'session'] as const) {
        const client = caller === 'session' ? session.client : app.http.withToken(token.token);
        // Sign-out last: it ends the session the walk uses.
        for (const route of walkOrder()) {
          const permission = routePermission(route);
          const allowed = roleAllows(role, permission);
          await expectAnswer(client, route, { caller, allowed, staff, session }, role);
        }
      }
      // The session walk signed out last: the cookie is refused from then on.
      expect((await session.client.get('/admin/me')).status).toBe(401);
    },
  );

  it('walks every admin route with ADMIN_TOKEN: the owner, without a staff account', async () => {
    for (const route of walkOrder()) {
      await expectAnswer(
        app.admin,
        route,
        { caller: 'ADMIN_TOKEN', allowed: true, staff: null, session: null },
        'owner',
      );
    }
  });

  function walkOrder(): string[] {
    return Object.keys(LOWEST_ROLE).sort(
      (a, b) => Number(a === 'DELETE /admin/session') - Number(b === 'DELETE /admin/session'),
    );
  }

  function routePermission(route: string) {
    const found = adminRoutes(app).find((candidate) => candidate.route === route);
    if (!found?.permission) throw new Error(`${route} has no permission`);
    return found.permission;
  }

  async function expectAnswer(client: HttpClient, route: string, ctx: WalkContext, role: Role): Promise<void> {
    const entry = table[route];
    const call = await entry.call(ctx);
    const response = await client.request(call.method, call.path, { body: call.body });
    const label = `${role} ${ctx.caller} ${route}`;
    if (!ctx.allowed) {
      expect({ label, ...pick(response) }).toEqual({
        label,
        status: 403,
        body: { error: 'FORBIDDEN', message: `The ${role} role may not do this (${routePermission(route)})` },
      });
      return;
    }
    let status = entry.status;
    if (ctx.caller === 'ADMIN_TOKEN' && (entry.needs === 'account' || entry.needs === 'session'))
      status = entry.tokenStatus ?? 403;
    else if (ctx.caller === 'token' && (entry.needs === 'session' || entry.needs === 'not-token'))
      status = entry.tokenStatus ?? 403;
    expect({ label, status: response.status }).toEqual({ label, status });
    if (call.method === 'PUT' && route === 'PUT /admin/me/password' && response.status === 204 && ctx.staff)
      ctx.staff.password = (call.body as { newPassword: string }).newPassword;
  }
});

function pick(response: { status: number; body: unknown }) {
  return { status: response.status, body: response.body };
}

/** A request per admin route that its 2xx answers when the caller may call it; setups run as ADMIN_TOKEN. */
function walkTable(fx: Fixtures, app: TestApp): Record<string, WalkEntry> {
  const asAdmin = async (method: string, path: string, body?: unknown) => {
    const response = await app.admin.request(method, path, { body });
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${response.text}`);
    return response.body as Record<string, unknown>;
  };
  const get = (path: string): WalkEntry => ({ call: () => ({ method: 'GET', path }), status: 200 });
  const webhookBody = () => ({ name: uniqueName('w'), url: 'https://webhook.invalid/walk', events: ['player.banned'] });
  const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 19);
  const seasonBody = () => ({
    slug: uniqueName('s'),
    name: 'Walk',
    startsAt: day(1),
    endsAt: day(2),
  });
  /** A season that has started (written in SQL: the API takes no start in the past). */
  const startedSeason = async () =>
    (
      await app.sql<{ id: string }>(
        `INSERT INTO board_period (kind, slug, name, starts_at, ends_at)
         VALUES ('season', $1, 'Walk', now() - interval '1 hour', now() + interval '1 day') RETURNING id::text AS id`,
        [seasonBody().slug],
      )
    )[0].id;
  return {
    'GET /admin/seasons': get('/admin/seasons'),
    'GET /admin/seasons/:id': {
      call: async () => ({ method: 'GET', path: `/admin/seasons/${await startedSeason()}` }),
      status: 200,
    },
    'POST /admin/seasons': {
      call: () => ({ method: 'POST', path: '/admin/seasons', body: seasonBody() }),
      status: 201,
    },
    'PATCH /admin/seasons/:id': {
      call: async (ctx) => {
        const id = ctx.allowed ? String((await asAdmin('POST', '/admin/seasons', seasonBody())).id) : '1';
        return { method: 'PATCH', path: `/admin/seasons/${id}`, body: { name: 'Walked' } };
      },
      status: 200,
    },
    'POST /admin/seasons/:id/close': {
      call: async (ctx) => ({
        method: 'POST',
        path: `/admin/seasons/${ctx.allowed ? await startedSeason() : '1'}/close`,
      }),
      status: 200,
    },
    'DELETE /admin/seasons/:id': {
      call: async (ctx) => {
        const id = ctx.allowed ? String((await asAdmin('POST', '/admin/seasons', seasonBody())).id) : '1';
        return { method: 'DELETE', path: `/admin/seasons/${id}` };
      },
      status: 204,
    },
    'GET /admin/overview': get('/admin/overview'),
    'GET /admin/players': get('/admin/players'),
    'GET /admin/players/:uid': get(`/admin/players/${fx.uid}`),
    'GET /admin/players/:uid/economy': get(`/admin/players/${fx.uid}/economy`),
    'GET /admin/players/:uid/history': get(`/admin/players/${fx.uid}/history`),
    'GET /admin/bans': get('/admin/bans'),
    'POST /admin/players': {
      call: () => ({ method: 'POST', path: '/admin/players', body: { username: randomUsername() } }),
      status: 201,
    },
    'POST /admin/players/:uid/net-token': {
      call: () => ({ method: 'POST', path: `/admin/players/${fx.bannable}/net-token` }),
      status: 201,
    },
    'POST /admin/players/:uid/export': {
      call: () => ({ method: 'POST', path: `/admin/players/${fx.uid}/export` }),
      status: 200,
    },
    // A player of its own per call: the erasure cannot be repeated.
    'POST /admin/players/:uid/erase': {
      call: async () => {
        const player = await asAdmin('POST', '/admin/players', { username: randomUsername() });
        return {
          method: 'POST',
          path: `/admin/players/${String(player.uid)}/erase`,
          body: { confirm: player.username },
        };
      },
      status: 200,
    },
    'POST /admin/players/:uid/ban': {
      call: () => ({ method: 'POST', path: `/admin/players/${fx.bannable}/ban`, body: { reason: 'walk' } }),
      status: 200,
    },
    'DELETE /admin/players/:uid/ban': {
      call: () => ({ method: 'DELETE', path: `/admin/players/${fx.bannable}/ban` }),
      status: 204,
    },
    'PUT /admin/players/:uid/banstate': {
      call: () => ({ method: 'PUT', path: `/admin/players/${fx.bannable}/banstate`, body: { banstate: 1 } }),
      status: 200,
    },
    'GET /admin/servers': get('/admin/servers'),
    'GET /admin/realtime/connections': get('/admin/realtime/connections'),
    'POST /admin/servers': {
      call: () => ({ method: 'POST', path: '/admin/servers', body: { name: uniqueName('walk'), country: 'DE' } }),
      status: 201,
    },
    'POST /admin/servers/:serverID/bootstrap-token': {
      call: () => ({ method: 'POST', path: `/admin/servers/${fx.offlineServerId}/bootstrap-token` }),
      status: 201,
    },
    'POST /admin/servers/:serverID/logout': {
      call: () => ({ method: 'POST', path: `/admin/servers/${fx.offlineServerId}/logout` }),
      status: 200,
    },
    'PUT /admin/maintenance': {
      call: () => ({ method: 'PUT', path: '/admin/maintenance', body: { enabled: false, message: '' } }),
      status: 200,
    },
    'PUT /admin/plugin-policy': {
      call: () => ({
        method: 'PUT',
        path: '/admin/plugin-policy',
        body: { minPluginVersion: 0, latestPluginVersion: 9, allowedPluginSHAs: [], downUrl: '' },
      }),
      status: 200,
    },
    'PUT /admin/session-handover': {
      call: () => ({ method: 'PUT', path: '/admin/session-handover', body: { mode: 'off' } }),
      status: 200,
    },
    'GET /admin/charts': get('/admin/charts'),
    'GET /admin/collections': get('/admin/collections'),
    'PUT /admin/charts': {
      call: () => ({
        method: 'PUT',
        path: '/admin/charts',
        body: [{ levelId: fx.levelId, name: 'Walk', difficultyConstant: 10, version: '1', active: true }],
      }),
      status: 200,
    },
    'PUT /admin/collections': {
      call: () => ({
        method: 'PUT',
        path: '/admin/collections',
        body: [
          { key: 'rhythmc:title.walk', type: 'title', unlockMethod: { type: 'MANUAL' }, properties: { title: 'Walk' } },
        ],
      }),
      status: 200,
    },
    'GET /admin/packs': get('/admin/packs'),
    'PUT /admin/packs': {
      call: () => ({
        method: 'PUT',
        path: '/admin/packs',
        body: [{ name: 'walk', displayName: 'Walk', type: 'CHAPTER', availableSongs: [1], file: 'packs/p.zip' }],
      }),
      status: 200,
    },
    'DELETE /admin/packs/:name': {
      call: async (ctx) => {
        const name = uniqueName('gone');
        if (ctx.allowed)
          await asAdmin('PUT', '/admin/packs', [
            { name, displayName: 'Gone', type: 'CHAPTER', availableSongs: [], file: 'packs/p.zip' },
          ]);
        return { method: 'DELETE', path: `/admin/packs/${name}` };
      },
      status: 204,
    },
    'POST /admin/resources/rescan': { call: () => ({ method: 'POST', path: '/admin/resources/rescan' }), status: 200 },
    'POST /admin/ratings/recompute': {
      call: () => ({ method: 'POST', path: '/admin/ratings/recompute' }),
      status: 200,
    },
    // The embedded database's backup (the tarball); on PostgreSQL 409 (use pg_dump), still after the permission check.
    'POST /admin/database/backup': {
      call: () => ({ method: 'POST', path: '/admin/database/backup' }),
      status: testDatabaseServerUrl() ? 409 : 200,
    },
    'GET /admin/boards/atp': get('/admin/boards/atp'),
    'GET /admin/boards/charts/:levelId': get(`/admin/boards/charts/${fx.levelId}`),
    'GET /admin/boards/atp/among': get('/admin/boards/atp/among?uids=1,2'),
    'GET /admin/boards/charts/:levelId/among': get(`/admin/boards/charts/${fx.levelId}/among?uids=1,2`),
    'GET /admin/plays': get('/admin/plays'),
    'GET /admin/plays/:id': get(`/admin/plays/${fx.playId}`),
    'POST /admin/plays/:id/approve': {
      call: () => ({ method: 'POST', path: `/admin/plays/${fx.playId}/approve` }),
      status: 200,
    },
    'POST /admin/plays/:id/void': {
      call: () => ({ method: 'POST', path: `/admin/plays/${fx.playId}/void`, body: { reason: 'walk' } }),
      status: 200,
    },
    'POST /admin/plays/:id/restore': {
      call: () => ({ method: 'POST', path: `/admin/plays/${fx.playId}/restore` }),
      status: 200,
    },
    'GET /admin/audit': get('/admin/audit'),
    'GET /admin/me': get('/admin/me'),
    'DELETE /admin/session': {
      call: () => ({ method: 'DELETE', path: '/admin/session' }),
      status: 204,
      needs: 'session',
      tokenStatus: 400,
    },
    'PUT /admin/me/password': {
      call: (ctx) => ({
        method: 'PUT',
        path: '/admin/me/password',
        body: { currentPassword: ctx.staff?.password ?? 'x'.repeat(15), newPassword: staffPassword() },
      }),
      status: 204,
      needs: 'session',
    },
    // The second factor: set up (POST), confirmed (PUT, after a set-up of its own) and turned off.
    'POST /admin/me/totp': {
      call: (ctx) => ({ method: 'POST', path: '/admin/me/totp', body: { password: ctx.staff?.password ?? 'x' } }),
      status: 201,
      needs: 'session',
    },
    'PUT /admin/me/totp': {
      call: async (ctx) => {
        let code = '000000';
        if (ctx.allowed && ctx.caller === 'session' && ctx.session && ctx.staff) {
          const started = await ctx.session.client.post('/admin/me/totp', { password: ctx.staff.password });
          if (started.status !== 201) throw new Error(`POST /admin/me/totp: ${started.status} ${started.text}`);
          code = totpCode(base32Decode(started.body.secret as string), totpStep(Date.now()));
        }
        return { method: 'PUT', path: '/admin/me/totp', body: { code } };
      },
      status: 204,
      needs: 'session',
    },
    'DELETE /admin/me/totp': {
      call: (ctx) => ({ method: 'DELETE', path: '/admin/me/totp', body: { password: ctx.staff?.password ?? 'x' } }),
      status: 204,
      needs: 'session',
    },
    'GET /admin/me/tokens': { ...get('/admin/me/tokens'), needs: 'account' },
    'POST /admin/me/tokens': {
      call: () => ({ method: 'POST', path: '/admin/me/tokens', body: { name: 'walk' } }),
      status: 201,
      needs: 'session',
    },
    'DELETE /admin/me/tokens/:id': {
      call: async (ctx) => {
        const id = ctx.session ? (await createToken(ctx.session, { name: 'to revoke' })).id : 1;
        return { method: 'DELETE', path: `/admin/me/tokens/${id}` };
      },
      status: 204,
      needs: 'account',
    },
    'GET /admin/api-keys': get('/admin/api-keys'),
    'POST /admin/api-keys': {
      call: () => ({
        method: 'POST',
        path: '/admin/api-keys',
        body: { name: uniqueName('walk'), scopes: ['read:boards'] },
      }),
      status: 201,
    },
    'PATCH /admin/api-keys/:id': {
      call: async (ctx) => {
        const id = ctx.allowed
          ? (await asAdmin('POST', '/admin/api-keys', { name: uniqueName('k'), scopes: ['read:boards'] })).id
          : 1;
        return { method: 'PATCH', path: `/admin/api-keys/${String(id)}`, body: { scopes: ['read:players'] } };
      },
      status: 200,
    },
    'DELETE /admin/api-keys/:id': {
      call: async (ctx) => {
        const id = ctx.allowed
          ? (await asAdmin('POST', '/admin/api-keys', { name: uniqueName('k'), scopes: ['read:boards'] })).id
          : 1;
        return { method: 'DELETE', path: `/admin/api-keys/${String(id)}` };
      },
      status: 204,
    },
    'GET /admin/webhooks': get('/admin/webhooks'),
    'POST /admin/webhooks': {
      call: () => ({
        method: 'POST',
        path: '/admin/webhooks',
        body: { name: uniqueName('walk'), url: 'https://webhook.invalid/walk', events: ['player.banned'] },
      }),
      status: 201,
    },
    'PATCH /admin/webhooks/:id': {
      call: async (ctx) => {
        const id = ctx.allowed ? (await asAdmin('POST', '/admin/webhooks', webhookBody())).id : 1;
        return { method: 'PATCH', path: `/admin/webhooks/${String(id)}`, body: { events: ['player.unbanned'] } };
      },
      status: 200,
    },
    'DELETE /admin/webhooks/:id': {
      call: async (ctx) => {
        const id = ctx.allowed ? (await asAdmin('POST', '/admin/webhooks', webhookBody())).id : 1;
        return { method: 'DELETE', path: `/admin/webhooks/${String(id)}` };
      },
      status: 204,
    },
    'POST /admin/webhooks/:id/secret': {
      call: async (ctx) => {
        const id = ctx.allowed ? (await asAdmin('POST', '/admin/webhooks', webhookBody())).id : 1;
        return { method: 'POST', path: `/admin/webhooks/${String(id)}/secret`, body: { overlapSeconds: 60 } };
      },
      status: 201,
    },
    'GET /admin/webhooks/:id/deliveries': {
      call: async (ctx) => {
        const id = ctx.allowed ? (await asAdmin('POST', '/admin/webhooks', webhookBody())).id : 1;
        return { method: 'GET', path: `/admin/webhooks/${String(id)}/deliveries` };
      },
      status: 200,
    },
    'GET /admin/staff': get('/admin/staff'),
    'GET /admin/staff/:id': get(`/admin/staff/${fx.target.id}`),
    'POST /admin/staff': {
      call: () => ({
        method: 'POST',
        path: '/admin/staff',
        body: { name: staffName('walk'), role: 'support', password: staffPassword() },
      }),
      status: 201,
      // A new account's password would outlive a leaked token's revocation.
      needs: 'not-token',
    },
    'PATCH /admin/staff/:id': {
      call: async (ctx) => {
        const id = ctx.allowed ? (await createStaff(app, 'support')).id : fx.target.id;
        return { method: 'PATCH', path: `/admin/staff/${id}`, body: { role: 'moderator' } };
      },
      status: 200,
    },
    'DELETE /admin/staff/:id': {
      call: async (ctx) => {
        const id = ctx.allowed ? (await createStaff(app, 'support')).id : fx.target.id;
        return { method: 'DELETE', path: `/admin/staff/${id}` };
      },
      status: 200,
    },
    'DELETE /admin/staff/:id/tokens/:tokenId': {
      call: async (ctx) => {
        if (!ctx.allowed) return { method: 'DELETE', path: `/admin/staff/${fx.target.id}/tokens/1` };
        const holder = await signIn(app, await createStaff(app, 'read-only'));
        const token = await createToken(holder);
        return { method: 'DELETE', path: `/admin/staff/${holder.staff.id}/tokens/${token.id}` };
      },
      status: 204,
    },
  };
}
