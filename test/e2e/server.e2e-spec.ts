import { createHash } from 'node:crypto';
import { Client } from 'pg';
import { onlinePlayer } from '../factories/player.factory';
import { createServer, loginServer, onlineServer } from '../factories/server.factory';
import { testDatabaseServerUrl } from '../setup/test-env';
import { startTestApp, TestApp } from '../support/test-app';
import { eventually, sleep } from '../support/wait';

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

describe('Server sessions (POST /server/login, GET /server/refresh, POST /server/logout, GET /server/ping)', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  describe('POST /server/login', () => {
    it('answers the server session and stores only the token hash', async () => {
      const server = await createServer(app, { country: 'FR', ip: '203.0.113.7' });
      const response = await app.http.post(
        '/server/login',
        { pluginVersion: 12, pluginSHA: 'abc123' },
        { token: server.bootstrapToken },
      );

      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        serverID: server.serverID,
        serverName: server.serverName,
        assetServer: app.config.publicBaseUrl,
        serverIP: '203.0.113.7',
        country: 'FR',
        wsServer: `${app.config.publicBaseUrl.replace(/^http/, 'ws')}/ws`,
        accessToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        expiresIn: 600,
      });
      const rows = await app.sql(
        'SELECT token_hash, plugin_version, plugin_sha, ended_at FROM server_session WHERE server_id = $1',
        [server.serverID],
      );
      expect(rows).toEqual([
        { token_hash: sha256(response.body.accessToken), plugin_version: 12, plugin_sha: 'abc123', ended_at: null },
      ]);
      const stored = await app.sql('SELECT token_hash FROM server_credential WHERE server_id = $1', [server.serverID]);
      expect(stored).toEqual([{ token_hash: sha256(server.bootstrapToken) }]);
    });

    it('advertises the caller address as serverIP when the server has no configured ip', async () => {
      const server = await createServer(app);
      const session = await loginServer(app, server);
      expect(session.body.serverIP).toBe('127.0.0.1');
    });

    it('reads the legacy serverAuthToken body field when the header is absent', async () => {
      const server = await createServer(app);
      const response = await app.http.post(
        '/server/login',
        { pluginVersion: 1, pluginSHA: 'x', serverAuthToken: server.bootstrapToken },
        { token: null },
      );
      expect(response.status).toBe(200);
      expect(response.body.serverID).toBe(server.serverID);
    });

    it('prefers the header over the legacy field', async () => {
      const server = await createServer(app);
      const response = await app.http.post(
        '/server/login',
        { pluginVersion: 1, pluginSHA: 'x', serverAuthToken: server.bootstrapToken },
        { token: 'not-a-bootstrap-token' },
      );
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ error: 'UNAUTHORIZED', message: 'Invalid bootstrap token' });
    });

    it.each([
      ['no token at all', null],
      ['an unknown token', 'definitely-not-issued'],
    ])('answers 401 with %s', async (_label, token) => {
      const response = await app.http.post('/server/login', { pluginVersion: 1, pluginSHA: 'x' }, { token });
      expect(response.status).toBe(401);
      expect(response.body.error).toBe('UNAUTHORIZED');
      expect(typeof response.body.message).toBe('string');
    });

    it('does not accept a server access token as bootstrap token', async () => {
      const session = await onlineServer(app);
      const response = await app.http.post(
        '/server/login',
        { pluginVersion: 1, pluginSHA: 'x' },
        { token: session.accessToken },
      );
      expect(response.status).toBe(401);
    });

    it.each([
      [{ pluginSHA: 'x' }, 'pluginVersion'],
      [{ pluginVersion: '3', pluginSHA: 'x' }, 'pluginVersion'],
      [{ pluginVersion: 1.5, pluginSHA: 'x' }, 'pluginVersion'],
      [{ pluginVersion: -1, pluginSHA: 'x' }, 'pluginVersion'],
      [{ pluginVersion: 1 }, 'pluginSHA'],
      [{ pluginVersion: 1, pluginSHA: 5 }, 'pluginSHA'],
      [{ pluginVersion: 1, pluginSHA: null, extra: true }, 'pluginSHA'],
    ])('answers 400 naming the field for %j', async (body, field) => {
      const server = await createServer(app);
      const response = await app.http.post('/server/login', body, { token: server.bootstrapToken });
      expect(response.status).toBe(400);
      expect(response.body.error).toBe('BAD_REQUEST');
      expect(response.body.message).toContain(field);
      const sessions = await app.sql('SELECT 1 FROM server_session WHERE server_id = $1', [server.serverID]);
      expect(sessions).toHaveLength(0);
    });

    it('replaces the live session of the same server', async () => {
      const server = await createServer(app);
      const first = await loginServer(app, server);
      const second = await loginServer(app, server);
      expect(second.accessToken).not.toBe(first.accessToken);

      expect((await app.http.get('/server/refresh', { token: first.accessToken })).status).toBe(401);
      expect((await app.http.get('/server/refresh', { token: second.accessToken })).status).toBe(200);

      const rows = await app.sql<{ end_reason: string | null; open: boolean }>(
        'SELECT end_reason, ended_at IS NULL AS open FROM server_session WHERE server_id = $1 ORDER BY created_at',
        [server.serverID],
      );
      expect(rows).toEqual([
        { end_reason: 'replaced', open: false },
        { end_reason: null, open: true },
      ]);
    });

    it('keeps exactly one open session under concurrent logins of one server', async () => {
      const server = await createServer(app);
      const responses = await Promise.all(
        Array.from({ length: 8 }, () =>
          app.http.post('/server/login', { pluginVersion: 1, pluginSHA: 'x' }, { token: server.bootstrapToken }),
        ),
      );
      expect(responses.map((r) => r.status)).toEqual(Array(8).fill(200));
      const open = await app.sql('SELECT id FROM server_session WHERE server_id = $1 AND ended_at IS NULL', [
        server.serverID,
      ]);
      expect(open).toHaveLength(1);
      const valid = await Promise.all(
        responses.map((r) => app.http.get('/server/refresh', { token: r.body.accessToken })),
      );
      expect(valid.filter((r) => r.status === 200)).toHaveLength(1);
    });
  });

  describe('a bootstrap token rotated while a login with it is under way', () => {
    // A transaction held open from outside: the embedded database has one session for everyone.
    (testDatabaseServerUrl() ? it : it.skip)(
      'answers 401 and opens no session once the rotation commits before the login locks the credential',
      async () => {
        const server = await onlineServer(app);
        const holder = new Client({ connectionString: app.databaseUrl() });
        await holder.connect();
        try {
          // The rotation, not yet committed: the login's guard still reads the old token.
          await holder.query('BEGIN');
          await holder.query('UPDATE server_credential SET token_hash = $1 WHERE server_id = $2', [
            sha256('rotated'),
            server.serverID,
          ]);
          const login = app.http.post(
            '/server/login',
            { pluginVersion: 1, pluginSHA: 'x' },
            { token: server.server.bootstrapToken },
          );
          await eventually(
            async () =>
              (
                await app.sql(
                  `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%server_credential%'`,
                )
              ).length > 0,
            'the login waiting for the credential',
          );
          await holder.query('COMMIT');
          const refused = await login;
          expect({ status: refused.status, body: refused.body }).toEqual({
            status: 401,
            body: { error: 'UNAUTHORIZED', message: 'Invalid bootstrap token' },
          });
          expect(
            await app.sql('SELECT count(*)::int AS n FROM server_session WHERE server_id = $1 AND ended_at IS NULL', [
              server.serverID,
            ]),
          ).toEqual([{ n: 1 }]);
          expect((await app.http.get('/server/ping', { token: server.accessToken })).status).toBe(200);
        } finally {
          await holder.query('ROLLBACK').catch(() => undefined);
          await holder.end();
        }
      },
    );
  });

  describe('GET /server/refresh', () => {
    it('issues a new token for the same session and retires the old one', async () => {
      const session = await onlineServer(app);
      const refreshed = await app.http.get('/server/refresh', { token: session.accessToken });
      expect(refreshed.status).toBe(200);
      expect(refreshed.body).toEqual({ accessToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), expiresIn: 600 });
      expect(refreshed.body.accessToken).not.toBe(session.accessToken);

      expect((await app.http.get('/server/refresh', { token: session.accessToken })).status).toBe(401);
      const rows = await app.sql('SELECT token_hash FROM server_session WHERE server_id = $1', [session.serverID]);
      expect(rows).toEqual([{ token_hash: sha256(refreshed.body.accessToken) }]);
    });

    it('answers 401 without a token, with a bootstrap token and after logout', async () => {
      const session = await onlineServer(app);
      expect((await app.http.get('/server/refresh', { token: null })).body).toEqual({
        error: 'UNAUTHORIZED',
        message: 'Missing bearer server access token',
      });
      expect((await app.http.get('/server/refresh', { token: session.server.bootstrapToken })).status).toBe(401);
      expect((await app.http.post('/server/logout', undefined, { token: session.accessToken })).status).toBe(204);
      expect((await app.http.get('/server/refresh', { token: session.accessToken })).status).toBe(401);
    });
  });

  describe('POST /server/logout', () => {
    it('ends the session with 204 and no body', async () => {
      const session = await onlineServer(app);
      const response = await app.http.post('/server/logout', undefined, { token: session.accessToken });
      expect(response.status).toBe(204);
      expect(response.text).toBe('');
      const rows = await app.sql('SELECT end_reason FROM server_session WHERE server_id = $1', [session.serverID]);
      expect(rows).toEqual([{ end_reason: 'logout' }]);
      expect((await app.http.post('/server/logout', undefined, { token: session.accessToken })).status).toBe(401);
    });

    // The embedded database is one session: no second connection can hold a lock against the service.
    (testDatabaseServerUrl() ? it : it.skip)(
      'answers 503 with nothing written when its transaction is the victim of a deadlock, and 204 when sent again',
      async () => {
        const session = await onlineServer(app);
        const [first, second] = [await onlinePlayer(app, session), await onlinePlayer(app, session)].sort(
          (a, b) => a.uid - b.uid,
        );
        const openSessions = () =>
          app.sql<{ uid: number; logout_reason: string | null }>(
            'SELECT uid::int AS uid, logout_reason FROM player_session WHERE uid = ANY($1::bigint[]) ORDER BY uid',
            [[first.uid, second.uid]],
          );
        // Another transaction holds the second player's session; the logout locks the first (uid
        // order) and waits for it; the other then asks for the first: a cycle, which PostgreSQL
        // breaks by cancelling the logout's transaction (it waited first).
        const other = new Client({ connectionString: app.env.DATABASE_URL });
        await other.connect();
        try {
          await other.query('BEGIN');
          await other.query('SELECT 1 FROM player_session WHERE uid = $1 FOR UPDATE', [second.uid]);
          const logout = app.http.post('/server/logout', undefined, { token: session.accessToken });
          await sleep(300);
          await other.query('SELECT 1 FROM player_session WHERE uid = $1 FOR UPDATE', [first.uid]);
          const refused = await logout;
          expect(refused.status).toBe(503);
          expect(refused.body).toEqual({
            error: 'UNAVAILABLE',
            message: 'The database could not complete this call now; nothing was written',
          });
          await other.query('COMMIT');
        } finally {
          await other.end();
        }
        const ended = () =>
          app.sql<{ end_reason: string | null }>('SELECT end_reason FROM server_session WHERE server_id = $1', [
            session.serverID,
          ]);
        expect(await ended()).toEqual([{ end_reason: null }]);
        expect(await openSessions()).toEqual([
          { uid: first.uid, logout_reason: null },
          { uid: second.uid, logout_reason: null },
        ]);

        expect((await app.http.post('/server/logout', undefined, { token: session.accessToken })).status).toBe(204);
        expect(await ended()).toEqual([{ end_reason: 'logout' }]);
        expect(await openSessions()).toEqual([
          { uid: first.uid, logout_reason: 'server_session_ended' },
          { uid: second.uid, logout_reason: 'server_session_ended' },
        ]);
      },
      10_000,
    );
  });

  describe('GET /server/ping', () => {
    it('answers the JSON body true without authentication', async () => {
      const response = await app.http.get('/server/ping', { token: null });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.body).toBe(true);
    });
  });
});

