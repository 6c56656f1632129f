import { onlineServer, TestServerSession } from '../factories/server.factory';
import { createPlayer, loginPlayer, TestPlayer, TestPlayerSession } from '../factories/player.factory';
import { gameplayPayload, uploadPlay } from '../factories/upload.factory';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * The home server moves only to another scope (issue #44; docs/decisions.md "Scoped boards: groups
 * and countries"): a login whose server is in the home's group (under the setting in force at the
 * login; "no group" for a server in none) and country writes nothing beyond the login's own row;
 * another group or another country moves the home and its copies on the board rows. Both login
 * paths: the one-round-trip login and the transactional one (handover, takeover).
 */

let time = Date.now() - 3_600_000;

interface Stored {
  player: number | null;
  rating: number | null;
  bests: Array<number | null> | null;
}

describe('Home server moves only to another group or country', () => {
  let app: TestApp;
  // g1: a, b (DE) and d (FR); g2: g, h (DE); e, f (DE) and j (FR) in no group.
  let a: TestServerSession;
  let b: TestServerSession;
  let d: TestServerSession;
  let e: TestServerSession;
  let f: TestServerSession;
  let g: TestServerSession;
  let h: TestServerSession;
  let j: TestServerSession;
  const groups = () => [
    { name: 'g1', serverIDs: [a.serverID, b.serverID, d.serverID] },
    { name: 'g2', serverIDs: [g.serverID, h.serverID] },
  ];

  const stored = async (uid: number): Promise<Stored> =>
    (
      await app.sql<{ player: number | null; rating: number | null; bests: Array<number | null> | null }>(
        `SELECT p.home_server_id AS player, r.home_server_id AS rating,
                (SELECT array_agg(c.home_server_id ORDER BY c.level_id) FROM player_chart_best c WHERE c.uid = p.uid) AS bests
           FROM player p LEFT JOIN player_rating r ON r.uid = p.uid WHERE p.uid = $1`,
        [uid],
      )
    )[0];
  const at = (server: TestServerSession): Stored => ({
    player: server.serverID,
    rating: server.serverID,
    bests: [server.serverID, server.serverID],
  });
  /** The row versions of the player's board rows and player row (a rewrite changes them). */
  const rowVersions = async (uid: number) =>
    (
      await app.sql<{ x: string }>(
        `(SELECT xmin::text AS x FROM player_rating WHERE uid = $1)
         UNION ALL (SELECT xmin::text FROM player_chart_best WHERE uid = $1 ORDER BY level_id)`,
        [uid],
      )
    ).map((row) => row.x);
  const logout = async (server: TestServerSession, session: TestPlayerSession) =>
    expect(
      (
        await app.http.post(
          '/player/logout',
          { uid: session.uid, accessToken: session.accessToken },
          { token: server.accessToken },
        )
      ).status,
    ).toBe(204);
  /** A one-round-trip login (no live session), logged out at once. */
  const hop = async (server: TestServerSession, player: TestPlayer) =>
    logout(server, await loginPlayer(app, server, player));
  /** A login while the player's session is live: the transactional path (handover or takeover). */
  const loginLive = async (server: TestServerSession, player: TestPlayer): Promise<TestPlayerSession> => {
    const response = await app.http.post(
      '/player/login',
      { mode: 'TOKEN', version: 1, authToken: player.netToken },
      { token: server.accessToken },
    );
    expect(response.status).toBe(200);
    return { ...player, accessToken: response.body.accessToken, profile: response.body };
  };
  const onBoard = async (query: string, uid: number): Promise<boolean> => {
    const response = await app.http.get(`/server/leaderboards/${query}`, { token: a.accessToken });
    expect([query, response.status]).toEqual([query, 200]);
    return (response.body.entries as Array<{ uid: number }>).some((entry) => entry.uid === uid);
  };
  /** A player whose home is `server`, with a rating and two bests carrying it. */
  const playerAt = async (server: TestServerSession): Promise<TestPlayer> => {
    const player = await createPlayer(app);
    const session = await loginPlayer(app, server, player);
    for (const levelId of [861, 862])
      await uploadPlay(app, server, session, gameplayPayload(levelId, (time += 1_000), { acc: 97 }));
    await logout(server, session);
    expect(await stored(player.uid)).toEqual(at(server));
    return player;
  };
  const putGroups = async (body: Record<string, unknown>) =>
    expect((await app.admin.put('/admin/session-handover', body)).status).toBe(200);

  beforeAll(async () => {
    app = await startTestApp();
    a = await onlineServer(app, { country: 'DE' });
    b = await onlineServer(app, { country: 'DE' });
    d = await onlineServer(app, { country: 'FR' });
    e = await onlineServer(app, { country: 'DE' });
    f = await onlineServer(app, { country: 'DE' });
    g = await onlineServer(app, { country: 'DE' });
    h = await onlineServer(app, { country: 'DE' });
    j = await onlineServer(app, { country: 'FR' });
    const charts = [861, 862].map((levelId) => ({
      levelId,
      name: `Chart ${levelId}`,
      difficultyConstant: 10,
      version: '1.0',
      active: true,
    }));
    expect((await app.admin.put('/admin/charts', charts)).status).toBe(200);
  });
  beforeEach(() => putGroups({ mode: 'groups', groups: groups() }));
  afterAll(() => app.close());

  it('a hop within one group and country writes nothing; another country or group moves the home and its boards', async () => {
    const p = await playerAt(a);
    const before = await rowVersions(p.uid);
    await hop(b, p); // g1, DE
    expect(await stored(p.uid)).toEqual(at(a));
    expect(await rowVersions(p.uid)).toEqual(before);
    expect([await onBoard('atp?group=g1', p.uid), await onBoard('atp?country=DE', p.uid)]).toEqual([true, true]);

    await hop(d, p); // g1, FR: another country
    expect(await stored(p.uid)).toEqual(at(d));
    expect([await onBoard('atp?group=g1', p.uid), await onBoard('atp?country=DE', p.uid)]).toEqual([true, false]);
    expect(await onBoard('charts/861?country=FR', p.uid)).toBe(true);

    await hop(a, p); // g1, DE: another country
    expect(await stored(p.uid)).toEqual(at(a));
    await hop(g, p); // g2, DE: another group
    expect(await stored(p.uid)).toEqual(at(g));
    expect([await onBoard('atp?group=g1', p.uid), await onBoard('atp?group=g2', p.uid)]).toEqual([false, true]);
    expect(await onBoard('charts/862?country=DE', p.uid)).toBe(true);
  });

  it('servers in no group are one scope per country; a grouped server is another scope', async () => {
    const p = await playerAt(e);
    const before = await rowVersions(p.uid);
    await hop(f, p); // no group, DE
    expect(await stored(p.uid)).toEqual(at(e));
    expect(await rowVersions(p.uid)).toEqual(before);
    await hop(j, p); // no group, FR
    expect(await stored(p.uid)).toEqual(at(j));
    await hop(e, p);
    await hop(h, p); // g2, DE: a group
    expect(await stored(p.uid)).toEqual(at(h));
    await hop(f, p); // back to no group
    expect(await stored(p.uid)).toEqual(at(f));
    expect(await onBoard('atp?group=g2', p.uid)).toBe(false);

    // A setting not in mode groups: every server is in no group, only the country counts.
    await putGroups({ mode: 'all' });
    await hop(g, p);
    expect(await stored(p.uid)).toEqual(at(f));
  });

  it('after a regrouping, the next login compares under the new setting, even one another instance wrote', async () => {
    const p = await playerAt(a);
    const q = await playerAt(a);
    // a leaves g1 for g2 (as another instance writes it: this one still holds the old setting).
    const regrouped = [
      { name: 'g1', serverIDs: [b.serverID, d.serverID] },
      { name: 'g2', serverIDs: [g.serverID, h.serverID, a.serverID] },
    ];
    await hop(b, q); // this instance reads the setting in force now, the old one
    await app.sql(`UPDATE service_setting SET value = $1::jsonb WHERE key = 'session_handover'`, [
      JSON.stringify({ mode: 'groups', groups: regrouped, modes: ['ONLINE', 'TOKEN', 'OFFLINE_REFRESH'] }),
    ]);
    // Stored homes stay until their player's next login.
    expect(await stored(p.uid)).toEqual(at(a));
    expect(await onBoard('atp?group=g2', p.uid)).toBe(true);
    await hop(b, p); // a (g2) → b (g1): another group now
    expect(await stored(p.uid)).toEqual(at(b));
    expect([await onBoard('atp?group=g1', p.uid), await onBoard('atp?group=g2', p.uid)]).toEqual([true, false]);
    const before = await rowVersions(q.uid);
    await hop(g, q); // a (g2) → g (g2): the same group now
    expect(await stored(q.uid)).toEqual(at(a));
    expect(await rowVersions(q.uid)).toEqual(before);
  });

  it('the transactional login: a handover or a takeover moves the home only to another scope', async () => {
    const p = await playerAt(a);
    const before = await rowVersions(p.uid);
    await loginPlayer(app, a, p);
    await loginLive(b, p); // handover in g1, DE
    expect(await stored(p.uid)).toEqual(at(a));
    expect(await rowVersions(p.uid)).toEqual(before);
    const moved = await loginLive(d, p); // handover in g1 to FR
    expect(await stored(p.uid)).toEqual(at(d));
    await logout(d, moved);

    // Takeovers: a session without proof gives way to a login with proof outside the network.
    const q = await playerAt(e);
    const unproven = async () =>
      app.sql(`UPDATE player_session SET proven = false WHERE uid = $1 AND logged_out_at IS NULL`, [q.uid]);
    await loginPlayer(app, e, q);
    await unproven();
    const qBefore = await rowVersions(q.uid);
    await loginLive(f, q); // no group, DE
    expect(await stored(q.uid)).toEqual(at(e));
    expect(await rowVersions(q.uid)).toEqual(qBefore);
    await unproven();
    const last = await loginLive(j, q); // no group, FR
    expect(await stored(q.uid)).toEqual(at(j));
    await logout(j, last);
  });

  it("the previous release's calls (no group) keep its rule: the home moves to any other server", async () => {
    const p = await playerAt(a);
    const [session] = await app.sql<{ id: string }>(
      `SELECT id FROM server_session WHERE server_id = $1 AND ended_at IS NULL ORDER BY created_at DESC LIMIT 1`,
      [b.serverID],
    );
    // rhythmc_player_login as the previous release calls it: 12 arguments.
    const [login] = await app.sql<{ status: string }>(
      `SELECT status FROM rhythmc_player_login('TOKEN', $1, NULL, NULL, NULL, $2, repeat('e', 64), now() + interval '1 hour',
              1, repeat('f', 64), now() + interval '1 hour', now())`,
      [p.uid, session.id],
    );
    expect(login.status).toBe('ok');
    expect(await stored(p.uid)).toEqual(at(b));
    // rhythmc_player_move_home as its transactional login calls it: 2 arguments.
    await app.sql('SELECT rhythmc_player_move_home($1, $2)', [p.uid, a.serverID]);
    expect(await stored(p.uid)).toEqual(at(a));
  });
});
