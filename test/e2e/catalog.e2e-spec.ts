import { CatalogService } from '../../src/catalog/catalog.service';
import { formatLocalDateTime } from '../../src/common/time';
import { TransactionService } from '../../src/database/transaction.service';
import { createPlayer, loginPlayer, onlinePlayer, TestPlayerSession } from '../factories/player.factory';
import { onlineServer } from '../factories/server.factory';
import { gameplayPayload, uploadPlay } from '../factories/upload.factory';
import { startTestApp, TestApp } from '../support/test-app';
import { badField, badLines, badRequest } from '../support/bad-request';
import { MAX_PLAYER_COLLECTIONS } from '../../src/catalog/catalog.rules';

type OnlineServer = Awaited<ReturnType<typeof onlineServer>>;

const starTitle = {
  key: 'rhythmc:title.star',
  type: 'title',
  unlockMethod: {
    type: 'ACHIEVEMENT',
    name: 'Star',
    description: 'Clear three charts',
    mode: 'ALL',
    events: ['CHART_CLEAR'],
    info: { icon: 'NETHER_STAR' },
    values: { count: 3 },
    player: { level: { operator: 'EQUALS', value: 3 } },
    conditions: [{ type: 'CLEARS', min: 3 }],
    methods: [],
    grants: ['rhythmc:tag.red'],
    defaultUnlocked: false,
    hideCondition: true,
  },
  properties: { title: '&6★ Star', description: ['Cleared', 'three charts'], rarity: 'EPIC', position: true },
};
const redTag = {
  key: 'rhythmc:tag.red',
  type: 'tag',
  unlockMethod: { type: 'MANUAL' },
  properties: { title: '&cRed', description: 'A red tag', rarity: 'COMMON', position: false },
};
const arena = {
  key: 'rhythmc:arena.sky',
  type: 'arena',
  unlockMethod: { type: 'MANUAL', defaultUnlocked: true },
  properties: {},
};