describe('Server token lifetime and refresh grace', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ env: { SERVER_TOKEN_TTL_SECONDS: '1', SERVER_TOKEN_REFRESH_GRACE_SECONDS: '2' } });
  });
  afterAll(async () => {
    await app.close();
  });

  it('answers expiresIn from SERVER_TOKEN_TTL_SECONDS and refuses an expired token on protected calls', async () => {
    const session = await onlineServer(app);
    expect(session.expiresIn).toBe(1);
    await sleep(1300);
    const response = await app.http.post('/server/logout', undefined, { token: session.accessToken });
    expect(response.status).toBe(401);
    expect(response.body.error).toBe('UNAUTHORIZED');
  });

  it('refreshes a token that expired within the grace, keeping the session', async () => {
    const session = await onlineServer(app);
    await sleep(1500);
    const refreshed = await app.http.get('/server/refresh', { token: session.accessToken });
    expect(refreshed.status).toBe(200);
    const rows = await app.sql('SELECT count(*)::int AS n FROM server_session WHERE server_id = $1', [
      session.serverID,
    ]);
    expect(rows).toEqual([{ n: 1 }]);
    expect((await app.http.post('/server/logout', undefined, { token: refreshed.body.accessToken })).status).toBe(204);
  });

  it('refuses a refresh once the grace has passed', async () => {
    const session = await onlineServer(app);
    await sleep(3300);
    const response = await app.http.get('/server/refresh', { token: session.accessToken });
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ error: 'UNAUTHORIZED', message: 'Invalid or expired server access token' });
  });
});
