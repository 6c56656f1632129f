import WebSocket from 'ws';
import { createPlayer, randomUuid, TestPlayer } from '../factories/player.factory';
import { createServer, loginServer, onlineServer, TestServerSession } from '../factories/server.factory';
import { HttpForwarder, requestFrom } from '../support/http-forwarder';
import { HttpResponse } from '../support/http';
import { LogCapture } from '../support/log-capture';
import { multiInstanceAvailable, startTestApp, TestApp } from '../support/test-app';
import { eventually, sleep } from '../support/wait';

/** The limits at their defaults (decisions.md §1): the test environment raises them otherwise. */
const DEFAULT_LIMITS = {
  THROTTLE_LOGIN_LIMIT: '',
  THROTTLE_LOGIN_TTL_SECONDS: '',
  THROTTLE_PLAYER_LOGIN_LIMIT: '',
  THROTTLE_PLAYER_LOGIN_TTL_SECONDS: '',
};
const LOGIN_BODY = { pluginVersion: 10, pluginSHA: 'sha-test' };
const RATE_LIMITED = { error: 'RATE_LIMITED', message: expect.stringMatching(/^Too many requests; retry in \d+ s$/) };

const tokenLogin = (
  app: TestApp,
  session: TestServerSession,
  authToken: string,
  extra: Record<string, unknown> = {},
): Promise<HttpResponse> =>
  app.http.post('/player/login', { mode: 'TOKEN', version: 1, authToken, ...extra }, { token: session.accessToken });

/** Runs `tasks` with at most `width` in flight, keeping their order. */
async function inBatches<T>(tasks: Array<() => Promise<T>>, width: number): Promise<T[]> {
  const results: T[] = [];
  for (let i = 0; i < tasks.length; i += width)
    results.push(...(await Promise.all(tasks.slice(i, i + width).map((task) => task()))));
  return results;
}

