import { loginServer, onlineServer } from '../factories/server.factory';
import { createPlayer, onlinePlayer, randomUuid } from '../factories/player.factory';
import { FakeIdentityProvider } from '../support/fake-identity-provider';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * Issue #16, the login burst: login and syncs in one round trip each (database functions of
 * migrations/1795662422908-OneRoundTripLogin.ts) and the reuse of identity-provider answers. The
 * contract itself is held by player, economy, catalog and realtime e2e specs, unchanged; these
 * cases pin what the new paths must not lose.
 */
describe('Login burst', () => {
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

  const post = (path: string, body: Record<string, unknown>, token: string | null = server.accessToken) =>
    app.http.post(path, body, { token });
  const lookupsOf = (uuid: string) => idp.lookups.filter((entry) => entry.path.endsWith(uuid.replace(/-/g, ''))).length;

  describe('identity-provider answers reused within the minute', () => {
    it('a ban issued inside the reuse window still refuses the ONLINE login (430), and an unban lets the player in, with one provider call', async () => {
      const uuid = randomUuid();
      idp.addAccount(uuid, 'Burster');
      const first = await post('/player/login', { mode: 'ONLINE', version: 1, uuid, username: 'Burster' });
      expect(first.status).toBe(200);
      const uid = first.body.uid as number;

      // The admin ban logs the session out and kicks; the game server restarts and logs the player in again.
      const ban = await app.admin.post(`/admin/players/${uid}/ban`, {
        reason: 'botting',
        until: '2099-05-06T07:08:09',
      });
      expect(ban.status).toBe(200);
      const refused = await post('/player/login', { mode: 'ONLINE', version: 1, uuid, username: 'Burster' });
      expect(refused.status).toBe(430);
      expect(refused.body).toEqual({
        error: 'BANNED',
        message: 'This account is banned',
        reason: 'botting',
        until: '2099-05-06T07:08:09',
      });
      expect(await app.sql('SELECT count(*)::int AS n FROM player_session WHERE uid = $1', [uid])).toEqual([{ n: 1 }]);

      expect((await app.admin.delete(`/admin/players/${uid}/ban`)).status).toBe(204);
      const back = await post('/player/login', { mode: 'ONLINE', version: 2, uuid, username: 'burster' });
      expect(back.status).toBe(200);
      expect(back.body).toMatchObject({ uid, username: 'Burster', version: 1 });
      // The provider was asked once: the ban is the database's, never part of what is reused.
      expect(lookupsOf(uuid)).toBe(1);
    });

    it('a ban stored while the resume token is still there refuses OFFLINE_REFRESH with 430', async () => {
      const session = await onlinePlayer(app, server);
      const options = await post('/player/options', {
        uid: session.uid,
        accessToken: session.accessToken,
        options: { continueEnabled: true },
      });
      expect(options.status).toBe(200);
      await post('/player/logout', { uid: session.uid, accessToken: session.accessToken });
      await app.sql(`INSERT INTO player_ban (uid, reason) VALUES ($1, 'spam')`, [session.uid]);
      const refused = await post('/player/login', {
        mode: 'OFFLINE_REFRESH',
        version: 1,
        resumeToken: options.body.resumeToken,
      });
      expect(refused.status).toBe(430);
      expect(refused.body).toMatchObject({ error: 'BANNED', reason: 'spam', until: '' });
    });
  });

  describe('one round trip per login', () => {
    it('a relogin after the server session was replaced answers the stored profile, the previous version, a new resume token and the collections', async () => {
      const mine = await onlineServer(app);
      const player = await createPlayer(app, { displayName: 'Ada' });
      const login = await post(
        '/player/login',
        { mode: 'TOKEN', version: 3, authToken: player.netToken },
        mine.accessToken,
      );
      await post(
        '/player/options',
        {
          uid: player.uid,
          accessToken: login.body.accessToken,
          options: { continueEnabled: true, sound: { volume: 3 }, custom: [1, 'x'] },
        },
        mine.accessToken,
      );
      await post(
        '/player/collections',
        {
          uid: player.uid,
          accessToken: login.body.accessToken,
          collections: ['rhythmc:assets.b.one', 'rhythmc:assets.a.two'],
        },
        mine.accessToken,
      );
      // The plugin restarts: a new server login replaces the session and logs its players out.
      const restarted = await loginServer(app, mine.server);
      const resumed = await post(
        '/player/login',
        { mode: 'OFFLINE_REFRESH', version: 4, resumeToken: 'x'.repeat(43) },
        restarted.accessToken,
      );
      expect(resumed.status).toBe(401);
      expect(resumed.body).toEqual({ error: 'UNAUTHORIZED', message: 'Invalid or expired resume token' });
      const [stored] = await app.sql('SELECT token_hash FROM player_resume_token WHERE uid = $1', [player.uid]);
      expect(stored).toBeDefined();

      const again = await post(
        '/player/login',
        { mode: 'TOKEN', version: 4, authToken: player.netToken },
        restarted.accessToken,
      );
      expect(again.status).toBe(200);
      expect(again.body).toEqual({
        uid: player.uid,
        username: player.username,
        displayName: 'Ada',
        version: 3,
        banstate: 0,
        accessToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        expiresIn: 600,
        resumeToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        resumeExpiresIn: 604800,
        playerPrefix: '',
        playerSuffix: '',
        options: { custom: [1, 'x'], continueEnabled: true, sound: { volume: 3 }, songSelectionState: {} },
        data: { collections: ['rhythmc:assets.a.two', 'rhythmc:assets.b.one'] },
      });
      const offline = await post(
        '/player/login',
        { mode: 'OFFLINE_REFRESH', version: 5, resumeToken: again.body.resumeToken },
        restarted.accessToken,
      );
      expect(offline.status).toBe(409);
    });

    it('a player token is judged alike by the TypeScript rule (options) and the SQL one (economy, collections)', async () => {
      const player = await onlinePlayer(app, server);
      const other = await onlinePlayer(app, server);
      const otherServer = await onlineServer(app);
      const expired = await onlinePlayer(app, server);
      await app.sql(`UPDATE player_session SET token_expires_at = now() - interval '1 second' WHERE uid = $1`, [
        expired.uid,
      ]);
      const cases: Array<[string, number, string, string | null]> = [
        ['live', player.uid, player.accessToken, null],
        ['unknown', player.uid, 'nope', null],
        ['other uid', player.uid, other.accessToken, null],
        ['other server session', player.uid, player.accessToken, otherServer.accessToken],
        ['expired', expired.uid, expired.accessToken, null],
      ];
      for (const [label, uid, accessToken, serverToken] of cases) {
        const token = serverToken ?? server.accessToken;
        const ts = await post('/player/options', { uid, accessToken, options: {} }, token);
        const balance = await post('/player/economy', { uid, accessToken, wattHour: 5 }, token);
        const grant = await post('/player/collections', { uid, accessToken, collections: [] }, token);
        const statuses = [ts.status, balance.status, grant.status];
        expect([label, statuses]).toEqual([label, label === 'live' ? [200, 200, 204] : [401, 401, 401]]);
        if (label !== 'live') {
          expect([label, balance.body, grant.body]).toEqual([label, ts.body, ts.body]);
        }
      }
    });
  });
});
