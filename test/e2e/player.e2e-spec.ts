import { createHash } from 'node:crypto';
import { createServer, loginServer, onlineServer } from '../factories/server.factory';
import { createPlayer, loginPlayer, onlinePlayer, randomUuid } from '../factories/player.factory';
import { FakeIdentityProvider } from '../support/fake-identity-provider';
import { startTestApp, TestApp } from '../support/test-app';
import { testDatabaseServerUrl } from '../setup/test-env';
import { PlayerRepository } from '../../src/player/player.repository';
import { eventually, sleep } from '../support/wait';
import { badField, badLines } from '../support/bad-request';

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

describe('Player identity', () => {
  let app: TestApp;
  let idp: FakeIdentityProvider;
  let server: Awaited<ReturnType<typeof onlineServer>>;

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

  const login = (body: Record<string, unknown>, token: string | null = server.accessToken) =>
    app.http.post('/player/login', body, { token });
  const options = (body: Record<string, unknown>, token: string | null = server.accessToken) =>
    app.http.post('/player/options', body, { token });
  const logout = (body: Record<string, unknown>, token: string | null = server.accessToken) =>
    app.http.post('/player/logout', body, { token });

  describe('TOKEN mode', () => {
    it('answers the full profile and binds the session to the calling server session', async () => {
      const player = await createPlayer(app, { displayName: 'Neo' });
      const response = await login({ mode: 'TOKEN', version: 3, authToken: player.netToken });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        uid: player.uid,
        username: player.username,
        displayName: 'Neo',
        version: 0,
        banstate: 0,
        accessToken: expect.stringMatching(TOKEN),
        expiresIn: 600,
        resumeToken: '',
        resumeExpiresIn: 0,
        playerPrefix: '',
        playerSuffix: '',
        options: { continueEnabled: false, sound: {}, songSelectionState: {} },
        data: { collections: [] },
      });
      const [session] = await app.sql(
        `SELECT ps.token_hash, ps.mode, ps.logged_out_at, ss.server_id FROM player_session ps JOIN server_session ss ON ss.id = ps.server_session_id WHERE ps.uid = $1`,
        [player.uid],
      );
      expect(session).toEqual({
        token_hash: sha256(response.body.accessToken),
        mode: 'TOKEN',
        logged_out_at: null,
        server_id: server.serverID,
      });
    });

    it('answers 401 for an unknown Net Token and for a rotated one', async () => {
      expect((await login({ mode: 'TOKEN', version: 1, authToken: 'nope' })).body).toEqual({
        error: 'UNAUTHORIZED',
        message: 'Invalid Net Token',
      });
      const player = await createPlayer(app);
      const rotated = await app.admin.post(`/admin/players/${player.uid}/net-token`);
      expect(rotated.status).toBe(201);
      expect((await login({ mode: 'TOKEN', version: 1, authToken: player.netToken })).status).toBe(401);
      expect((await login({ mode: 'TOKEN', version: 1, authToken: rotated.body.netToken })).status).toBe(200);
    });

    it('displayName falls back to the username', async () => {
      const session = await onlinePlayer(app, server);
      expect(session.profile.displayName).toBe(session.username);
    });
  });

  describe('validation and server authentication', () => {
    it.each([
      [{ version: 1, authToken: 'x' }, 'mode'],
      [{ mode: 'PASSWORD', version: 1 }, 'mode'],
      [{ mode: 'TOKEN', authToken: 'x' }, 'version'],
      [{ mode: 'TOKEN', version: '1', authToken: 'x' }, 'version'],
      [{ mode: 'TOKEN', version: 1 }, 'authToken'],
      [{ mode: 'OFFLINE_REFRESH', version: 1 }, 'resumeToken'],
      [{ mode: 'ONLINE', version: 1, username: 'Steve' }, 'uuid'],
      [{ mode: 'ONLINE', version: 1, uuid: 'not-a-uuid', username: 'Steve' }, 'uuid'],
      [{ mode: 'ONLINE', version: 1, uuid: randomUuid() }, 'username'],
      [{ mode: 'ONLINE', version: 1, uuid: randomUuid(), username: 'bad name!' }, 'username'],
      [{ mode: 'TOKEN', version: 1, authToken: '', extra: 1 }, 'authToken'],
    ])('answers 400 for %j naming %s', async (body, field) => {
      const response = await login(body);
      expect(response.status).toBe(400);
      expect(response.body.error).toBe('BAD_REQUEST');
      expect(response.body.message).toContain(field);
    });

    it('needs the server access token', async () => {
      const player = await createPlayer(app);
      expect((await login({ mode: 'TOKEN', version: 1, authToken: player.netToken }, null)).status).toBe(401);
      expect(
        (await login({ mode: 'TOKEN', version: 1, authToken: player.netToken }, server.server.bootstrapToken)).status,
      ).toBe(401);
      expect(await app.sql('SELECT 1 FROM player_session WHERE uid = $1', [player.uid])).toHaveLength(0);
    });
  });

  describe('ONLINE mode', () => {
    it.each(['its logout', 'its next login'])(
      'answers 401 and opens nothing when the server session ends (%s) during the account lookup',
      async (end) => {
        const gone = await onlineServer(app);
        const uuid = randomUuid();
        const key = uuid.replace(/-/g, '');
        idp.addAccount(uuid, 'Latecomer');
        const release = idp.hold(uuid);
        const pending = login({ mode: 'ONLINE', version: 1, uuid, username: 'Latecomer' }, gone.accessToken);
        await eventually(() => idp.lookups.some((entry) => entry.path.endsWith(key)), 'the account lookup');
        if (end === 'its logout')
          expect((await app.http.post('/server/logout', undefined, { token: gone.accessToken })).status).toBe(204);
        else expect((await loginServer(app, gone.server)).accessToken).not.toBe(gone.accessToken);
        release();
        const refused = await pending;
        expect({ status: refused.status, body: refused.body }).toEqual({
          status: 401,
          body: { error: 'UNAUTHORIZED', message: 'Invalid or expired server access token' },
        });
        expect(await app.sql('SELECT uid FROM player WHERE uuid = $1', [uuid])).toEqual([]);
        // The player is not kept out of the other servers: the next login elsewhere gets in.
        expect((await login({ mode: 'ONLINE', version: 1, uuid, username: 'Latecomer' })).status).toBe(200);
      },
    );

    it('creates a genuine account seen for the first time and finds it again', async () => {
      const uuid = randomUuid();
      idp.addAccount(uuid, 'Notch_Fan');
      const first = await login({ mode: 'ONLINE', version: 2, uuid, username: 'notch_fan' });
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ username: 'Notch_Fan', displayName: 'Notch_Fan', version: 0 });
      const [stored] = await app.sql(
        'SELECT uid::int AS uid, uuid::text, username, data_version FROM player WHERE uuid = $1',
        [uuid],
      );
      expect(stored).toEqual({ uid: first.body.uid, uuid, username: 'Notch_Fan', data_version: 2 });

      const lookup = idp.lookups.find((entry) => entry.path.endsWith(uuid.replace(/-/g, '')));
      expect(lookup).toEqual({
        path: `/session/minecraft/profile/${uuid.replace(/-/g, '')}`,
        authorization: undefined,
      });

      expect((await logout({ uid: first.body.uid, accessToken: first.body.accessToken })).status).toBe(204);
      const second = await login({ mode: 'ONLINE', version: 2, uuid: uuid.toUpperCase(), username: 'Notch_Fan' });
      expect(second.status).toBe(200);
      expect(second.body.uid).toBe(first.body.uid);
      expect(second.body.version).toBe(2);
      expect(await app.sql('SELECT count(*)::int AS n FROM player WHERE uuid = $1', [uuid])).toEqual([{ n: 1 }]);
    });

    it('reuses a found profile for the same uuid (one provider call for a login, logout and two logins at once), and asks again after a failure', async () => {
      const uuid = randomUuid();
      const key = uuid.replace(/-/g, '');
      const lookupsOf = () => idp.lookups.filter((entry) => entry.path.endsWith(key)).length;
      idp.addAccount(uuid, 'Switcher');
      const first = await login({ mode: 'ONLINE', version: 1, uuid, username: 'Switcher' });
      expect(first.status).toBe(200);
      expect((await logout({ uid: first.body.uid, accessToken: first.body.accessToken })).status).toBe(204);
      // Two logins of the same player at once: one wins, the other is 409; neither asks the provider.
      const both = await Promise.all(
        [1, 2].map(() => login({ mode: 'ONLINE', version: 1, uuid, username: 'Switcher' })),
      );
      expect(both.map((response) => response.status).sort()).toEqual([200, 409]);
      expect(lookupsOf()).toBe(1);

      // A failed lookup is not kept: the next login asks again and gets in.
      const other = randomUuid();
      const otherKey = other.replace(/-/g, '');
      idp.misbehave(other, 'error');
      expect((await login({ mode: 'ONLINE', version: 1, uuid: other, username: 'Later' })).status).toBe(503);
      idp.behave(other);
      idp.addAccount(other, 'Later');
      expect((await login({ mode: 'ONLINE', version: 1, uuid: other, username: 'Later' })).status).toBe(200);
      expect(idp.lookups.filter((entry) => entry.path.endsWith(otherKey))).toHaveLength(2);
    });

    it('follows a redirect of the provider (as fetch did) to the profile', async () => {
      const uuid = randomUuid();
      const key = uuid.replace(/-/g, '');
      idp.addAccount(uuid, 'Redirected');
      idp.misbehave(uuid, 'redirect');
      const response = await login({ mode: 'ONLINE', version: 1, uuid, username: 'Redirected' });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ username: 'Redirected' });
      expect(idp.lookups.filter((entry) => entry.path.endsWith(key)).map((entry) => entry.path)).toEqual([
        `/session/minecraft/profile/${key}`,
        `/moved/session/minecraft/profile/${key}`,
      ]);
    });

    it('answers 401 when the name does not match the account', async () => {
      const uuid = randomUuid();
      idp.addAccount(uuid, 'RealName');
      const response = await login({ mode: 'ONLINE', version: 1, uuid, username: 'Impostor' });
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ error: 'UNAUTHORIZED', message: 'The username does not match the account' });
      expect(await app.sql('SELECT 1 FROM player WHERE uuid = $1', [uuid])).toHaveLength(0);
    });

    it('answers 401 when the account’s name only looks like the one asked (a Unicode case fold is no match)', async () => {
      const uuid = randomUuid();
      idp.addAccount(uuid, '\u212Aelvin'); // the Kelvin sign, which lowers to k
      const response = await login({ mode: 'ONLINE', version: 1, uuid, username: 'kelvin' });
      expect({ status: response.status, body: response.body }).toEqual({
        status: 401,
        body: { error: 'UNAUTHORIZED', message: 'The username does not match the account' },
      });
      expect(await app.sql('SELECT 1 FROM player WHERE uuid = $1', [uuid])).toHaveLength(0);
    });

    it.each([
      ['204 (no such account)', undefined],
      ['404', 'missing' as const],
    ])('answers 401 when the provider answers %s', async (_label, behaviour) => {
      const uuid = randomUuid();
      if (behaviour) idp.misbehave(uuid, behaviour);
      const response = await login({ mode: 'ONLINE', version: 1, uuid, username: 'Nobody' });
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ error: 'UNAUTHORIZED', message: 'Not a genuine account' });
    });

    it.each([
      ['answers 500', 'error' as const],
      ['answers malformed JSON', 'garbage' as const],
    ])('answers 503 UNAVAILABLE when the provider %s', async (_label, behaviour) => {
      const uuid = randomUuid();
      idp.misbehave(uuid, behaviour);
      const response = await login({ mode: 'ONLINE', version: 1, uuid, username: 'Someone' });
      expect(response.status).toBe(503);
      expect(response.body.error).toBe('UNAVAILABLE');
    });

    it('answers 503 UNAVAILABLE after 5 s when the provider never answers', async () => {
      const uuid = randomUuid();
      idp.misbehave(uuid, 'hang');
      const started = Date.now();
      const response = await login({ mode: 'ONLINE', version: 1, uuid, username: 'Someone' });
      expect(response.status).toBe(503);
      expect(response.body).toEqual({ error: 'UNAVAILABLE', message: 'The identity provider cannot be reached' });
      expect(Date.now() - started).toBeGreaterThanOrEqual(4900);
    });
  });

  describe('sessions', () => {
    it('answers 409 while a session is live, and logs in again after logout', async () => {
      const player = await createPlayer(app);
      const first = await loginPlayer(app, server, player);
      const conflict = await login({ mode: 'TOKEN', version: 1, authToken: player.netToken });
      expect(conflict.status).toBe(409);
      expect(conflict.body).toEqual({
        error: 'SESSION_CONFLICT',
        message: 'The account already has an active session',
      });

      const out = await logout({ uid: player.uid, accessToken: first.accessToken });
      expect(out.status).toBe(204);
      expect(out.text).toBe('');
      expect(await app.sql('SELECT logout_reason FROM player_session WHERE uid = $1', [player.uid])).toEqual([
        { logout_reason: 'logout' },
      ]);
      expect((await login({ mode: 'TOKEN', version: 1, authToken: player.netToken })).status).toBe(200);
    });

    it('gives exactly one 200 for 20 concurrent logins of one account', async () => {
      const player = await createPlayer(app);
      const responses = await Promise.all(
        Array.from({ length: 20 }, () => login({ mode: 'TOKEN', version: 1, authToken: player.netToken })),
      );
      const statuses = responses.map((r) => r.status).sort();
      expect(statuses).toEqual([200, ...Array(19).fill(409)]);
      expect(await app.sql('SELECT count(*)::int AS n FROM player_session WHERE uid = $1', [player.uid])).toEqual([
        { n: 1 },
      ]);
    });

    it('stores the request version and answers the previous one (version round-trip)', async () => {
      const player = await createPlayer(app);
      const first = await loginPlayer(app, server, player, 5);
      expect(first.profile.version).toBe(0);
      await logout({ uid: player.uid, accessToken: first.accessToken });
      const second = await loginPlayer(app, server, player, 7);
      expect(second.profile.version).toBe(5);
      await logout({ uid: player.uid, accessToken: second.accessToken });
      const third = await loginPlayer(app, server, player, 7);
      expect(third.profile.version).toBe(7);
      expect(await app.sql('SELECT data_version FROM player WHERE uid = $1', [player.uid])).toEqual([
        { data_version: 7 },
      ]);
    });

    it('logout: 401 for a dead token or another uid, 403 for another server session', async () => {
      const session = await onlinePlayer(app, server);
      const other = await onlineServer(app);
      expect((await logout({ uid: session.uid, accessToken: 'dead-token' })).body).toEqual({
        error: 'UNAUTHORIZED',
        message: 'Invalid or expired player access token',
      });
      expect((await logout({ uid: session.uid + 1, accessToken: session.accessToken })).status).toBe(401);
      const forbidden = await logout({ uid: session.uid, accessToken: session.accessToken }, other.accessToken);
      expect(forbidden.status).toBe(403);
      expect(forbidden.body).toEqual({
        error: 'FORBIDDEN',
        message: 'The player session belongs to another server session',
      });
      expect(await app.sql('SELECT logged_out_at FROM player_session WHERE uid = $1', [session.uid])).toEqual([
        { logged_out_at: null },
      ]);
      expect((await logout({ accessToken: session.accessToken })).status).toBe(400);
    });

    it('a server re-login logs out the players bound to the replaced session', async () => {
      const srv = await onlineServer(app);
      const session = await onlinePlayer(app, srv);
      const relogged = await loginServer(app, srv.server);
      const refused = await options(
        { uid: session.uid, accessToken: session.accessToken, options: {} },
        relogged.accessToken,
      );
      expect(refused.status).toBe(401);
      expect(await app.sql('SELECT logout_reason FROM player_session WHERE uid = $1', [session.uid])).toEqual([
        { logout_reason: 'server_session_ended' },
      ]);
      expect(
        (await login({ mode: 'TOKEN', version: 1, authToken: session.netToken }, relogged.accessToken)).status,
      ).toBe(200);
    });

    it('a server logout logs out its players', async () => {
      const srv = await onlineServer(app);
      const session = await onlinePlayer(app, srv);
      expect((await app.http.post('/server/logout', undefined, { token: srv.accessToken })).status).toBe(204);
      expect(await app.sql('SELECT logout_reason FROM player_session WHERE uid = $1', [session.uid])).toEqual([
        { logout_reason: 'server_session_ended' },
      ]);
    });
  });

  describe('options', () => {
    it('merges options: present keys replace, absent keys are kept, unknown keys come back as sent', async () => {
      const session = await onlinePlayer(app, server);
      const sound = { master: 0.8, effects: { tap: true } };
      const first = await options({
        uid: session.uid,
        accessToken: session.accessToken,
        options: { sound, fancyParticles: true },
      });
      expect(first.status).toBe(200);
      expect(first.body.options).toEqual({
        continueEnabled: false,
        sound,
        songSelectionState: {},
        fancyParticles: true,
      });
      expect(first.body.accessToken).toBe(session.accessToken);
      expect(first.body.expiresIn).toBeGreaterThan(590);

      const state = {
        sortMode: 'LEVEL',
        difficulty: 'NETHER',
        collection: 'rhythmc:pack.one',
        songId: 12,
        autoPlay: false,
      };
      const second = await options({
        uid: session.uid,
        accessToken: session.accessToken,
        options: { songSelectionState: state, lang: 'de' },
      });
      expect(second.body.options).toEqual({
        continueEnabled: false,
        sound,
        songSelectionState: state,
        fancyParticles: true,
        lang: 'de',
      });

      const [row] = await app.sql(
        'SELECT continue_enabled, sound, song_selection_state, extra_options FROM player WHERE uid = $1',
        [session.uid],
      );
      expect(row).toEqual({
        continue_enabled: false,
        sound,
        song_selection_state: state,
        extra_options: { fancyParticles: true, lang: 'de' },
      });
    });

    it('keeps option keys named like the methods of an object (valueOf, toString, …) at any depth', async () => {
      const session = await onlinePlayer(app, server);
      const sound = { toString: 'x', hasOwnProperty: true, nested: { valueOf: 2 } };
      const sent = { valueOf: 1, isPrototypeOf: [1], sound };
      const response = await options({ uid: session.uid, accessToken: session.accessToken, options: sent });
      expect(response.status).toBe(200);
      expect(response.body.options).toEqual({
        continueEnabled: false,
        sound,
        songSelectionState: {},
        valueOf: 1,
        isPrototypeOf: [1],
      });
      expect(await app.sql('SELECT sound, extra_options FROM player WHERE uid = $1', [session.uid])).toEqual([
        { sound, extra_options: { valueOf: 1, isPrototypeOf: [1] } },
      ]);
    });

    it.each([
      [{ continueEnabled: 'yes' }, 'options.continueEnabled must be a boolean'],
      [{ sound: [1, 2] }, 'options.sound must be an object'],
      [{ songSelectionState: null }, 'options.songSelectionState must be an object'],
    ])('answers 400 for options %j and stores nothing', async (bad, message) => {
      const session = await onlinePlayer(app, server);
      const response = await options({
        uid: session.uid,
        accessToken: session.accessToken,
        options: { ...bad, keepMe: 1 },
      });
      expect(response.status).toBe(400);
      expect(response.body).toEqual(badLines(message));
      expect(await app.sql('SELECT extra_options FROM player WHERE uid = $1', [session.uid])).toEqual([
        { extra_options: {} },
      ]);
    });

    it('bounds the unknown keys a player keeps across calls: 400 naming options, stored options unchanged', async () => {
      const session = await onlinePlayer(app, server);
      const call = (sent: Record<string, unknown>) =>
        options({ uid: session.uid, accessToken: session.accessToken, options: sent });
      const keys = (prefix: string, count: number, value: unknown = 1) =>
        Object.fromEntries(Array.from({ length: count }, (_, i) => [`${prefix}${i}`, value]));
      const stored = async () =>
        (await app.sql('SELECT extra_options FROM player WHERE uid = $1', [session.uid]))[0].extra_options as Record<
          string,
          unknown
        >;

      expect((await call(keys('a', 600))).status).toBe(200);
      const tooMany = await call({ ...keys('b', 401), sound: { volume: 1 } });
      expect(tooMany.status).toBe(400);
      expect(tooMany.body).toEqual(badLines('options would keep 1001 option keys; a player keeps at most 1000'));
      expect(await stored()).toEqual(keys('a', 600));
      expect((await call(keys('b', 400))).status).toBe(200);

      // Bytes: 600 values of 120 characters are about 78 KB, over 64 KiB.
      const tooBig = await call(keys('a', 600, 'v'.repeat(120)));
      expect(tooBig.status).toBe(400);
      expect(tooBig.body.errors).toEqual([
        {
          field: 'options',
          message: expect.stringMatching(/^would keep \d+ bytes of options; a player keeps at most 65536$/),
        },
      ]);
      expect(await stored()).toEqual({ ...keys('a', 600), ...keys('b', 400) });
      const [row] = await app.sql('SELECT sound FROM player WHERE uid = $1', [session.uid]);
      expect(row.sound).toBeNull(); // the refused call's sound was not written either
    });

    it('answers 400 for a missing options object or uid', async () => {
      const session = await onlinePlayer(app, server);
      expect((await options({ uid: session.uid, accessToken: session.accessToken })).body.message).toContain('options');
      expect((await options({ accessToken: session.accessToken, options: {} })).body.message).toContain('uid');
      expect((await options({ uid: 'abc', accessToken: session.accessToken, options: {} })).body.message).toContain(
        'uid must be a positive integer',
      );
    });

    it('answers 401 for a player token of another server session or another uid', async () => {
      const session = await onlinePlayer(app, server);
      const other = await onlineServer(app);
      const response = await options(
        { uid: session.uid, accessToken: session.accessToken, options: { x: 1 } },
        other.accessToken,
      );
      expect(response.status).toBe(401);
      expect(response.body).toEqual({
        error: 'UNAUTHORIZED',
        message: 'The player session belongs to another server session',
      });
      expect((await options({ uid: session.uid + 1000, accessToken: session.accessToken, options: {} })).status).toBe(
        401,
      );
    });

    it('accepts only unlocked title collections as prefix/suffix, and "" to clear', async () => {
      const session = await onlinePlayer(app, server);
      await app.sql(
        `INSERT INTO collection (key, type, unlock_method, properties) VALUES
          ('rhythmc:title.star', 'title', '{"type":"MANUAL"}', '{"title":"Star","position":true}'),
          ('rhythmc:title.moon', 'title', '{"type":"MANUAL"}', '{"title":"Moon","position":false}'),
          ('rhythmc:tag.red', 'tag', '{"type":"MANUAL"}', '{"title":"Red"}')
         ON CONFLICT DO NOTHING`,
      );
      await app.sql(
        `INSERT INTO player_collection (uid, collection_key) VALUES ($1, 'rhythmc:title.star'), ($1, 'rhythmc:tag.red')`,
        [session.uid],
      );

      const locked = await options({
        uid: session.uid,
        accessToken: session.accessToken,
        options: {},
        playerSuffix: 'rhythmc:title.moon',
      });
      expect(locked.status).toBe(400);
      expect(locked.body).toEqual(
        badLines('playerSuffix: not an unlocked title collection of this player (rhythmc:title.moon)'),
      );
      const notTitle = await options({
        uid: session.uid,
        accessToken: session.accessToken,
        options: {},
        playerPrefix: 'rhythmc:tag.red',
      });
      expect(notTitle.status).toBe(400);

      const ok = await options({
        uid: session.uid,
        accessToken: session.accessToken,
        options: {},
        playerPrefix: 'rhythmc:title.star',
      });
      expect(ok.status).toBe(200);
      expect(ok.body).toMatchObject({
        playerPrefix: 'rhythmc:title.star',
        playerSuffix: '',
        data: { collections: ['rhythmc:tag.red', 'rhythmc:title.star'] },
      });
      expect(await app.sql('SELECT prefix_key FROM player WHERE uid = $1', [session.uid])).toEqual([
        { prefix_key: 'rhythmc:title.star' },
      ]);

      const cleared = await options({
        uid: session.uid,
        accessToken: session.accessToken,
        options: {},
        playerPrefix: '',
      });
      expect(cleared.body.playerPrefix).toBe('');
      expect(await app.sql('SELECT prefix_key FROM player WHERE uid = $1', [session.uid])).toEqual([
        { prefix_key: null },
      ]);
    });
  });

  describe('resume tokens and OFFLINE_REFRESH', () => {
    it('issues, rotates and revokes the one live resume token', async () => {
      const session = await onlinePlayer(app, server);
      const enabled = await options({
        uid: session.uid,
        accessToken: session.accessToken,
        options: { continueEnabled: true },
      });
      expect(enabled.body).toMatchObject({
        resumeToken: expect.stringMatching(TOKEN),
        resumeExpiresIn: 604800,
        options: { continueEnabled: true },
      });
      const firstResume: string = enabled.body.resumeToken;
      expect(await app.sql('SELECT token_hash FROM player_resume_token WHERE uid = $1', [session.uid])).toEqual([
        { token_hash: sha256(firstResume) },
      ]);

      // Every response while continueEnabled is true rotates it.
      const again = await options({ uid: session.uid, accessToken: session.accessToken, options: {} });
      const secondResume: string = again.body.resumeToken;
      expect(secondResume).toMatch(TOKEN);
      expect(secondResume).not.toBe(firstResume);

      await logout({ uid: session.uid, accessToken: session.accessToken });
      expect((await login({ mode: 'OFFLINE_REFRESH', version: 1, resumeToken: firstResume })).body).toEqual({
        error: 'UNAUTHORIZED',
        message: 'Invalid or expired resume token',
      });
      const refreshed = await login({ mode: 'OFFLINE_REFRESH', version: 1, resumeToken: secondResume });
      expect(refreshed.status).toBe(200);
      expect(refreshed.body.uid).toBe(session.uid);
      expect(refreshed.body.resumeToken).toMatch(TOKEN);
      expect(refreshed.body.resumeToken).not.toBe(secondResume);

      const disabled = await options({
        uid: session.uid,
        accessToken: refreshed.body.accessToken,
        options: { continueEnabled: false },
      });
      expect(disabled.body).toMatchObject({ resumeToken: '', resumeExpiresIn: 0, options: { continueEnabled: false } });
      expect(await app.sql('SELECT 1 FROM player_resume_token WHERE uid = $1', [session.uid])).toHaveLength(0);
      await logout({ uid: session.uid, accessToken: refreshed.body.accessToken });
      expect(
        (await login({ mode: 'OFFLINE_REFRESH', version: 1, resumeToken: refreshed.body.resumeToken })).status,
      ).toBe(401);
    });

    it('refuses OFFLINE_REFRESH when continueEnabled is off, even with an unexpired token', async () => {
      const session = await onlinePlayer(app, server);
      const enabled = await options({
        uid: session.uid,
        accessToken: session.accessToken,
        options: { continueEnabled: true },
      });
      await logout({ uid: session.uid, accessToken: session.accessToken });
      await app.sql('UPDATE player SET continue_enabled = false WHERE uid = $1', [session.uid]);
      const response = await login({ mode: 'OFFLINE_REFRESH', version: 1, resumeToken: enabled.body.resumeToken });
      expect(response.status).toBe(401);
      expect(response.body).toEqual({
        error: 'UNAUTHORIZED',
        message: 'Offline refresh is not enabled for this player',
      });
    });

    it('a login of a player with continueEnabled answers a resume token', async () => {
      const session = await onlinePlayer(app, server);
      await options({ uid: session.uid, accessToken: session.accessToken, options: { continueEnabled: true } });
      await logout({ uid: session.uid, accessToken: session.accessToken });
      const again = await loginPlayer(app, server, session);
      expect(again.profile.resumeToken).toMatch(TOKEN);
      expect(again.profile.resumeExpiresIn).toBe(604800);
    });
  });

  describe('bans', () => {
    it('answers 430 with reason and until, revokes tokens and logs the player out; unban lets them in', async () => {
      const session = await onlinePlayer(app, server);
      await options({ uid: session.uid, accessToken: session.accessToken, options: { continueEnabled: true } });
      const ban = await app.admin.post(`/admin/players/${session.uid}/ban`, {
        reason: 'cheating',
        until: '2099-01-02T03:04:05',
        message: 'Bye',
      });
      expect(ban.status).toBe(200);
      expect(ban.body).toEqual({ uid: session.uid, reason: 'cheating', message: 'Bye', until: '2099-01-02T03:04:05' });

      expect(await app.sql('SELECT logout_reason FROM player_session WHERE uid = $1', [session.uid])).toEqual([
        { logout_reason: 'banned' },
      ]);
      expect(await app.sql('SELECT 1 FROM player_resume_token WHERE uid = $1', [session.uid])).toHaveLength(0);
      expect((await options({ uid: session.uid, accessToken: session.accessToken, options: {} })).status).toBe(401);

      const refused = await login({ mode: 'TOKEN', version: 1, authToken: session.netToken });
      expect(refused.status).toBe(430);
      expect(refused.body).toEqual({
        error: 'BANNED',
        message: 'This account is banned',
        reason: 'cheating',
        until: '2099-01-02T03:04:05',
      });

      const unban = await app.admin.delete(`/admin/players/${session.uid}/ban`);
      expect(unban.status).toBe(204);
      expect((await login({ mode: 'TOKEN', version: 1, authToken: session.netToken })).status).toBe(200);
    });

    // The ban commits on another connection while the sync's transaction is open: PostgreSQL only.
    (testDatabaseServerUrl() ? it : it.skip)(
      'an options sync that checked its token before a ban committed writes nothing and mints no resume token (401)',
      async () => {
        const session = await onlinePlayer(app, server);
        const players = app.get(PlayerRepository);
        const lockByUid = players.lockByUid.bind(players);
        // The ban lands between the sync's token check and its lock of the player row.
        const spy = jest.spyOn(players, 'lockByUid').mockImplementationOnce(async (...args) => {
          expect((await app.admin.post(`/admin/players/${session.uid}/ban`, { reason: 'race' })).status).toBe(200);
          return lockByUid(...args);
        });
        try {
          const sync = await options({
            uid: session.uid,
            accessToken: session.accessToken,
            options: { continueEnabled: true, lang: 'de' },
          });
          expect({ status: sync.status, body: sync.body as unknown }).toEqual({
            status: 401,
            body: { error: 'UNAUTHORIZED', message: 'Invalid or expired player access token' },
          });
        } finally {
          spy.mockRestore();
        }
        expect(await app.sql('SELECT 1 FROM player_resume_token WHERE uid = $1', [session.uid])).toEqual([]);
        expect(
          await app.sql("SELECT extra_options->>'lang' AS lang FROM player WHERE uid = $1", [session.uid]),
        ).toEqual([{ lang: null }]);
      },
    );

    it('a permanent ban has until "" and an empty reason when none is given', async () => {
      const player = await createPlayer(app);
      const ban = await app.admin.post(`/admin/players/${player.uid}/ban`, {});
      expect(ban.body).toEqual({ uid: player.uid, reason: '', message: 'You are banned', until: '' });
      expect((await login({ mode: 'TOKEN', version: 1, authToken: player.netToken })).body).toEqual({
        error: 'BANNED',
        message: 'This account is banned',
        reason: '',
        until: '',
      });
    });

    it('cuts the default kick message to 512 characters when the reason is long (it was a 500)', async () => {
      const player = await createPlayer(app);
      const reason = 'é'.repeat(500) + '🎵'.repeat(6);
      const ban = await app.admin.post(`/admin/players/${player.uid}/ban`, { reason });
      expect(ban.status).toBe(200);
      const message = `You are banned: ${'é'.repeat(495)}…`;
      expect(ban.body).toEqual({ uid: player.uid, reason, message, until: '' });
      expect(
        await app.sql('SELECT reason, message, char_length(message) AS length FROM player_ban WHERE uid = $1', [
          player.uid,
        ]),
      ).toEqual([{ reason, message, length: 512 }]);
    });

    it('checks the ban before the session conflict', async () => {
      const session = await onlinePlayer(app, server);
      // A ban stored while a session is live (the admin API would have logged it out).
      await app.sql(`INSERT INTO player_ban (uid, reason) VALUES ($1, 'spam')`, [session.uid]);
      expect((await login({ mode: 'TOKEN', version: 1, authToken: session.netToken })).status).toBe(430);
    });

    it('a ban ends by itself at until', async () => {
      const player = await createPlayer(app);
      const until = new Date(Date.now() + 3000);
      const pad = (n: number) => String(n).padStart(2, '0');
      const local = `${until.getFullYear()}-${pad(until.getMonth() + 1)}-${pad(until.getDate())}T${pad(until.getHours())}:${pad(until.getMinutes())}:${pad(until.getSeconds())}`;
      expect((await app.admin.post(`/admin/players/${player.uid}/ban`, { until: local })).status).toBe(200);
      expect((await login({ mode: 'TOKEN', version: 1, authToken: player.netToken })).status).toBe(430);
      await sleep(Math.max(0, until.getTime() - Date.now()) + 200);
      expect((await login({ mode: 'TOKEN', version: 1, authToken: player.netToken })).status).toBe(200);
    });

    it.each([
      [{ until: '2020-01-01T00:00:00' }, 'until must be in the future'],
      [{ until: 'tomorrow' }, 'until must be an ISO local date-time YYYY-MM-DDTHH:mm:ss'],
      [{ until: '2099-02-30T00:00:00' }, 'until must be an ISO local date-time YYYY-MM-DDTHH:mm:ss'],
    ])('answers 400 for %j and stores no ban', async (body, message) => {
      const player = await createPlayer(app);
      const response = await app.admin.post(`/admin/players/${player.uid}/ban`, body);
      expect(response.body).toEqual(badLines(message));
      expect(await app.sql('SELECT 1 FROM player_ban WHERE uid = $1', [player.uid])).toHaveLength(0);
    });

    it('answers 404 for an unknown player and 400 for a malformed uid', async () => {
      expect((await app.admin.post('/admin/players/99999999/ban', {})).body).toEqual({
        error: 'NOT_FOUND',
        message: 'No player with uid 99999999',
      });
      expect((await app.admin.delete('/admin/players/99999999/ban')).status).toBe(404);
      expect((await app.admin.put('/admin/players/99999999/banstate', { banstate: 1 })).status).toBe(404);
      expect((await app.admin.post('/admin/players/99999999/net-token')).status).toBe(404);
      expect((await app.admin.post('/admin/players/x1/ban', {})).body).toEqual(
        badLines('uid must be a positive integer'),
      );
    });

    it('banstate is stored and shown in the profile', async () => {
      const player = await createPlayer(app);
      const set = await app.admin.put(`/admin/players/${player.uid}/banstate`, { banstate: 2 });
      expect(set.body).toEqual({ uid: player.uid, banstate: 2 });
      expect((await app.admin.put(`/admin/players/${player.uid}/banstate`, { banstate: -1 })).status).toBe(400);
      const session = await loginPlayer(app, server, player);
      expect(session.profile.banstate).toBe(2);
    });
  });

  describe('POST /admin/players', () => {
    it('creates a player and refuses a duplicate uuid', async () => {
      const uuid = randomUuid();
      const created = await app.admin.post('/admin/players', { username: 'Alex_1', uuid, displayName: 'Alex' });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({ uid: expect.any(Number), username: 'Alex_1', displayName: 'Alex', uuid });
      const duplicate = await app.admin.post('/admin/players', { username: 'Other', uuid });
      expect(duplicate.status).toBe(400);
      expect(duplicate.body).toEqual(badField('uuid', `${uuid} already belongs to another player`, 'label'));
    });

    it.each([
      [{}],
      [{ username: 'has space' }],
      [{ username: 'ok', uuid: '123' }],
      [{ username: 'ok', displayName: 5 }],
    ])('answers 400 for %j', async (body) => {
      const response = await app.admin.post('/admin/players', body);
      expect(response.status).toBe(400);
      expect(response.body.error).toBe('BAD_REQUEST');
    });
  });
});