function countStatuses(statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

describe('Login limits at their defaults', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ env: DEFAULT_LIMITS });
  });
  afterAll(async () => {
    await app.close();
  });

  it('lets a game server with 200 players restart at once: 0 × 429 on its player logins and logouts', async () => {
    const server = await createServer(app);
    const players: TestPlayer[] = await inBatches(
      Array.from({ length: 200 }, () => () => createPlayer(app)),
      20,
    );

    const first = await loginServer(app, server);
    const logins = await inBatches(
      players.map((player) => () => tokenLogin(app, first, player.netToken)),
      20,
    );
    // The plugin logs every player out at shutdown, then the server logs in again and its players return.
    const logouts = await inBatches(
      players.map(
        (player, i) => () =>
          app.http.post(
            '/player/logout',
            { uid: player.uid, accessToken: logins[i].body.accessToken },
            { token: first.accessToken },
          ),
      ),
      20,
    );
    const second = await loginServer(app, server);
    const returns = await inBatches(
      players.map((player) => () => tokenLogin(app, second, player.netToken)),
      20,
    );

    expect(countStatuses(logins.map((r) => r.status))).toEqual({ 200: 200 });
    expect(countStatuses(logouts.map((r) => r.status))).toEqual({ 204: 200 });
    expect(countStatuses(returns.map((r) => r.status))).toEqual({ 200: 200 });
    const open = await app.sql<{ count: string }>(
      `SELECT count(*)::text AS count FROM player_session ps JOIN server_session ss ON ss.id = ps.server_session_id
        WHERE ps.logged_out_at IS NULL AND ss.server_id = $1 AND ss.ended_at IS NULL`,
      [server.serverID],
    );
    expect(open[0].count).toBe('200');
  });

  it('counts player logins and logouts per calling server session: one busy server leaves the others their budget', async () => {
    const limited = await startTestApp({ env: { THROTTLE_PLAYER_LOGIN_LIMIT: '3' } });
    try {
      const busy = await onlineServer(limited);
      const quiet = await onlineServer(limited);
      const player = await createPlayer(limited);
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await tokenLogin(limited, busy, 'wrong-net-token')).status);
      const refused = await tokenLogin(limited, busy, player.netToken);
      expect(statuses).toEqual([401, 401, 401]);
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual(RATE_LIMITED);
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      // The logout of the busy session shares its budget.
      expect(
        (
          await limited.http.post(
            '/player/logout',
            { uid: player.uid, accessToken: 'x'.repeat(43) },
            { token: busy.accessToken },
          )
        ).status,
      ).toBe(429);
      // Another game server, same address: its own budget.
      const other = await tokenLogin(limited, quiet, player.netToken);
      expect(other.status).toBe(200);
      expect(other.body.uid).toBe(player.uid);
    } finally {
      await limited.close();
    }
  });

  it('does not let a flood of bad bootstrap tokens from one address keep a valid game server out', async () => {
    const server = await createServer(app);
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++)
      statuses.push((await app.http.post('/server/login', LOGIN_BODY, { token: `garbage-${i}` })).status);
    expect(statuses).toEqual(Array.from({ length: 20 }, () => 401));

    // The flood itself is stopped: the address is over its budget of failures.
    const flooded = await app.http.post('/server/login', LOGIN_BODY, { token: 'garbage-21' });
    expect(flooded.status).toBe(429);
    expect(flooded.body).toEqual(RATE_LIMITED);
    expect(Number(flooded.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await app.http.post('/server/login', LOGIN_BODY, { token: null })).status).toBe(429);

    // A valid credential from the same address is not a failure and gets in.
    const valid = await app.http.post('/server/login', LOGIN_BODY, { token: server.bootstrapToken });
    expect(valid.status).toBe(200);
    expect(valid.body.serverID).toBe(server.serverID);
    const sessions = await app.sql<{ count: string }>(
      'SELECT count(*)::text AS count FROM server_session WHERE server_id = $1 AND ended_at IS NULL',
      [server.serverID],
    );
    expect(sessions[0].count).toBe('1');
  });

  it('limits server logins per credential: THROTTLE_LOGIN_LIMIT logins a window, then 429, other credentials unaffected', async () => {
    const limited = await startTestApp({ env: { THROTTLE_LOGIN_LIMIT: '2' } });
    try {
      const [a, b] = [await createServer(limited), await createServer(limited)];
      const statuses = [];
      for (let i = 0; i < 3; i++)
        statuses.push((await limited.http.post('/server/login', LOGIN_BODY, { token: a.bootstrapToken })).status);
      expect(statuses).toEqual([200, 200, 429]);
      expect((await limited.http.post('/server/login', LOGIN_BODY, { token: b.bootstrapToken })).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});

describe('Wrong Net Tokens', () => {
  let app: TestApp;
  let session: TestServerSession;

  beforeAll(async () => {
    app = await startTestApp({
      env: {
        THROTTLE_TOKEN_SESSION_FAILURES: '3',
        THROTTLE_TOKEN_SESSION_WINDOW_SECONDS: '3',
        THROTTLE_TOKEN_SERVER_FAILURES: '5',
        THROTTLE_TOKEN_SERVER_WINDOW_SECONDS: '60',
      },
    });
    session = await onlineServer(app);
  });
  afterAll(async () => {
    await app.close();
  });

  const liveSessions = async (uid: number) =>
    app.sql<{ server_id: number }>(
      `SELECT ss.server_id FROM player_session ps JOIN server_session ss ON ss.id = ps.server_session_id
        WHERE ps.uid = $1 AND ps.logged_out_at IS NULL`,
      [uid],
    );

  it("never keep a player out of another server: wrong tokens naming a victim spend only the sender's budget", async () => {
    const uuid = randomUuid();
    const victim = await createPlayer(app, { uuid });
    const attacker = await onlineServer(app);
    const statuses = [];
    for (let i = 0; i < 10; i++)
      statuses.push((await tokenLogin(app, attacker, `wrong-${i}`, { uuid, username: victim.username })).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429, 429, 429, 429, 429, 429]);

    // The victim's right token, through any other server, as if nothing happened.
    const login = await tokenLogin(app, session, victim.netToken, { uuid, username: victim.username });
    expect(login.status).toBe(200);
    expect(login.body.uid).toBe(victim.uid);
    expect(await liveSessions(victim.uid)).toEqual([{ server_id: session.serverID }]);
  });

  it('bound guessing per server session: the budget spent, every TOKEN login through it is 429 until the window ends', async () => {
    const own = await onlineServer(app);
    const player = await createPlayer(app);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await tokenLogin(app, own, `wrong-${i}`)).status);
    expect(statuses).toEqual([401, 401, 401]);

    const spent = await tokenLogin(app, own, 'wrong-3');
    expect(spent.status).toBe(429);
    expect(spent.body).toEqual(RATE_LIMITED);
    const retryAfter = Number(spent.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(3);
    // The right token too (the token is not even looked up), and nothing is stored.
    expect((await tokenLogin(app, own, player.netToken)).status).toBe(429);
    expect(await liveSessions(player.uid)).toEqual([]);

    await sleep(3_100);
    const back = await tokenLogin(app, own, player.netToken);
    expect(back.status).toBe(200);
    expect(back.body.uid).toBe(player.uid);
  });

  it('count only wrong tokens: right ones, however many, leave the budget as it was', async () => {
    const own = await onlineServer(app);
    const players = [await createPlayer(app), await createPlayer(app), await createPlayer(app)];
    const statuses = [(await tokenLogin(app, own, 'wrong-a')).status, (await tokenLogin(app, own, 'wrong-b')).status];
    for (const player of players) statuses.push((await tokenLogin(app, own, player.netToken)).status);
    statuses.push((await tokenLogin(app, own, 'wrong-c')).status);
    statuses.push((await tokenLogin(app, own, 'wrong-d')).status);
    expect(statuses).toEqual([401, 401, 200, 200, 200, 401, 429]);
  });

  it('cannot be overshot by sending guesses at once', async () => {
    const own = await onlineServer(app);
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => tokenLogin(app, own, `burst-${i}`)));
    expect(countStatuses(answers.map((answer) => answer.status))).toEqual({ 401: 3, 429: 9 });
  });

  it('bound guessing per server across its sessions: a new server login opens no new budget', async () => {
    const server = await createServer(app);
    const player = await createPlayer(app);
    const first = await loginServer(app, server);
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await tokenLogin(app, first, `first-${i}`)).status);
    const second = await loginServer(app, server);
    for (let i = 0; i < 3; i++) statuses.push((await tokenLogin(app, second, `second-${i}`)).status);
    expect(statuses).toEqual([401, 401, 401, 429, 401, 401, 429]);

    const spent = await tokenLogin(app, second, player.netToken);
    expect(spent.status).toBe(429);
    // The server's window (60 s) is what is left to wait, not the session's (3 s).
    expect(Number(spent.headers.get('retry-after'))).toBeGreaterThan(50);
    await sleep(3_100);
    expect((await tokenLogin(app, second, player.netToken)).status).toBe(429);
    // Other servers keep their own budgets.
    expect((await tokenLogin(app, session, player.netToken)).status).toBe(200);
  });
});

