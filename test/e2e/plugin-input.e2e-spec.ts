import { createServer, onlineServer, TestServerSession } from '../factories/server.factory';
import { createPlayer, onlinePlayer, randomUuid } from '../factories/player.factory';
import { gameplayPayload } from '../factories/upload.factory';
import { FakeIdentityProvider } from '../support/fake-identity-provider';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * Liberal in what the plugin sends, strict in what it means (docs/decisions.md "Plugin input"):
 * on the plugin's routes unknown fields are ignored and counted, `null` on an optional field means
 * absent, ONLINE authToken may be absent, empty or null, rivalUID ≤ 0 means no rival. Known fields
 * keep their exact checks, and the admin API stays strict.
 */
describe('Plugin-shaped bodies', () => {
  let app: TestApp;
  let idp: FakeIdentityProvider;
  let server: TestServerSession;

  beforeAll(async () => {
    idp = new FakeIdentityProvider();
    await idp.start();
    app = await startTestApp({ env: { IDENTITY_PROVIDER_URL: idp.url } });
    server = await onlineServer(app);
  });
  afterAll(async () => {
    await app.close();
    await idp.stop();
  });

  /** rhythmc_ignored_body_fields_total for one body type (0 when never counted). */
  async function ignoredFields(body: string): Promise<number> {
    const response = await app.http.get('/metrics', { token: null });
    const line = response.text
      .split('\n')
      .find((l) => l.startsWith(`rhythmc_ignored_body_fields_total{body="${body}"}`));
    return line ? Number(line.split(' ').pop()) : 0;
  }

  describe('POST /server/login', () => {
    it('ignores a field it does not know and counts it', async () => {
      const registered = await createServer(app);
      const before = await ignoredFields('ServerLoginDto');
      const response = await app.http.post(
        '/server/login',
        { pluginVersion: 7, pluginSHA: 'abc', velocityForwarding: true, motd: 'hi' },
        { token: registered.bootstrapToken },
      );
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ serverID: registered.serverID });
      expect(await ignoredFields('ServerLoginDto')).toBe(before + 2);
      const [row] = await app.sql(
        'SELECT plugin_version FROM server_session WHERE server_id = $1 AND ended_at IS NULL',
        [registered.serverID],
      );
      expect(row).toEqual({ plugin_version: 7 });
    });

    it('still answers 400 for a known field of the wrong type', async () => {
      const registered = await createServer(app);
      const response = await app.http.post(
        '/server/login',
        { pluginVersion: '7', pluginSHA: 'abc', extra: 1 },
        { token: registered.bootstrapToken },
      );
      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        error: 'BAD_REQUEST',
        message: expect.stringContaining('pluginVersion'),
        errors: expect.arrayContaining([expect.objectContaining({ field: expect.stringContaining('pluginVersion') })]),
      });
      expect(await app.sql('SELECT 1 FROM server_session WHERE server_id = $1', [registered.serverID])).toEqual([]);
    });
  });

  describe('POST /player/login', () => {
    it.each([
      ['absent', {}],
      ['empty', { authToken: '' }],
      ['null', { authToken: null }],
    ])('ONLINE mode takes an authToken that is %s', async (_label, token) => {
      const uuid = randomUuid();
      const username = `On${uuid.slice(0, 8)}`;
      idp.addAccount(uuid, username);
      const response = await app.http.post(
        '/player/login',
        { mode: 'ONLINE', version: 1, uuid, username, ...token },
        { token: server.accessToken },
      );
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ username, displayName: username });
      expect(await app.sql('SELECT username FROM player WHERE uuid = $1', [uuid])).toEqual([{ username }]);
    });

    it('ignores unknown fields and takes null for the fields of other modes', async () => {
      const player = await createPlayer(app);
      const response = await app.http.post(
        '/player/login',
        {
          mode: 'TOKEN',
          version: 1,
          authToken: player.netToken,
          uuid: null,
          username: null,
          resumeToken: null,
          clientBrand: 'fabric',
          protocol: 767,
        },
        { token: server.accessToken },
      );
      expect(response.status).toBe(200);
      expect(response.body.uid).toBe(player.uid);
    });

    it("takes an empty resumeToken (the plugin's empty cache) outside OFFLINE_REFRESH, and still needs one in it", async () => {
      const player = await createPlayer(app);
      const token = await app.http.post(
        '/player/login',
        { mode: 'TOKEN', version: 1, authToken: player.netToken, resumeToken: '' },
        { token: server.accessToken },
      );
      expect(token.status).toBe(200);
      expect(token.body.uid).toBe(player.uid);
      const refresh = await app.http.post(
        '/player/login',
        { mode: 'OFFLINE_REFRESH', version: 1, resumeToken: '' },
        { token: server.accessToken },
      );
      expect(refresh.status).toBe(400);
      expect(refresh.body).toEqual({
        error: 'BAD_REQUEST',
        message: expect.stringContaining('resumeToken'),
        errors: expect.arrayContaining([expect.objectContaining({ field: expect.stringContaining('resumeToken') })]),
      });
    });

    it('still needs a non-empty authToken in TOKEN mode', async () => {
      for (const authToken of ['', null, undefined]) {
        const response = await app.http.post(
          '/player/login',
          { mode: 'TOKEN', version: 1, authToken },
          { token: server.accessToken },
        );
        expect(response.status).toBe(400);
        expect(response.body).toEqual({
          error: 'BAD_REQUEST',
          message: expect.stringContaining('authToken'),
          errors: expect.arrayContaining([expect.objectContaining({ field: expect.stringContaining('authToken') })]),
        });
      }
    });
  });

  describe('POST /player/options', () => {
    it('takes null for playerPrefix and playerSuffix as "keep the current one" and ignores unknown fields', async () => {
      const player = await onlinePlayer(app, server);
      const response = await app.http.post(
        '/player/options',
        {
          uid: player.uid,
          accessToken: player.accessToken,
          options: { continueEnabled: true },
          playerPrefix: null,
          playerSuffix: null,
          locale: 'de_de',
        },
        { token: server.accessToken },
      );
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ playerPrefix: '', playerSuffix: '' });
      expect(
        await app.sql('SELECT prefix_key, suffix_key, continue_enabled FROM player WHERE uid = $1', [player.uid]),
      ).toEqual([{ prefix_key: null, suffix_key: null, continue_enabled: true }]);
    });
  });

  describe('POST /player/economy', () => {
    it('ignores unknown fields and takes a null expectedWattHour as absent (the overwrite)', async () => {
      const player = await onlinePlayer(app, server);
      const before = await ignoredFields('SyncEconomyDto');
      const response = await app.http.post(
        '/player/economy',
        { uid: player.uid, accessToken: player.accessToken, wattHour: 42, expectedWattHour: null, currency: 'wh' },
        { token: server.accessToken },
      );
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ uid: player.uid, wattHour: 42 });
      expect(await app.sql('SELECT watt_hour FROM player_balance WHERE uid = $1', [player.uid])).toEqual([
        { watt_hour: '42' },
      ]);
      expect(await ignoredFields('SyncEconomyDto')).toBe(before + 1);
    });
  });

  describe('POST /player/upload', () => {
    let time = Date.now() - 3_600_000;
    const record = (
      player: { uid: number; accessToken: string },
      payload: Record<string, unknown>,
      extra: Record<string, unknown> = {},
    ) => ({
      player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: time + 100 },
      server: { serverID: server.serverID, serverName: server.body.serverName as string, country: 'DE' },
      payload,
      ...extra,
    });
    const stored = (uid: number) =>
      app.sql('SELECT rival_uid, player_arena, acc FROM play_record WHERE uid = $1', [uid]);

    it('stores rivalUID -1 as 0 (no rival)', async () => {
      const player = await onlinePlayer(app, server);
      const response = await app.http.post(
        '/player/upload',
        record(player, gameplayPayload(101, (time += 1000), { rivalUID: -1 })),
        { token: server.accessToken },
      );
      expect(response.status).toBe(200);
      expect(await stored(player.uid)).toEqual([{ rival_uid: '0', player_arena: 'arena:forest', acc: 99.5 }]);
    });

    it.each([
      ['null', null],
      ['absent', undefined],
    ])('stores a player_arena that is %s as ""', async (_label, arena) => {
      const player = await onlinePlayer(app, server);
      const response = await app.http.post(
        '/player/upload',
        record(player, gameplayPayload(101, (time += 1000), { player_arena: arena })),
        { token: server.accessToken },
      );
      expect(response.status).toBe(200);
      expect(await stored(player.uid)).toEqual([{ rival_uid: '0', player_arena: '', acc: 99.5 }]);
    });

    it('ignores unknown fields at every level and counts them', async () => {
      const player = await onlinePlayer(app, server);
      const before = await ignoredFields('UploadRecordDto');
      const payload = gameplayPayload(101, (time += 1000), {
        score: 1_000_000,
        tapStats: { perfect: 310, great: 4, miss: 1, good: 2 },
      });
      const body = record(player, payload, { records: [], client: { brand: 'paper' }, valueOf: 1 });
      const response = await app.http.post('/player/upload', body, { token: server.accessToken });
      expect(response.status).toBe(200);
      expect(await stored(player.uid)).toEqual([{ rival_uid: '0', player_arena: 'arena:forest', acc: 99.5 }]);
      // records, client, valueOf (a key class-transformer never copies), payload.score, payload.tapStats.good
      expect(await ignoredFields('UploadRecordDto')).toBe(before + 5);
    });

    it('keeps the exact checks of known fields: 400 naming the field, nothing stored', async () => {
      const player = await onlinePlayer(app, server);
      for (const [change, message] of [
        [{ rivalUID: 1.5 }, 'payload.rivalUID must be an integer'],
        [{ player_arena: 5 }, 'payload.player_arena must be a string'],
        [
          { tapStats: { perfect: -1, great: 0, miss: 0, good: 1 } },
          'payload.tapStats.perfect must be an integer from 0 to 2147483647',
        ],
      ] as const) {
        const response = await app.http.post(
          '/player/upload',
          record(player, gameplayPayload(101, (time += 1000), change)),
          { token: server.accessToken },
        );
        expect(response.status).toBe(400);
        expect(response.body).toEqual({
          error: 'BAD_REQUEST',
          message: expect.stringContaining(message),
          errors: expect.arrayContaining([expect.objectContaining({ field: message.split(' ')[0] })]),
        });
      }
      expect(await stored(player.uid)).toEqual([]);
    });
  });

  describe('the admin API', () => {
    it('stays strict: an unknown field is 400 and nothing is written', async () => {
      const response = await app.admin.put('/admin/charts', [
        { levelId: 555_001, name: 'X', difficultyConstant: 10, version: '1', active: true, bpm: 180 },
      ]);
      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        error: 'BAD_REQUEST',
        message: expect.stringContaining('bpm'),
        errors: expect.arrayContaining([expect.objectContaining({ field: expect.stringContaining('bpm') })]),
      });
      expect(await app.sql('SELECT 1 FROM chart WHERE level_id = 555001')).toEqual([]);
    });
  });
});
