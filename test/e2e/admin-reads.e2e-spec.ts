/* eslint-disable @typescript-eslint/no-unsafe-return, @typescript-eslint/no-unsafe-call -- list items are untyped JSON, compared field by field */
import { createPlayer, loginPlayer, onlinePlayer, randomUuid, TestPlayer } from '../factories/player.factory';
import { gameplayPayload } from '../factories/upload.factory';
import { createServer, loginServer, onlineServer, uniqueName } from '../factories/server.factory';
import { badField } from '../support/bad-request';
import { ADMIN_TOKEN, startTestApp, TestApp } from '../support/test-app';
import { WsClient } from '../support/ws-client';
import { eventually } from '../support/wait';

const LOCAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;

/** Every item of a list, following nextCursor with `limit` per page; also returns the page sizes. */
async function walk(
  app: TestApp,
  path: string,
  query: Record<string, string | number>,
  limit: number,
): Promise<{ items: any[]; pages: number[] }> {
  const items: any[] = [];
  const pages: number[] = [];
  let cursor: string | null = null;
  do {
    const response: { status: number; body: any } = await app.admin.get(path, {
      query: { ...query, limit, ...(cursor ? { cursor } : {}) },
    });
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(['items', 'nextCursor']);
    items.push(...response.body.items);
    pages.push(response.body.items.length);
    cursor = response.body.nextCursor;
  } while (cursor !== null);
  return { items, pages };
}