describe('Behind a reverse proxy (TRUST_PROXY)', () => {
  const capture = new LogCapture();
  let trusting: TestApp;
  let forwarder: HttpForwarder;

  beforeAll(async () => {
    trusting = await startTestApp({
      env: { TRUST_PROXY: '127.0.0.1', THROTTLE_LOGIN_LIMIT: '3', LOG_LEVEL: 'info' },
      logDestination: capture,
    });
    forwarder = await HttpForwarder.start(Number(new URL(trusting.baseUrl).port));
  });
  afterAll(async () => {
    await forwarder.close();
    await trusting.close();
  });

  it('counts failures per client address, records it as serverIP, in the request log and with the WebSocket', async () => {
    const server = await createServer(trusting);
    const from = (address: string, token: string | undefined) =>
      requestFrom(address, forwarder.port, 'POST', '/server/login', { token, body: LOGIN_BODY });

    const flood = [];
    for (let i = 0; i < 4; i++) flood.push((await from('127.0.0.2', `garbage-${i}`)).status);
    expect(flood).toEqual([401, 401, 401, 429]);
    // Another game server behind the same proxy: its own address, its own budget.
    expect((await from('127.0.0.3', 'garbage-x')).status).toBe(401);

    const login = await from('127.0.0.3', server.bootstrapToken);
    expect(login.status).toBe(200);
    expect(login.body.serverIP).toBe('127.0.0.3');
    const stored = await trusting.sql<{ clientIp: string }>(
      'SELECT client_ip AS "clientIp" FROM server_session WHERE server_id = $1',
      [server.serverID],
    );
    expect(stored).toEqual([{ clientIp: '127.0.0.3' }]);
    await eventually(
      () => Promise.resolve(capture.requestLine(String(login.headers['x-request-id']))?.client === '127.0.0.3'),
      'the request log names the client',
    );

    const socket = new WebSocket(`ws://127.0.0.1:${forwarder.port}/ws`, {
      headers: { Authorization: `Bearer ${login.body.accessToken as string}` },
      localAddress: '127.0.0.4',
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    try {
      await eventually(async () => {
        const listed = await trusting.admin.get('/admin/realtime/connections');
        return (listed.body as Array<{ serverID: number; remoteAddress: string }>).some(
          (c) => c.serverID === server.serverID && c.remoteAddress === '127.0.0.4',
        );
      }, 'the connection record names the client');
    } finally {
      socket.close();
    }
  });

  it('without TRUST_PROXY, every caller behind the proxy is the proxy', async () => {
    const plain = await startTestApp({ env: { THROTTLE_LOGIN_LIMIT: '3' } });
    const proxy = await HttpForwarder.start(Number(new URL(plain.baseUrl).port));
    try {
      const server = await createServer(plain);
      const statuses = [];
      for (let i = 0; i < 3; i++)
        statuses.push(
          (
            await requestFrom('127.0.0.2', proxy.port, 'POST', '/server/login', {
              token: `garbage-${i}`,
              body: LOGIN_BODY,
            })
          ).status,
        );
      statuses.push(
        (await requestFrom('127.0.0.3', proxy.port, 'POST', '/server/login', { token: 'garbage-y', body: LOGIN_BODY }))
          .status,
      );
      expect(statuses).toEqual([401, 401, 401, 429]);
      const login = await requestFrom('127.0.0.3', proxy.port, 'POST', '/server/login', {
        token: server.bootstrapToken,
        body: LOGIN_BODY,
      });
      expect(login.status).toBe(200);
      expect(login.body.serverIP).toBe('127.0.0.1');
    } finally {
      await proxy.close();
      await plain.close();
    }
  });
});

(multiInstanceAvailable() ? describe : describe.skip)('Two instances share every login limit through Redis', () => {
  let a: TestApp;
  let b: TestApp;
  const env = {
    THROTTLE_LOGIN_LIMIT: '2',
    THROTTLE_PLAYER_LOGIN_LIMIT: '3',
    THROTTLE_TOKEN_SESSION_FAILURES: '2',
    THROTTLE_TOKEN_SERVER_FAILURES: '3',
  };

  beforeAll(async () => {
    a = await startTestApp({ env });
    b = await startTestApp({ shareWith: a, env });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it('server logins of one credential', async () => {
    const server = await createServer(a);
    const statuses = [
      (await a.http.post('/server/login', LOGIN_BODY, { token: server.bootstrapToken })).status,
      (await b.http.post('/server/login', LOGIN_BODY, { token: server.bootstrapToken })).status,
      (await a.http.post('/server/login', LOGIN_BODY, { token: server.bootstrapToken })).status,
    ];
    expect(statuses).toEqual([200, 200, 429]);
  });

  it('failed server logins of one address', async () => {
    const server = await createServer(a);
    const statuses = [
      (await a.http.post('/server/login', LOGIN_BODY, { token: 'bad-1' })).status,
      (await b.http.post('/server/login', LOGIN_BODY, { token: 'bad-2' })).status,
      (await a.http.post('/server/login', LOGIN_BODY, { token: 'bad-3' })).status,
    ];
    expect(statuses).toEqual([401, 401, 429]);
    expect((await b.http.post('/server/login', LOGIN_BODY, { token: server.bootstrapToken })).status).toBe(200);
  });

  it('player logins of one server session', async () => {
    const session = await onlineServer(a);
    const player = await createPlayer(a);
    const statuses = [
      (await tokenLogin(a, session, 'w1')).status,
      (await tokenLogin(b, session, 'w2')).status,
      // The logout shares the budget (a wrong Net Token more would spend the guesses' budget first).
      (
        await a.http.post(
          '/player/logout',
          { uid: player.uid, accessToken: 'x'.repeat(43) },
          { token: session.accessToken },
        )
      ).status,
      (await tokenLogin(b, session, player.netToken)).status,
    ];
    expect(statuses).toEqual([401, 401, 401, 429]);
  });

  it('wrong Net Tokens of one server session, and of one server', async () => {
    const server = await createServer(a);
    const player = await createPlayer(a);
    const first = await loginServer(a, server);
    const statuses = [
      (await tokenLogin(a, first, 'wrong-1')).status,
      (await tokenLogin(b, first, 'wrong-2')).status,
      (await tokenLogin(a, first, player.netToken)).status,
    ];
    const second = await loginServer(b, server);
    statuses.push((await tokenLogin(b, second, 'wrong-3')).status);
    statuses.push((await tokenLogin(a, second, 'wrong-4')).status);
    statuses.push((await tokenLogin(a, second, player.netToken)).status);
    expect(statuses).toEqual([401, 401, 429, 401, 429, 429]);
    // Another server, on either instance, is not concerned.
    expect((await tokenLogin(b, await onlineServer(b), player.netToken)).status).toBe(200);
  });
});