describe('Player data across a restart', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  it('keeps options, version and the Net Token', async () => {
    const srv = await onlineServer(app);
    const session = await onlinePlayer(app, srv);
    await app.http.post(
      '/player/options',
      { uid: session.uid, accessToken: session.accessToken, options: { sound: { volume: 3 }, hud: 'compact' } },
      { token: srv.accessToken },
    );
    await app.http.post(
      '/player/logout',
      { uid: session.uid, accessToken: session.accessToken },
      { token: srv.accessToken },
    );

    await app.restart();

    const again = await loginPlayer(app, await loginServer(app, srv.server), session, 9);
    expect(again.profile.options).toEqual({
      continueEnabled: false,
      sound: { volume: 3 },
      songSelectionState: {},
      hud: 'compact',
    });
    expect(again.profile.version).toBe(1);
  });
});

describe('Player login rate limit', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ env: { THROTTLE_PLAYER_LOGIN_LIMIT: '2' } });
  });
  afterAll(async () => {
    await app.close();
  });

  it('limits player login per calling server session with 429 RATE_LIMITED', async () => {
    const server = await createServer(app);
    const session = await loginServer(app, server);
    const player = await createPlayer(app);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      statuses.push(
        (
          await app.http.post(
            '/player/login',
            { mode: 'TOKEN', version: 1, authToken: 'wrong' },
            { token: session.accessToken },
          )
        ).status,
      );
    }
    expect(statuses).toEqual([401, 401, 429]);
    const limited = await app.http.post(
      '/player/login',
      { mode: 'TOKEN', version: 1, authToken: player.netToken },
      { token: session.accessToken },
    );
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe('RATE_LIMITED');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
