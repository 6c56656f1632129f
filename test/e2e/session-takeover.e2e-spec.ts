import { createPlayer, loginPlayer, randomUuid, TestPlayer } from '../factories/player.factory';
import { onlineServer, TestServerSession } from '../factories/server.factory';
import { FakeIdentityProvider } from '../support/fake-identity-provider';
import { HttpResponse } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';
import { WsClient } from '../support/ws-client';
import { sleep } from '../support/wait';
import { testDatabaseServerUrl } from '../setup/test-env';
import { PlayerRepository } from '../../src/player/player.repository';

const TAKEOVER_KICK = 'Your account logged in on another server with its Net Token or resume token';

/**
 * Squatting (docs/decisions.md "Server switching"): ONLINE proves no ownership, so a session it
 * opened gives way to a later login through another server that carries proof (a Net Token, a
 * resume token issued to a proven session). The holder is told to kick the player with its own
 * reason; the takeover is counted and shown to staff. A session opened with proof keeps answering 409.
 */
describe('Session takeover: a session without proof gives way to a login with proof', () => {
  let app: TestApp;
  let idp: FakeIdentityProvider;
  const sockets: WsClient[] = [];

  beforeAll(async () => {
    idp = new FakeIdentityProvider();
    await idp.start();
    app = await startTestApp({ env: { IDENTITY_PROVIDER_URL: idp.url } });
  });
  afterEach(() => {
    for (const socket of sockets.splice(0)) socket.socket.terminate();
  });
  afterAll(async () => {
    await app.close();
    await idp.stop();
  });

  /** A player with a genuine account (the identity provider knows it) and a Net Token. */
  const genuinePlayer = async (): Promise<TestPlayer & { uuid: string }> => {
    const uuid = randomUuid();
    const username = `Sq${uuid.slice(0, 8)}`;
    idp.addAccount(uuid, username);
    return { ...(await createPlayer(app, { uuid, username })), uuid };
  };
  const online = (server: TestServerSession, player: { uuid: string; username: string }) =>
    app.http.post(
      '/player/login',
      { mode: 'ONLINE', version: 1, uuid: player.uuid, username: player.username },
      { token: server.accessToken },
    );
  const withToken = (server: TestServerSession, player: TestPlayer) =>
    app.http.post(
      '/player/login',
      { mode: 'TOKEN', version: 1, authToken: player.netToken },
      { token: server.accessToken },
    );
  const withResume = (server: TestServerSession, resumeToken: string) =>
    app.http.post('/player/login', { mode: 'OFFLINE_REFRESH', version: 1, resumeToken }, { token: server.accessToken });
  const socketOf = async (server: TestServerSession) => {
    const socket = await WsClient.connect(app.baseUrl, server.accessToken);
    sockets.push(socket);
    return socket;
  };
  const sessionsOf = (uid: number) =>
    app.sql<{ server_id: number; mode: string; proven: boolean; logout_reason: string | null }>(
      `SELECT s.server_id, p.mode, p.proven, p.logout_reason
         FROM player_session p JOIN server_session s ON s.id = p.server_session_id
        WHERE p.uid = $1 ORDER BY p.created_at`,
      [uid],
    );
  const takeoversOf = (uid: number) =>
    app.sql<{ from_server_id: number; to_server_id: number; proof: string }>(
      'SELECT from_server_id, to_server_id, proof FROM player_session_takeover WHERE uid = $1 ORDER BY id',
      [uid],
    );
  const conflictsOf = async (serverID: number) => {
    let cursor: string | null = null;
    for (;;) {
      const page: HttpResponse = await app.admin.get('/admin/servers', {
        query: { limit: '200', ...(cursor ? { cursor } : {}) },
      });
      expect(page.status).toBe(200);
      const server = (page.body.items as Array<Record<string, unknown>>).find((item) => item.serverID === serverID);
      if (server) return server.sessionConflicts24h;
      cursor = page.body.nextCursor as string | null;
      if (cursor === null) throw new Error(`server ${serverID} is not listed`);
    }
  };
  const takeoverMetric = async (proof: string) => {
    const scrape = await app.http.get('/metrics', { token: null });
    const line = scrape.text
      .split('\n')
      .find((l) => l.startsWith(`rhythmc_player_session_takeovers_total{proof="${proof}"}`));
    return line === undefined ? null : Number(line.split(' ').pop());
  };

  it("a server that logged a player in ONLINE and keeps the session alive loses it to the player's Net Token", async () => {
    const player = await genuinePlayer();
    const [squatter, legit] = [await onlineServer(app), await onlineServer(app)];
    const onSquatter = await socketOf(squatter);
    const onLegit = await socketOf(legit);
    const takeoversBefore = (await takeoverMetric('TOKEN')) ?? 0;

    // The squat: ONLINE (uuid and name are public) while the player is offline, kept alive.
    const squat = await online(squatter, player);
    expect(squat.status).toBe(200);
    expect(
      (await onSquatter.request('resume_session', { uid: player.uid, accessToken: squat.body.accessToken })).data,
    ).toEqual({ uid: player.uid, ok: true, expiresIn: 600 });

    // ONLINE proves nothing more than the squatter's ONLINE did: 409 as the spec says.
    const blocked = await online(legit, player);
    expect(blocked.status).toBe(409);
    expect(blocked.body).toEqual({ error: 'SESSION_CONFLICT', message: expect.any(String) });

    // The Net Token is proof the squatter lacked: the session is taken over.
    const taken = await withToken(legit, player);
    expect(taken.status).toBe(200);
    expect(taken.body).toMatchObject({ uid: player.uid, username: player.username });
    expect(await onSquatter.next((frame) => frame.event === 'kick_player')).toEqual({
      event: 'kick_player',
      data: { uid: player.uid, message: TAKEOVER_KICK, reason: 'takeover', until: '' },
    });
    await sleep(200);
    expect(onLegit.frames.filter((frame) => frame.event === 'kick_player')).toEqual([]);
    expect(await sessionsOf(player.uid)).toEqual([
      { server_id: squatter.serverID, mode: 'ONLINE', proven: false, logout_reason: 'takeover' },
      { server_id: legit.serverID, mode: 'TOKEN', proven: true, logout_reason: null },
    ]);
    expect(await takeoversOf(player.uid)).toEqual([
      { from_server_id: squatter.serverID, to_server_id: legit.serverID, proof: 'TOKEN' },
    ]);

    // The squatter's token is dead, and it cannot take the session back: it was opened with proof.
    expect(
      (await onSquatter.request('resume_session', { uid: player.uid, accessToken: squat.body.accessToken })).data,
    ).toEqual({
      uid: player.uid,
      ok: false,
      error: 'UNAUTHORIZED',
      message: 'Invalid or expired player access token',
    });
    expect((await online(squatter, player)).status).toBe(409);
    expect(await sessionsOf(player.uid)).toHaveLength(2);

    // Counted, and shown to staff: the player's profile and both servers' conflicts.
    expect((await takeoverMetric('TOKEN')) ?? 0).toBe(takeoversBefore + 1);
    const profile = await app.admin.get(`/admin/players/${player.uid}`);
    expect(profile.status).toBe(200);
    expect(profile.body.takeovers).toEqual([
      {
        takenAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/),
        proof: 'TOKEN',
        fromServerID: squatter.serverID,
        fromServerName: squatter.body.serverName,
        toServerID: legit.serverID,
        toServerName: legit.body.serverName,
      },
    ]);
    expect(
      (profile.body.sessions as Array<Record<string, unknown>>).map(
        ({ serverID, mode, proven, live, logoutReason }) => ({
          serverID,
          mode,
          proven,
          live,
          logoutReason,
        }),
      ),
    ).toEqual([
      { serverID: legit.serverID, mode: 'TOKEN', proven: true, live: true, logoutReason: null },
      { serverID: squatter.serverID, mode: 'ONLINE', proven: false, live: false, logoutReason: 'takeover' },
    ]);
    // The squatter: one session taken over, one login kept out, one ONLINE claim refused (its
    // attempt to take the player back); the legit server: its refused ONLINE login.
    expect(await conflictsOf(squatter.serverID)).toEqual({ takenOver: 1, onlineRefused: 1, keptOut: 1 });
    expect(await conflictsOf(legit.serverID)).toEqual({ takenOver: 0, onlineRefused: 1, keptOut: 0 });
  });

  it('a session opened with proof keeps answering 409, to proof and ONLINE alike', async () => {
    const player = await genuinePlayer();
    const [holder, other] = [await onlineServer(app), await onlineServer(app)];
    const onHolder = await socketOf(holder);
    await loginPlayer(app, holder, player);
    expect((await withToken(other, player)).status).toBe(409);
    expect((await online(other, player)).status).toBe(409);
    await sleep(200);
    expect(onHolder.frames.filter((frame) => frame.event === 'kick_player')).toEqual([]);
    expect(await sessionsOf(player.uid)).toEqual([
      { server_id: holder.serverID, mode: 'TOKEN', proven: true, logout_reason: null },
    ]);
    expect(await takeoversOf(player.uid)).toEqual([]);
    // A proven holder keeps nobody out by squatting: only the claimer's ONLINE attempt is counted.
    expect(await conflictsOf(holder.serverID)).toEqual({ takenOver: 0, onlineRefused: 0, keptOut: 0 });
    expect(await conflictsOf(other.serverID)).toEqual({ takenOver: 0, onlineRefused: 1, keptOut: 0 });
  });

  it('through the server that holds the session, proof does not take it over: 409', async () => {
    const player = await genuinePlayer();
    const squatter = await onlineServer(app);
    expect((await online(squatter, player)).status).toBe(200);
    expect((await withToken(squatter, player)).status).toBe(409);
    expect(await sessionsOf(player.uid)).toEqual([
      { server_id: squatter.serverID, mode: 'ONLINE', proven: false, logout_reason: null },
    ]);
  });

  it('a banned player gets 430 and nothing is taken over', async () => {
    const player = await genuinePlayer();
    const [squatter, legit] = [await onlineServer(app), await onlineServer(app)];
    expect((await online(squatter, player)).status).toBe(200);
    await app.sql(`INSERT INTO player_ban (uid, reason, message) VALUES ($1, 'x', 'x')`, [player.uid]);
    expect((await withToken(legit, player)).status).toBe(430);
    expect(await sessionsOf(player.uid)).toEqual([
      { server_id: squatter.serverID, mode: 'ONLINE', proven: false, logout_reason: null },
    ]);
  });

  it('a resume token issued to a proven session is proof, until a login replaces it as decisions.md §4 says', async () => {
    const player = await genuinePlayer();
    const [home, squatter, legit] = [await onlineServer(app), await onlineServer(app), await onlineServer(app)];
    const onSquatter = await socketOf(squatter);
    const storedToken = () =>
      app.sql<{ token_hash: string; proven: boolean }>(
        'SELECT token_hash, proven FROM player_resume_token WHERE uid = $1',
        [player.uid],
      );
    // The player's own session (Net Token) turns continueEnabled on: a proven resume token.
    const own = await loginPlayer(app, home, player);
    const options = await app.http.post(
      '/player/options',
      { uid: player.uid, accessToken: own.accessToken, options: { continueEnabled: true } },
      { token: home.accessToken },
    );
    expect(options.status).toBe(200);
    const resumeToken = options.body.resumeToken as string;
    expect(resumeToken).toMatch(/^\S{43,}$/);
    expect((await storedToken()).map((row) => row.proven)).toEqual([true]);

    // While the player's proven session on `home` is live, nothing takes it over: an ONLINE squat
    // and a login with the resume token through another server both answer 409.
    expect((await online(squatter, player)).status).toBe(409);
    const moved = await withResume(legit, resumeToken);
    expect(moved.status).toBe(409);
    expect(
      (
        await app.http.post(
          '/player/logout',
          { uid: player.uid, accessToken: own.accessToken },
          { token: home.accessToken },
        )
      ).status,
    ).toBe(204);

    // A squat while the player is away: decisions.md §4 gives every login answer a fresh resume
    // token while continueEnabled is on and the previous one stops working, so the squatter's
    // login replaces the player's proven token with one that proves nothing.
    const squat = await online(squatter, player);
    expect(squat.status).toBe(200);
    expect(squat.body.resumeToken).toMatch(/^\S{43,}$/);
    expect(squat.body.resumeToken).not.toBe(resumeToken);
    expect((await storedToken()).map((row) => row.proven)).toEqual([false]);
    expect((await withResume(legit, resumeToken)).status).toBe(401);
    // The Net Token is the proof that always works: it takes the session over.
    const back = await withToken(legit, player);
    expect(back.status).toBe(200);
    expect(await onSquatter.next((frame) => frame.event === 'kick_player')).toEqual({
      event: 'kick_player',
      data: { uid: player.uid, message: TAKEOVER_KICK, reason: 'takeover', until: '' },
    });
    expect(await takeoversOf(player.uid)).toEqual([
      { from_server_id: squatter.serverID, to_server_id: legit.serverID, proof: 'TOKEN' },
    ]);
    // The takeover's answer carries a fresh resume token, proven like its session; a login with it
    // through another server is proof again.
    expect(back.body.resumeToken).toMatch(/^\S{43,}$/);
    expect((await storedToken()).map((row) => row.proven)).toEqual([true]);
  });

  it('a squatter cannot launder ONLINE into proof: a resume token issued to its session proves nothing', async () => {
    const player = await genuinePlayer();
    const [squatter, accomplice, legit] = [await onlineServer(app), await onlineServer(app), await onlineServer(app)];
    // No proven resume token exists: the squatter's session turns continueEnabled on and gets one.
    const squat = await online(squatter, player);
    const options = await app.http.post(
      '/player/options',
      { uid: player.uid, accessToken: squat.body.accessToken, options: { continueEnabled: true } },
      { token: squatter.accessToken },
    );
    const squatResume = options.body.resumeToken as string;
    expect(squatResume).toMatch(/^\S{43,}$/);
    expect(await app.sql('SELECT proven FROM player_resume_token WHERE uid = $1', [player.uid])).toEqual([
      { proven: false },
    ]);
    expect(
      (
        await app.http.post(
          '/player/logout',
          { uid: player.uid, accessToken: squat.body.accessToken },
          { token: squatter.accessToken },
        )
      ).status,
    ).toBe(204);

    // Logged in again with its own resume token, through another server: still without proof.
    const relaunched = await withResume(accomplice, squatResume);
    expect(relaunched.status).toBe(200);
    // That token cannot take a session over either.
    expect((await withResume(legit, relaunched.body.resumeToken as string)).status).toBe(409);
    // The player's Net Token can.
    expect((await withToken(legit, player)).status).toBe(200);
    expect(
      (await sessionsOf(player.uid)).map(({ mode, proven, logout_reason }) => [mode, proven, logout_reason]),
    ).toEqual([
      ['ONLINE', false, 'logout'],
      ['OFFLINE_REFRESH', false, 'takeover'],
      ['TOKEN', true, null],
    ]);
  });

  // A login commits on another connection while this one's transaction is open: PostgreSQL only.
  (testDatabaseServerUrl() ? it : it.skip)(
    'a resume token used by a login that committed while another waited opens no second session (401)',
    async () => {
      const player = await genuinePlayer();
      const [a, b, c] = [await onlineServer(app), await onlineServer(app), await onlineServer(app)];
      expect((await app.admin.put('/admin/session-handover', { mode: 'all' })).status).toBe(200);
      try {
        const own = await loginPlayer(app, a, player);
        const options = await app.http.post(
          '/player/options',
          { uid: player.uid, accessToken: own.accessToken, options: { continueEnabled: true } },
          { token: a.accessToken },
        );
        const resumeToken = options.body.resumeToken as string;
        // Both checked the token before either locked the player: the one on b commits first.
        const players = app.get(PlayerRepository);
        const lockByUid = players.lockByUid.bind(players);
        let first: HttpResponse | undefined;
        const spy = jest.spyOn(players, 'lockByUid').mockImplementationOnce(async (...args) => {
          first = await withResume(b, resumeToken);
          return lockByUid(...args);
        });
        let replay: HttpResponse;
        try {
          replay = await withResume(c, resumeToken);
        } finally {
          spy.mockRestore();
        }
        expect(first?.status).toBe(200);
        expect({ status: replay.status, body: replay.body as unknown }).toEqual({
          status: 401,
          body: { error: 'UNAUTHORIZED', message: 'Invalid or expired resume token' },
        });
        expect(
          (await sessionsOf(player.uid)).map(({ server_id, logout_reason }) => [server_id, logout_reason]),
        ).toEqual([
          [a.serverID, 'handover'],
          [b.serverID, null],
        ]);
      } finally {
        expect((await app.admin.put('/admin/session-handover', { mode: 'off' })).status).toBe(200);
      }
    },
  );

  it('inside one network the handover applies first (reason handover)', async () => {
    const player = await genuinePlayer();
    const [a, b] = [await onlineServer(app), await onlineServer(app)];
    expect((await app.admin.put('/admin/session-handover', { mode: 'all' })).status).toBe(200);
    try {
      expect((await online(a, player)).status).toBe(200);
      expect((await withToken(b, player)).status).toBe(200);
      expect((await sessionsOf(player.uid)).map((row) => row.logout_reason)).toEqual(['handover', null]);
      expect(await takeoversOf(player.uid)).toEqual([]);
    } finally {
      expect((await app.admin.put('/admin/session-handover', { mode: 'off' })).status).toBe(200);
    }
  });
});