describe('Admin reads', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  describe('every list', () => {
    const lists = [
      '/admin/players',
      '/admin/bans',
      '/admin/servers',
      '/admin/charts',
      '/admin/collections',
      '/admin/audit',
    ];

    it.each(lists)('%s: 401 with a wrong token', async (path) => {
      const response = await app.http.get(path, { token: 'wrong-admin-token-xxxxxxxx' });
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ error: 'UNAUTHORIZED', message: 'Invalid admin token' });
    });

    it.each(lists)(
      '%s: refuses a bad limit, a foreign or broken cursor, an unknown or repeated parameter',
      async (path) => {
        for (const limit of ['0', '201', 'x', '1.5', '']) {
          const response = await app.admin.get(`${path}?limit=${limit}`);
          expect({ limit, status: response.status, body: response.body }).toEqual({
            limit,
            status: 400,
            body: badField('limit', 'must be an integer from 1 to 200'),
          });
        }
        const foreign = Buffer.from(path.endsWith('players') ? 'bans:5' : 'players:5').toString('base64url');
        for (const cursor of [foreign, '!!', 'bm9wZQ', Buffer.from('players:x').toString('base64url')]) {
          const response = await app.admin.get(`${path}?cursor=${cursor}`);
          expect({ cursor, status: response.status, body: response.body }).toEqual({
            cursor,
            status: 400,
            body: badField('cursor', 'must be the nextCursor of a previous page of this list'),
          });
        }
        const unknown = await app.admin.get(`${path}?sort=desc`);
        expect({ status: unknown.status, body: unknown.body }).toEqual({
          status: 400,
          body: {
            error: 'BAD_REQUEST',
            message: 'sort: property sort should not exist',
            errors: [{ field: 'sort', message: 'unknown field' }],
          },
        });
        const repeated = await app.admin.get(`${path}?cursor=a&cursor=b`);
        expect({ status: repeated.status, body: repeated.body }).toEqual({
          status: 400,
          body: badField('cursor', 'must be the nextCursor of a previous page of this list'),
        });
      },
    );
  });

  describe('forged cursors', () => {
    const INT_MAX = 2_147_483_647n;
    const BIGINT_MAX = 9_223_372_036_854_775_807n;
    const cursorOf = (text: string) => Buffer.from(text).toString('base64url');
    /** Each cursor-paginated list: its path, the name in its cursors, and the largest key of its type. */
    const lists = [
      { path: '/admin/players', list: 'players', first: 1n, last: BIGINT_MAX },
      { path: '/admin/bans', list: 'bans', first: 1n, last: BIGINT_MAX },
      { path: '/admin/servers', list: 'servers', first: 1n, last: INT_MAX },
      { path: '/admin/charts', list: 'charts', first: 0n, last: INT_MAX },
      { path: '/admin/audit', list: 'audit', first: 1n, last: BIGINT_MAX },
      { path: '/admin/plays', list: 'plays', first: 1n, last: BIGINT_MAX },
      { path: '/admin/collections', list: 'collections', first: null, last: null },
    ];
    const validKeyOf = (entry: (typeof lists)[number]) => (entry.last === null ? 'rhythmc:title.x' : '1');
    const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    /**
     * A valid cursor's text in two encodings the service never writes, which decode to the same
     * text: padded, and with a spare bit of the last character set.
     */
    const nonCanonical = (entry: (typeof lists)[number]): string[] => {
      const text = [`${entry.list}:${validKeyOf(entry)}`, `${entry.list}:${validKeyOf(entry)}1`].find(
        (candidate) => candidate.length % 3 !== 0,
      ) as string;
      const canonical = cursorOf(text);
      const lastBits = BASE64URL.indexOf(canonical.slice(-1));
      const strayBit = `${canonical.slice(0, -1)}${BASE64URL[lastBits | 1]}`;
      expect(Buffer.from(strayBit, 'base64url').toString()).toBe(text);
      return [Buffer.from(text).toString('base64'), strayBit];
    };
    const refused = badField('cursor', 'must be the nextCursor of a previous page of this list');
    const path = (list: string, cursor: string) => `${list}?cursor=${encodeURIComponent(cursor)}`;

    it.each(lists)('$path: 400 for every cursor that is not a key of its own list', async (entry) => {
      const wrongShapes = [
        '',
        'abc',
        'null',
        'true',
        '[1]',
        '{"id":1}',
        '1:2',
        ' 1',
        '1 ',
        '\u00001',
        'x'.repeat(290),
        ...(entry.last === null
          ? ['1', 'NOT A KEY', 'rhythmc:title', `rhythmc:title.${'x'.repeat(128)}`, 'rhythmc:title.x\n']
          : [
              '-1',
              '1.5',
              '+1',
              '0x10',
              '1e3',
              '01',
              `${entry.first - 1n}`,
              `${entry.last + 1n}`,
              '9223372036854775808',
              '99999999999999999999',
              '9'.repeat(200),
            ]),
      ];
      const forged = [
        ...wrongShapes.map((key) => cursorOf(`${entry.list}:${key}`)),
        // Another list's cursor, each.
        ...lists.filter((other) => other !== entry).map((other) => cursorOf(`${other.list}:${validKeyOf(other)}`)),
        cursorOf(entry.list),
        cursorOf(`${entry.list.toUpperCase()}:${validKeyOf(entry)}`),
        ...nonCanonical(entry),
        'A'.repeat(401),
      ];
      const answers = [];
      for (const cursor of forged) {
        const response = await app.admin.get(path(entry.path, cursor));
        answers.push({ cursor, status: response.status, body: response.body });
      }
      expect(answers).toEqual(forged.map((cursor) => ({ cursor, status: 400, body: refused })));
    });

    it.each(lists)("$path: 200 for a well-formed key of its own type, up to the type's largest", async (entry) => {
      const keys = entry.last === null ? ['rhythmc:title.x', 'zz:zz.zz'] : [`${entry.first}`, `${entry.last}`];
      for (const key of keys) {
        const response = await app.admin.get(path(entry.path, cursorOf(`${entry.list}:${key}`)));
        expect({ key, status: response.status, nextCursor: response.body.nextCursor }).toEqual({
          key,
          status: 200,
          nextCursor: null,
        });
      }
    });
  });

  describe('GET /admin/players', () => {
    const prefix = `Adm_${Date.now().toString(36)}`;
    let players: TestPlayer[];
    let online: Awaited<ReturnType<typeof onlinePlayer>>;
    let server: Awaited<ReturnType<typeof onlineServer>>;

    beforeAll(async () => {
      server = await onlineServer(app, { name: uniqueName('lobby') });
      players = [];
      for (let i = 0; i < 5; i++)
        players.push(
          await createPlayer(app, {
            username: `${prefix}_${i}`,
            ...(i === 0 ? { uuid: randomUuid(), displayName: 'Zero' } : {}),
          }),
        );
      online = await loginPlayer(app, server, players[1]);
      expect(
        (
          await app.admin.post(`/admin/players/${players[2].uid}/ban`, {
            reason: 'cheating',
            until: '2099-01-01T00:00:00',
          })
        ).status,
      ).toBe(200);
      expect((await app.admin.put(`/admin/players/${players[3].uid}/banstate`, { banstate: 2 })).status).toBe(200);
    });

    it('pages through a username prefix (case-insensitive) with the cursor, by uid', async () => {
      const { items, pages } = await walk(app, '/admin/players', { username: prefix.toLowerCase() }, 2);
      expect(pages).toEqual([2, 2, 1]);
      expect(items.map((item) => item.uid)).toEqual(players.map((player) => player.uid));
      const [uuidRow] = await app.sql<{ uuid: string }>('SELECT uuid FROM player WHERE uid = $1', [players[0].uid]);
      expect(items[0]).toEqual({
        uid: players[0].uid,
        username: `${prefix}_0`,
        displayName: 'Zero',
        uuid: uuidRow.uuid,
        banstate: 0,
        ban: null,
        online: null,
        createdAt: expect.stringMatching(LOCAL),
      });
      expect(items[1].online).toEqual({ serverID: server.serverID, serverName: server.server.serverName });
      expect(items[2].ban).toEqual({
        banId: expect.any(Number),
        reason: 'cheating',
        until: '2099-01-01T00:00:00',
        createdAt: expect.stringMatching(LOCAL),
      });
      expect(items[3].banstate).toBe(2);
      expect(online.uid).toBe(players[1].uid);
    });

    it('treats _ in the prefix literally and finds by exact uuid and uid', async () => {
      expect(
        (await app.admin.get('/admin/players', { query: { username: `${prefix}_1` } })).body.items.map(
          (item: any) => item.uid,
        ),
      ).toEqual([players[1].uid]);
      const [{ uuid }] = await app.sql<{ uuid: string }>('SELECT uuid FROM player WHERE uid = $1', [players[0].uid]);
      const byUuid = await app.admin.get('/admin/players', { query: { uuid: uuid.toUpperCase() } });
      expect(byUuid.body).toEqual({ items: [expect.objectContaining({ uid: players[0].uid })], nextCursor: null });
      const byUid = await app.admin.get('/admin/players', { query: { uid: players[4].uid } });
      expect(byUid.body).toEqual({
        items: [expect.objectContaining({ uid: players[4].uid, username: `${prefix}_4` })],
        nextCursor: null,
      });
      expect((await app.admin.get('/admin/players', { query: { uid: 9_000_000_000 } })).body).toEqual({
        items: [],
        nextCursor: null,
      });
    });

    it.each([
      ['username', 'a-b', 'username must be 1-32 characters of A-Z, a-z, 0-9 and _'],
      ['username', '', 'username must be 1-32 characters of A-Z, a-z, 0-9 and _'],
      ['uuid', 'not-a-uuid', 'uuid must be a UUID in 8-4-4-4-12 hexadecimal form'],
      ['uid', '0', 'uid must be a positive integer'],
      ['uid', '1e3', 'uid must be a positive integer'],
    ])('400 for %s=%s', async (name, value, message) => {
      const response = await app.admin.get(`/admin/players?${name}=${encodeURIComponent(value)}`);
      expect(response.status).toBe(400);
      expect(response.body).toEqual(badField(name, message.slice(name.length + 1)));
    });
  });

  describe('GET /admin/players/{uid}', () => {
    it('answers the whole profile: identity, options, bans, sessions, balance, ATP, bests, collections', async () => {
      const server = await onlineServer(app, { name: uniqueName('prof') });
      const player = await onlinePlayer(app, server, { displayName: 'Profiled' });
      expect(
        (
          await app.admin.put('/admin/charts', [
            { levelId: 4101, name: 'P', difficultyConstant: 10, version: '1.0', active: true },
          ])
        ).status,
      ).toBe(200);
      const payload = gameplayPayload(4101, Date.now());
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
      const economy = await app.http.post(
        '/player/economy',
        { uid: player.uid, accessToken: player.accessToken, wattHour: 700 },
        { token: server.accessToken },
      );
      expect(economy.status).toBe(200);
      expect((await app.admin.post(`/admin/players/${player.uid}/ban`, { reason: 'first' })).status).toBe(200);
      expect((await app.admin.delete(`/admin/players/${player.uid}/ban`)).status).toBe(204);
      const again = await loginPlayer(app, server, player);

      const response = await app.admin.get(`/admin/players/${player.uid}`);
      expect(response.status).toBe(200);
      const [best] = await app.sql<{ acc: number; rating: number }>(
        'SELECT acc, rating FROM player_chart_best WHERE uid = $1',
        [player.uid],
      );
      const [rating] = await app.sql<{ atp: string }>('SELECT atp FROM player_rating WHERE uid = $1', [player.uid]);
      const session = (live: boolean, reason: string | null) => ({
        sessionId: expect.any(String),
        mode: 'TOKEN',
        proven: true,
        serverID: server.serverID,
        serverName: server.server.serverName,
        live,
        createdAt: expect.stringMatching(LOCAL),
        renewedAt: expect.stringMatching(LOCAL),
        tokenExpiresAt: expect.stringMatching(LOCAL),
        loggedOutAt: live ? null : expect.stringMatching(LOCAL),
        logoutReason: reason,
      });
      expect(response.body).toEqual({
        uid: player.uid,
        username: player.username,
        displayName: 'Profiled',
        uuid: null,
        banstate: 0,
        dataVersion: 1,
        createdAt: expect.stringMatching(LOCAL),
        updatedAt: expect.stringMatching(LOCAL),
        options: {
          continueEnabled: false,
          sound: null,
          songSelectionState: null,
          extraOptions: {},
          prefixKey: null,
          suffixKey: null,
        },
        bans: [
          {
            banId: expect.any(Number),
            reason: 'first',
            message: 'You are banned: first',
            until: null,
            createdAt: expect.stringMatching(LOCAL),
            liftedAt: expect.stringMatching(LOCAL),
            active: false,
          },
        ],
        sessions: [session(true, null), session(false, 'banned')],
        takeovers: [],
        balance: {
          uid: player.uid,
          wattHour: 700,
          updatedAt: expect.stringMatching(LOCAL),
          history: [
            {
              id: expect.any(Number),
              previousWattHour: null,
              wattHour: 700,
              serverID: server.serverID,
              time: expect.stringMatching(LOCAL),
            },
          ],
          nextBefore: null,
        },
        atp: Number(rating.atp),
        siteRank: upload.body.siteRank,
        bests: [{ levelId: 4101, acc: best.acc, rating: best.rating, trackRank: upload.body.trackRank }],
        bestCount: 1,
        collections: [],
      });
      expect(again.uid).toBe(player.uid);
    });

    it('answers a player who never played with empty parts', async () => {
      const player = await createPlayer(app);
      const response = await app.admin.get(`/admin/players/${player.uid}`);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        sessions: [],
        bans: [],
        atp: null,
        siteRank: null,
        bests: [],
        bestCount: 0,
        collections: [],
        balance: { wattHour: null, history: [], nextBefore: null },
      });
    });

    it('404 for an unknown uid, 400 for a bad one', async () => {
      expect((await app.admin.get('/admin/players/9000000000')).body).toEqual({
        error: 'NOT_FOUND',
        message: 'No player with uid 9000000000',
      });
      const badUid = await app.admin.get('/admin/players/0x1');
      expect(badUid.status).toBe(400);
      expect(badUid.body).toEqual(badField('uid', 'must be a positive integer'));
    });
  });

  describe('GET /admin/bans', () => {
    it('pages through active bans newest first, filters by uid, leaves out lifted and expired ones', async () => {
      const banned: TestPlayer[] = [];
      for (let i = 0; i < 3; i++) {
        const player = await createPlayer(app);
        expect(
          (await app.admin.post(`/admin/players/${player.uid}/ban`, { reason: `r${i}`, message: `m${i}` })).status,
        ).toBe(200);
        banned.push(player);
      }
      const lifted = await createPlayer(app);
      await app.admin.post(`/admin/players/${lifted.uid}/ban`, { reason: 'gone' });
      await app.admin.delete(`/admin/players/${lifted.uid}/ban`);
      const expired = await createPlayer(app);
      await app.admin.post(`/admin/players/${expired.uid}/ban`, { reason: 'old', until: '2099-01-01T00:00:00' });
      await app.sql(`UPDATE player_ban SET until = now() - interval '1 minute' WHERE uid = $1`, [expired.uid]);

      const { items } = await walk(app, '/admin/bans', {}, 2);
      const expected = await app.sql<{ id: string }>(
        `SELECT id FROM player_ban WHERE lifted_at IS NULL AND (until IS NULL OR until > now()) ORDER BY id DESC`,
      );
      expect(items.map((item) => String(item.banId))).toEqual(expected.map((row) => row.id));
      expect(items.map((item) => item.uid)).not.toContain(lifted.uid);
      expect(items.map((item) => item.uid)).not.toContain(expired.uid);
      expect(items.slice(0, 3).map((item) => item.uid)).toEqual(banned.map((player) => player.uid).reverse());

      const one = await app.admin.get('/admin/bans', { query: { uid: banned[1].uid } });
      expect(one.body).toEqual({
        items: [
          {
            banId: expect.any(Number),
            uid: banned[1].uid,
            username: banned[1].username,
            reason: 'r1',
            message: 'm1',
            until: null,
            createdAt: expect.stringMatching(LOCAL),
          },
        ],
        nextCursor: null,
      });
      expect((await app.admin.get('/admin/bans?uid=-1')).body).toEqual(badField('uid', 'must be a positive integer'));
    });
  });

  describe('GET /admin/servers', () => {
    it('pages through servers with online state, players online, latest login and the open WebSocket', async () => {
      const fresh = await createServer(app, { name: uniqueName('never'), ip: '198.51.100.9' });
      const live = await onlineServer(app, { name: uniqueName('live') });
      await onlinePlayer(app, live);
      await onlinePlayer(app, live);
      const gone = await createServer(app, { name: uniqueName('gone') });
      const goneSession = await loginServer(app, gone, { pluginVersion: 7 });
      expect((await app.http.post('/server/logout', undefined, { token: goneSession.accessToken })).status).toBe(204);
      const ws = await WsClient.connect(app.baseUrl, live.accessToken);
      // The connection row is written just after the upgrade.
      await eventually(
        async () =>
          (await app.sql('SELECT 1 FROM ws_connection WHERE server_id = $1 AND closed_at IS NULL', [live.serverID]))
            .length > 0,
        'the ws_connection row',
      );

      const { items, pages } = await walk(app, '/admin/servers', {}, 2);
      const count = await app.sql<{ n: number }>('SELECT count(*)::int AS n FROM game_server');
      expect(items.length).toBe(count[0].n);
      expect(pages.every((size) => size <= 2)).toBe(true);
      expect(items.map((item) => item.serverID)).toEqual([...items.map((item) => item.serverID)].sort((a, b) => a - b));
      const byId = new Map(items.map((item) => [item.serverID, item]));
      expect(byId.get(fresh.serverID)).toEqual({
        serverID: fresh.serverID,
        serverName: fresh.serverName,
        country: 'DE',
        ip: '198.51.100.9',
        online: false,
        playersOnline: 0,
        pluginVersion: null,
        address: null,
        lastLogin: null,
        realtime: null,
        sessionConflicts24h: { takenOver: 0, onlineRefused: 0, keptOut: 0 },
        createdAt: expect.stringMatching(LOCAL),
      });
      expect(byId.get(live.serverID)).toEqual(
        expect.objectContaining({
          online: true,
          playersOnline: 2,
          pluginVersion: 10,
          address: '127.0.0.1',
          lastLogin: expect.stringMatching(LOCAL),
          realtime: { instanceId: expect.any(String), connectedAt: expect.stringMatching(LOCAL) },
        }),
      );
      expect(byId.get(gone.serverID)).toEqual(
        expect.objectContaining({ online: false, playersOnline: 0, pluginVersion: 7, realtime: null }),
      );

      const onlineOnly = await walk(app, '/admin/servers', { online: 'true' }, 200);
      expect(onlineOnly.items.map((item) => item.serverID)).toContain(live.serverID);
      expect(onlineOnly.items.every((item) => item.online)).toBe(true);
      const offline = await walk(app, '/admin/servers', { online: 'false' }, 200);
      expect(offline.items.map((item) => item.serverID)).toEqual(
        expect.arrayContaining([fresh.serverID, gone.serverID]),
      );
      expect(offline.items.every((item) => !item.online)).toBe(true);
      expect((await app.admin.get('/admin/servers?online=yes')).body).toEqual(
        badField('online', 'must be true or false'),
      );
      ws.close();
    });
  });

  describe('GET /admin/charts and /admin/collections', () => {
    it('lists charts as stored, inactive and placeholders included, filtered by active', async () => {
      const charts = [5001, 5002, 5003].map((levelId) => ({
        levelId,
        name: `C${levelId}`,
        difficultyConstant: 11.5,
        version: '2.0',
        active: levelId !== 5002,
      }));
      expect((await app.admin.put('/admin/charts', charts)).status).toBe(200);
      await app.sql(
        `INSERT INTO chart (level_id, name, difficulty_constant, version, active) VALUES (5004, 'Level 5004', 0, 'unknown', false)`,
      );
      const { items, pages } = await walk(app, '/admin/charts', {}, 3);
      const stored = await app.sql<{ level_id: number }>('SELECT level_id FROM chart ORDER BY level_id');
      expect(items.map((item) => item.levelId)).toEqual(stored.map((row) => row.level_id));
      expect(pages.every((size) => size <= 3)).toBe(true);
      expect(items.find((item) => item.levelId === 5002)).toEqual({
        levelId: 5002,
        name: 'C5002',
        difficultyConstant: 11.5,
        version: '2.0',
        active: false,
        placeholder: false,
        notes: null,
        createdAt: expect.stringMatching(LOCAL),
        updatedAt: expect.stringMatching(LOCAL),
      });
      const inactive = await walk(app, '/admin/charts', { active: 'false' }, 200);
      expect(inactive.items.map((item) => item.levelId)).toEqual(expect.arrayContaining([5002, 5004]));
      expect(inactive.items.every((item) => !item.active)).toBe(true);
      expect((await app.admin.get('/admin/charts?active=1')).body).toEqual(badField('active', 'must be true or false'));
    });

    it('lists collections as stored by key in byte order, filtered by type', async () => {
      const collections = ['rhythmc:title.b', 'rhythmc:title.a', 'rhythmc:title.B', 'rhythmc:tag.x'].map((key) => ({
        key,
        type: key.includes('tag') ? 'tag' : 'title',
        unlockMethod: { type: 'MANUAL' },
        properties: { title: key },
      }));
      const put = await app.admin.put('/admin/collections', collections);
      expect(put.status).toBe(200);
      const { items } = await walk(app, '/admin/collections', {}, 1);
      const stored = await app.sql<{ key: string }>('SELECT key FROM collection ORDER BY key COLLATE "C"');
      expect(items.map((item) => item.key)).toEqual(stored.map((row) => row.key));
      expect(items.map((item) => item.key)).toEqual(
        expect.arrayContaining(['rhythmc:title.B', 'rhythmc:title.a', 'rhythmc:title.b']),
      );
      const titles = await walk(app, '/admin/collections', { type: 'title' }, 2);
      expect(titles.items.map((item) => item.key)).toEqual(['rhythmc:title.B', 'rhythmc:title.a', 'rhythmc:title.b']);
      expect(titles.items[0]).toEqual({
        key: 'rhythmc:title.B',
        type: 'title',
        unlockMethod: { type: 'MANUAL' },
        properties: { title: 'rhythmc:title.B' },
        createdAt: expect.stringMatching(LOCAL),
        updatedAt: expect.stringMatching(LOCAL),
      });
      expect((await app.admin.get('/admin/collections?type=a%20b')).body).toEqual(
        badField('type', 'must be 1-32 characters of A-Z, a-z, 0-9, _, ., : and -'),
      );
    });
  });
});

describe('Admin reads without ADMIN_TOKEN', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ env: { ADMIN_TOKEN: '' } });
  });
  afterAll(async () => {
    await app.close();
  });

  it.each([
    '/admin/players',
    '/admin/players/1',
    '/admin/bans',
    '/admin/servers',
    '/admin/charts',
    '/admin/collections',
    '/admin/audit',
  ])('GET %s answers 404', async (path) => {
    const response = await app.http.get(path, { token: ADMIN_TOKEN });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ error: 'NOT_FOUND', message: 'Not found' });
  });
});