describe('Catalog: collections, unlock sync, charts', () => {
  let app: TestApp;
  let server: OnlineServer;

  beforeAll(async () => {
    app = await startTestApp();
    server = await onlineServer(app);
  });
  afterAll(async () => {
    await app.close();
  });

  const granted = async (uid: number) =>
    (
      await app.sql<{ collection_key: string }>(
        'SELECT collection_key FROM player_collection WHERE uid = $1 ORDER BY collection_key COLLATE "C"',
        [uid],
      )
    ).map((row) => row.collection_key);
  const sync = (body: Record<string, unknown>, token: string | null = server.accessToken) =>
    app.http.post('/player/collections', body, { token });

  describe('PUT /admin/collections and GET /server/collections', () => {
    it('lists nothing on a fresh catalog', async () => {
      const response = await app.http.get('/server/collections', { token: server.accessToken });
      expect(response.status).toBe(200);
      expect(response.body).toEqual([]);
    });

    it('upserts a batch, stores the unlock rule as given and lists it by key', async () => {
      const response = await app.admin.put('/admin/collections', [starTitle, redTag, arena]);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ upserted: 3 });

      const rows = await app.sql('SELECT key, type, unlock_method, properties FROM collection ORDER BY key');
      expect(rows).toEqual([
        { key: arena.key, type: 'arena', unlock_method: arena.unlockMethod, properties: {} },
        { key: redTag.key, type: 'tag', unlock_method: redTag.unlockMethod, properties: redTag.properties },
        { key: starTitle.key, type: 'title', unlock_method: starTitle.unlockMethod, properties: starTitle.properties },
      ]);
      const listed = await app.http.get('/server/collections', { token: server.accessToken });
      expect(listed.status).toBe(200);
      expect(listed.body).toEqual([arena, redTag, starTitle]);
    });

    it('replaces an existing definition', async () => {
      const changed = {
        ...redTag,
        unlockMethod: { type: 'ACHIEVEMENT', events: ['WIN'] },
        properties: { ...redTag.properties, rarity: 'RARE' },
      };
      expect((await app.admin.put('/admin/collections', [changed])).body).toEqual({ upserted: 1 });
      const listed = await app.http.get('/server/collections', { token: server.accessToken });
      expect(listed.body).toEqual([arena, changed, starTitle]);
      await app.admin.put('/admin/collections', [redTag]);
    });

    it('answers 400 naming the bad entry and field, and stores nothing of the batch', async () => {
      const response = await app.admin.put('/admin/collections', [
        { ...redTag, key: 'rhythmc:tag.fresh' },
        { ...starTitle, key: 'rhythmc:title.bad', properties: { title: '&eBad', position: 'prefix' } },
        { ...arena, key: 'not a key' },
      ]);
      expect(response.status).toBe(400);
      expect(response.body).toEqual(
        badLines(
          '[1] properties.position: must be a boolean',
          '[2] key: must look like namespace:category.id (at most 128 characters)',
        ),
      );
      expect(
        await app.sql(`SELECT key FROM collection WHERE key IN ('rhythmc:tag.fresh', 'rhythmc:title.bad')`),
      ).toEqual([]);
    });

    it.each([
      ['an object body', { key: 'x' }, 'The request body must be a JSON array'],
      [
        'a missing unlock rule type',
        [{ ...redTag, unlockMethod: {} }],
        '[0] unlockMethod.type: must be a non-empty string',
      ],
      [
        'a description of numbers',
        [{ ...redTag, properties: { title: 'x', description: [1] } }],
        '[0] properties.description: must be a string or an array of strings',
      ],
      ['a duplicate key', [redTag, redTag], '[1] key: duplicate of entry [0]'],
      ['an unknown field', [{ ...redTag, icon: 'x' }], '[0] icon: unknown field'],
      // class-transformer never copies a key named like a method of Object.prototype: still refused.
      ['a field named valueOf', [{ ...redTag, valueOf: 'x' }], '[0] valueOf: unknown field'],
    ])('answers 400 for %s', async (_label, body, message) => {
      const response = await app.admin.put('/admin/collections', body);
      expect(response.status).toBe(400);
      expect(response.body).toEqual(
        message.startsWith('The ') ? badRequest(message) : badLines(...message.split('; ')),
      );
    });

    it('answers 401 without the admin token, and to a server token', async () => {
      expect((await app.http.put('/admin/collections', [redTag])).status).toBe(401);
      const response = await app.http.put('/admin/collections', [redTag], { token: server.accessToken });
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ error: 'UNAUTHORIZED', message: 'Invalid admin token' });
    });

    it('answers 401 without a live server token', async () => {
      expect((await app.http.get('/server/collections')).body).toEqual({
        error: 'UNAUTHORIZED',
        message: 'Missing bearer server access token',
      });
      expect((await app.http.get('/server/collections', { token: 'nope' })).status).toBe(401);
    });
  });

  describe('POST /player/collections', () => {
    let player: TestPlayerSession;

    beforeAll(async () => {
      await app.admin.put('/admin/collections', [starTitle, redTag, arena]);
    });
    beforeEach(async () => {
      player = await onlinePlayer(app, server);
    });

    it('grants keys incrementally (204), never removing any; the profile lists them', async () => {
      const first = await sync({ uid: player.uid, accessToken: player.accessToken, collections: [starTitle.key] });
      expect(first.status).toBe(204);
      expect(first.text).toBe('');
      expect(await granted(player.uid)).toEqual([starTitle.key]);

      const second = await sync({
        uid: player.uid,
        accessToken: player.accessToken,
        collections: [redTag.key, arena.key],
      });
      expect(second.status).toBe(204);
      expect(await granted(player.uid)).toEqual([arena.key, redTag.key, starTitle.key]);

      const profile = await app.http.post(
        '/player/options',
        { uid: player.uid, accessToken: player.accessToken, options: {} },
        { token: server.accessToken },
      );
      expect(profile.body.data).toEqual({ collections: [arena.key, redTag.key, starTitle.key] });
    });

    it(`holds at most ${MAX_PLAYER_COLLECTIONS} collections a player: a sync past it is 400 and writes nothing`, async () => {
      const assets = (from: number, count: number) =>
        Array.from({ length: count }, (_, i) => `rhythmc:assets.bound.${player.uid}.${from + i}`);
      const half = MAX_PLAYER_COLLECTIONS / 2;
      const body = (collections: string[]) => ({ uid: player.uid, accessToken: player.accessToken, collections });
      expect((await sync(body(assets(0, half)))).status).toBe(204);
      expect((await sync(body([...assets(half, half - 1), starTitle.key]))).status).toBe(204);
      const held = async () =>
        (
          await app.sql<{ n: number }>('SELECT count(*)::int AS n FROM player_collection WHERE uid = $1', [player.uid])
        )[0].n;
      expect(await held()).toBe(MAX_PLAYER_COLLECTIONS);

      const over = await sync(body([redTag.key, ...assets(MAX_PLAYER_COLLECTIONS, 2), starTitle.key]));
      expect({ status: over.status, body: over.body }).toEqual({
        status: 400,
        body: badField(
          'collections',
          `would give the player ${MAX_PLAYER_COLLECTIONS + 3} collections; a player holds at most ${MAX_PLAYER_COLLECTIONS}`,
          'label',
        ),
      });
      expect(await held()).toBe(MAX_PLAYER_COLLECTIONS);
      expect(
        await app.sql('SELECT key FROM collection WHERE key = ANY($1)', [assets(MAX_PLAYER_COLLECTIONS, 2)]),
      ).toEqual([]);
      // Keys the player holds already are no step past it.
      expect((await sync(body([starTitle.key, ...assets(0, 10)]))).status).toBe(204);
    });

    it('is idempotent: the same keys twice (and twice in one list) are stored once', async () => {
      const body = {
        uid: player.uid,
        accessToken: player.accessToken,
        collections: [redTag.key, redTag.key, 'rhythmc:assets.songs.9'],
      };
      expect((await sync(body)).status).toBe(204);
      expect((await sync(body)).status).toBe(204);
      expect(await granted(player.uid)).toEqual(['rhythmc:assets.songs.9', redTag.key]);
    });

    it('answers a sync of keys the player owns with nothing written, and still checks and grants a list with one more', async () => {
      const rows = () =>
        app.sql<{ collection_key: string; granted_at: Date; xmin: string }>(
          'SELECT collection_key, granted_at, xmin::text FROM player_collection WHERE uid = $1 ORDER BY collection_key COLLATE "C"',
          [player.uid],
        );
      const owned = { uid: player.uid, accessToken: player.accessToken, collections: [starTitle.key, redTag.key] };
      expect((await sync(owned)).status).toBe(204);
      const before = await rows();
      expect(before.map((row) => row.collection_key)).toEqual([redTag.key, starTitle.key]);

      // Owned keys, in another order and repeated: the same row versions.
      const again = await sync({ ...owned, collections: [redTag.key, starTitle.key, redTag.key] });
      expect(again.status).toBe(204);
      expect(await rows()).toEqual(before);

      // Owned keys and an unknown non-asset key: refused as before, nothing granted.
      const refused = await sync({ ...owned, collections: [redTag.key, starTitle.key, 'rhythmc:title.gone'] });
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual(badLines('collections: unknown collection keys: rhythmc:title.gone'));
      expect(await rows()).toEqual(before);

      // Owned keys and a new asset key: the asset is created and granted, the owned rows untouched.
      const more = await sync({ ...owned, collections: [starTitle.key, 'rhythmc:assets.songs.31', redTag.key] });
      expect(more.status).toBe(204);
      expect(await granted(player.uid)).toEqual(['rhythmc:assets.songs.31', redTag.key, starTitle.key]);
      expect((await rows()).filter((row) => row.collection_key !== 'rhythmc:assets.songs.31')).toEqual(before);
    });

    it('accepts an empty list', async () => {
      expect((await sync({ uid: player.uid, accessToken: player.accessToken, collections: [] })).status).toBe(204);
      expect(await granted(player.uid)).toEqual([]);
    });

    it('creates an unknown rhythmc:assets. key as an asset collection that the listing never shows', async () => {
      const key = 'rhythmc:assets.songs.12';
      expect((await sync({ uid: player.uid, accessToken: player.accessToken, collections: [key] })).status).toBe(204);
      expect(await app.sql('SELECT type, unlock_method, properties FROM collection WHERE key = $1', [key])).toEqual([
        { type: 'asset', unlock_method: { type: 'MANUAL' }, properties: {} },
      ]);
      expect(await granted(player.uid)).toEqual([key]);
      const listed = await app.http.get<{ key: string; type: string }[]>('/server/collections', {
        token: server.accessToken,
      });
      expect(listed.body.map((c) => c.key)).not.toContain(key);
      expect(listed.body.every((c) => c.type !== 'asset')).toBe(true);
    });

    it('answers 400 listing unknown non-asset keys and grants nothing, not even the valid ones', async () => {
      const response = await sync({
        uid: player.uid,
        accessToken: player.accessToken,
        collections: [starTitle.key, 'rhythmc:assets.songs.77', 'rhythmc:title.nope', 'other:assets.x'],
      });
      expect(response.status).toBe(400);
      expect(response.body).toEqual(
        badLines('collections: unknown collection keys: rhythmc:title.nope, other:assets.x'),
      );
      expect(await granted(player.uid)).toEqual([]);
      expect(await app.sql(`SELECT key FROM collection WHERE key = 'rhythmc:assets.songs.77'`)).toEqual([]);
    });

    it.each([
      [
        'a malformed key',
        { collections: ['rhythmc:title.star', 'bad key', 'rhythmc:title'] },
        'collections must hold keys of the form namespace:category.id; malformed: "bad key", "rhythmc:title"',
      ],
      ['a missing uid', { uid: undefined }, 'uid must be a positive integer'],
      [
        'a missing accessToken',
        { accessToken: undefined },
        'accessToken should not be empty; accessToken must be a string',
      ],
      ['collections not an array', { collections: 'rhythmc:title.star' }, 'collections must be an array'],
      ['a non-string key', { collections: [5] }, 'collections: each value in collections must be a string'],
    ])('answers 400 for %s', async (_label, change, message) => {
      const response = await sync({
        uid: player.uid,
        accessToken: player.accessToken,
        collections: [redTag.key],
        ...change,
      });
      expect(response.status).toBe(400);
      expect(response.body.error).toBe('BAD_REQUEST');
      for (const part of message.split('; ')) expect(response.body.message).toContain(part);
      expect(await granted(player.uid)).toEqual([]);
    });

    it('answers 401 for an unknown token, a token of another uid, and a logged-out token', async () => {
      const other = await onlinePlayer(app, server);
      const unknown = await sync({ uid: player.uid, accessToken: 'not-a-token', collections: [redTag.key] });
      expect(unknown.status).toBe(401);
      expect(unknown.body).toEqual({ error: 'UNAUTHORIZED', message: 'Invalid or expired player access token' });
      const foreign = await sync({ uid: player.uid, accessToken: other.accessToken, collections: [redTag.key] });
      expect(foreign.body).toEqual({ error: 'UNAUTHORIZED', message: 'The access token does not belong to this uid' });

      await app.http.post(
        '/player/logout',
        { uid: other.uid, accessToken: other.accessToken },
        { token: server.accessToken },
      );
      const loggedOut = await sync({ uid: other.uid, accessToken: other.accessToken, collections: [redTag.key] });
      expect(loggedOut.status).toBe(401);
      expect(await granted(player.uid)).toEqual([]);
      expect(await granted(other.uid)).toEqual([]);
    });

    it('answers 401 for a player token of another server session', async () => {
      const otherServer = await onlineServer(app);
      const response = await sync(
        { uid: player.uid, accessToken: player.accessToken, collections: [redTag.key] },
        otherServer.accessToken,
      );
      expect(response.status).toBe(401);
      expect(response.body).toEqual({
        error: 'UNAUTHORIZED',
        message: 'The player session belongs to another server session',
      });
      expect(await granted(player.uid)).toEqual([]);
    });

    it('answers 401 without a server token', async () => {
      const response = await sync(
        { uid: player.uid, accessToken: player.accessToken, collections: [redTag.key] },
        null,
      );
      expect(response.status).toBe(401);
    });

    it('loses no grant and duplicates none under concurrent calls', async () => {
      // Half of the lists name the same keys in reverse order: the inserts must not deadlock.
      const lists = Array.from({ length: 12 }, (_, i) => {
        const keys = [
          redTag.key,
          `rhythmc:assets.race.${i % 4}`,
          `rhythmc:assets.race.shared`,
          i % 2 ? starTitle.key : arena.key,
        ];
        return i % 3 === 0 ? keys.reverse() : keys;
      });
      const responses = await Promise.all(
        lists.map((collections) => sync({ uid: player.uid, accessToken: player.accessToken, collections })),
      );
      expect(responses.map((r) => r.status)).toEqual(lists.map(() => 204));
      expect(await granted(player.uid)).toEqual([
        arena.key,
        'rhythmc:assets.race.0',
        'rhythmc:assets.race.1',
        'rhythmc:assets.race.2',
        'rhythmc:assets.race.3',
        'rhythmc:assets.race.shared',
        redTag.key,
        starTitle.key,
      ]);
      expect(await app.sql(`SELECT count(*)::int AS n FROM collection WHERE key LIKE 'rhythmc:assets.race.%'`)).toEqual(
        [{ n: 5 }],
      );
    });

    it('keeps grants across a restart', async () => {
      await sync({
        uid: player.uid,
        accessToken: player.accessToken,
        collections: [starTitle.key, 'rhythmc:assets.keep.1'],
      });
      await app.restart();
      expect(await granted(player.uid)).toEqual(['rhythmc:assets.keep.1', starTitle.key]);
      // The sessions live in the database, so the same tokens still work after the restart.
      const more = await sync({ uid: player.uid, accessToken: player.accessToken, collections: [redTag.key] });
      expect(more.status).toBe(204);
      await app.http.post(
        '/player/logout',
        { uid: player.uid, accessToken: player.accessToken },
        { token: server.accessToken },
      );
      const again = await loginPlayer(app, server, player);
      expect(again.profile.data).toEqual({ collections: ['rhythmc:assets.keep.1', redTag.key, starTitle.key] });
    });
  });

  describe('PUT /admin/charts and GET /server/charts', () => {
    const seven = {
      levelId: 7,
      name: 'Seven Seas',
      difficultyConstant: 12.7,
      version: '1.2.0',
      active: true,
      createdAt: '2026-03-16T10:20:30',
    };
    const three = { levelId: 3, name: 'Three', difficultyConstant: 9, version: '1.0', active: true };
    const hidden = { levelId: 5, name: 'Hidden', difficultyConstant: 14.2, version: '2.0', active: false };

    it('upserts a batch and lists only active charts by level id, createdAt as a local date-time', async () => {
      const response = await app.admin.put('/admin/charts', [seven, three, hidden]);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ upserted: 3 });
      const [stored] = await app.sql<{ created_at: Date }>('SELECT created_at FROM chart WHERE level_id = 3');

      const listed = await app.http.get('/server/charts', { token: server.accessToken });
      expect(listed.status).toBe(200);
      expect(listed.body).toEqual([
        {
          levelId: 3,
          name: 'Three',
          difficultyConstant: 9,
          version: '1.0',
          createdAt: formatLocalDateTime(stored.created_at),
        },
        {
          levelId: 7,
          name: 'Seven Seas',
          difficultyConstant: 12.7,
          version: '1.2.0',
          createdAt: '2026-03-16T10:20:30',
        },
      ]);
      expect(listed.body[0].createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);
      expect(
        await app.sql('SELECT level_id, name, difficulty_constant, version, active FROM chart ORDER BY level_id'),
      ).toEqual([
        { level_id: 3, name: 'Three', difficulty_constant: 9, version: '1.0', active: true },
        { level_id: 5, name: 'Hidden', difficulty_constant: 14.2, version: '2.0', active: false },
        { level_id: 7, name: 'Seven Seas', difficulty_constant: 12.7, version: '1.2.0', active: true },
      ]);
    });

    it('updates an existing chart; without createdAt it keeps its own', async () => {
      const response = await app.admin.put('/admin/charts', [
        { levelId: 7, name: 'Seven Seas (remix)', difficultyConstant: 13, version: '1.3.0', active: true },
        { ...hidden, active: true, createdAt: '2025-12-31T23:59:59' },
      ]);
      expect(response.body).toEqual({ upserted: 2 });
      const listed = await app.http.get<unknown[]>('/server/charts', { token: server.accessToken });
      expect(listed.body.slice(1)).toEqual([
        { levelId: 5, name: 'Hidden', difficultyConstant: 14.2, version: '2.0', createdAt: '2025-12-31T23:59:59' },
        {
          levelId: 7,
          name: 'Seven Seas (remix)',
          difficultyConstant: 13,
          version: '1.3.0',
          createdAt: '2026-03-16T10:20:30',
        },
      ]);
    });

    it('answers 400 naming the bad entry and field, and stores nothing of the batch', async () => {
      const response = await app.admin.put('/admin/charts', [
        { levelId: 11, name: 'Eleven', difficultyConstant: 1, version: '1', active: true },
        { levelId: 12, name: 'Twelve', difficultyConstant: 1, version: '1', active: 'yes' },
        {
          levelId: 13,
          name: 'Thirteen',
          difficultyConstant: 1,
          version: '1',
          active: true,
          createdAt: '2026-03-16 10:00',
        },
      ]);
      expect(response.status).toBe(400);
      expect(response.body).toEqual(
        badLines('[1] active: must be a boolean', '[2] createdAt: must be an ISO local date-time YYYY-MM-DDTHH:mm:ss'),
      );
      expect(await app.sql('SELECT level_id FROM chart WHERE level_id IN (11, 12, 13)')).toEqual([]);
    });

    it('takes constants from 0 to 1000 and refuses one above (400, nothing stored); 30 perfect plays at 1000 rank', async () => {
      const chart = (levelId: number, difficultyConstant: number) => ({
        levelId,
        name: `Constant ${levelId}`,
        difficultyConstant,
        version: '1',
        active: true,
      });
      const refused = await app.admin.put('/admin/charts', [chart(14, 0), chart(15, 1000.0001)]);
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual(badLines('[1] difficultyConstant: must be a number from 0 to 1000'));
      expect(await app.sql('SELECT level_id FROM chart WHERE level_id IN (14, 15)')).toEqual([]);

      // The bound is where the ATP still fits its columns: before it, the 30th such upload was a 500.
      const levels = Array.from({ length: 30 }, (_, i) => 1000 + i);
      expect(
        (await app.admin.put('/admin/charts', [chart(14, 0), ...levels.map((level) => chart(level, 1000))])).status,
      ).toBe(200);
      const player = await onlinePlayer(app, server);
      const start = Date.now();
      let last: Record<string, unknown> = {};
      for (const [i, level] of levels.entries())
        last = await uploadPlay(app, server, player, gameplayPayload(level, start + i, { acc: 100 }));
      expect(last).toMatchObject({ atp: 1002, playRating: 1002, personalBest: true });
      expect(await app.sql('SELECT atp::text AS atp FROM player_rating WHERE uid = $1', [player.uid])).toEqual([
        { atp: '1002.0000' },
      ]);
    });

    it('answers 400 for a body that is not an array', async () => {
      const response = await app.admin.put('/admin/charts', seven);
      expect(response.body).toEqual(badRequest('The request body must be a JSON array'));
    });

    it('answers 401 without the admin token or a server token', async () => {
      expect((await app.http.put('/admin/charts', [seven])).status).toBe(401);
      expect((await app.http.get('/server/charts')).status).toBe(401);
    });

    it('creates the inactive placeholder of an unknown level once, even when two callers race', async () => {
      const catalog = app.get(CatalogService);
      const [a, b] = await Promise.all([catalog.ensurePlaceholderChart(4242), catalog.ensurePlaceholderChart(4242)]);
      const placeholder = {
        levelId: 4242,
        name: 'Level 4242',
        difficultyConstant: 0,
        version: 'unknown',
        active: false,
        placeholder: true,
        notes: null,
      };
      expect(a).toEqual(placeholder);
      expect(b).toEqual(placeholder);
      expect(
        await app.sql('SELECT name, version, difficulty_constant, active FROM chart WHERE level_id = 4242'),
      ).toEqual([{ name: 'Level 4242', version: 'unknown', difficulty_constant: 0, active: false }]);
      expect(await catalog.findChart(4242)).toEqual(placeholder);
      // A placeholder is not listed, and a known chart is returned untouched.
      const listed = await app.http.get<{ levelId: number }[]>('/server/charts', { token: server.accessToken });
      expect(listed.body.map((c) => c.levelId)).not.toContain(4242);
      expect(await catalog.ensurePlaceholderChart(3)).toEqual({
        levelId: 3,
        name: 'Three',
        difficultyConstant: 9,
        version: '1.0',
        active: true,
        placeholder: false,
        notes: null,
      });
      expect(await catalog.findChart(999_999)).toBeNull();
    });

    it('creates the placeholder inside concurrent transactions of the caller', async () => {
      const catalog = app.get(CatalogService);
      const tx = app.get(TransactionService);
      const results = await Promise.all(
        [1, 2, 3].map(() => tx.run((manager) => catalog.ensurePlaceholderChart(4343, manager))),
      );
      expect(results.map((r) => r.name)).toEqual(['Level 4343', 'Level 4343', 'Level 4343']);
      expect(await app.sql('SELECT count(*)::int AS n FROM chart WHERE level_id = 4343')).toEqual([{ n: 1 }]);
    });
  });

  it('a fresh player created without login cannot sync (no session)', async () => {
    const player = await createPlayer(app);
    const response = await sync({ uid: player.uid, accessToken: 'x'.repeat(43), collections: [] });
    expect(response.status).toBe(401);
  });
});

describe('Catalog: free-form unlock rules and properties', () => {
  let app: TestApp;
  let server: OnlineServer;

  beforeAll(async () => {
    app = await startTestApp();
    server = await onlineServer(app);
  });
  afterAll(async () => {
    await app.close();
  });

  it('stores unlock rules and properties with keys named like the methods of an object, as given', async () => {
    const odd = {
      key: 'rhythmc:title.odd',
      type: 'title',
      unlockMethod: { type: 'MANUAL', valueOf: 3, rule: { toString: 'x' } },
      properties: { title: 'Odd', hasOwnProperty: true, extra: { isPrototypeOf: [1] } },
    };
    expect((await app.admin.put('/admin/collections', [odd])).body).toEqual({ upserted: 1 });
    expect(await app.sql('SELECT unlock_method, properties FROM collection WHERE key = $1', [odd.key])).toEqual([
      { unlock_method: odd.unlockMethod, properties: odd.properties },
    ]);
    const listed = await app.http.get('/server/collections', { token: server.accessToken });
    expect((listed.body as Array<{ key: string }>).find((entry) => entry.key === odd.key)).toEqual(odd);
  });
});
