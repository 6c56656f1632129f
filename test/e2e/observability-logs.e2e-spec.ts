import { eventually } from '../support/wait';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServerService } from '../../src/server/server.service';
import { HttpClient, HttpResponse, RequestOptions } from '../support/http';
import { LogCapture } from '../support/log-capture';
import { ADMIN_TOKEN, startTestApp, TestApp } from '../support/test-app';
import { WsClient } from '../support/ws-client';
import { gameplayPayload } from '../factories/upload.factory';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Call {
  method: string;
  path: string;
  route: string;
  status: number;
  requestId: string;
  /** The error code answered, for a 4xx/5xx. */
  error?: string;
  /** The serverID the line must name (the caller authenticated as that game server). */
  server?: number;
}

/**
 * Logs are JSON lines, one per request with its id, route pattern, status and duration, and no
 * credential of any kind ever reaches them — checked at LOG_LEVEL=trace over every kind of token
 * the service issues or accepts.
 */
describe('structured logs', () => {
  const capture = new LogCapture();
  const resourceDir = mkdtempSync(join(tmpdir(), 'rhythmc-logs-'));
  let app: TestApp;
  /** Every credential issued or presented during the test. */
  const secrets = new Set<string>([ADMIN_TOKEN]);
  const calls: Call[] = [];

  const keep = (secret: unknown): string => {
    if (typeof secret !== 'string' || secret.length < 16)
      throw new Error(`expected a token, got ${JSON.stringify(secret)}`);
    secrets.add(secret);
    return secret;
  };
  const badToken = () => keep(randomBytes(32).toString('base64url'));

  /** One request, its status checked and its id recorded with the route pattern it must be logged under. */
  async function call(
    client: HttpClient,
    method: string,
    path: string,
    route: string,
    status: number,
    options: RequestOptions & { server?: number } = {},
  ): Promise<HttpResponse> {
    const response = await client.request(method, path, options);
    expect({ path, status: response.status, body: response.body }).toEqual({ path, status, body: response.body });
    const requestId = response.headers.get('x-request-id');
    expect(requestId).toMatch(UUID);
    const error = status >= 400 ? (response.body as { error: string }).error : undefined;
    calls.push({ method, path, route, status, requestId: requestId as string, error, server: options.server });
    return response;
  }

  /** Every line is JSON; none holds a secret or a secret's stored hash. */
  function expectNoSecretLogged(): void {
    const records = capture.records();
    expect(records.length).toBeGreaterThan(0);
    for (const secret of secrets) {
      for (const needle of [secret, sha256(secret)]) {
        const leaking = capture.lines.filter((line) => line.includes(needle));
        expect({ secret: needle, leaking }).toEqual({ secret: needle, leaking: [] });
      }
    }
  }

  beforeAll(async () => {
    mkdirSync(join(resourceDir, 'data'), { recursive: true });
    writeFileSync(join(resourceDir, 'data', 'song.json'), '{"bpm":120}');
    app = await startTestApp({ env: { LOG_LEVEL: 'trace', RESOURCE_DIR: resourceDir }, logDestination: capture });
  });

  afterAll(async () => {
    await app?.close();
    rmSync(resourceDir, { recursive: true, force: true });
  });

  it("says at start what the migrations did, and puts Nest's route mapping at debug", () => {
    const records = capture.records();
    const migrations = readdirSync(join(__dirname, '..', '..', 'migrations')).filter((file) =>
      file.endsWith('.ts'),
    ).length;
    const schema = records.filter((record) => record.context === 'Migrations').map((record) => record.msg as string);
    // Up to date when an earlier start migrated the test database; otherwise a line per migration first.
    expect(schema[schema.length - 1]).toMatch(new RegExp(`schema up to date \\(${migrations} migrations\\)$`, 'i'));
    const routeMapping = records
      .filter((record) => record.context === 'RouterExplorer' || record.context === 'RoutesResolver')
      .map((record) => record.level as string);
    expect(routeMapping.length).toBeGreaterThan(10);
    expect(new Set(routeMapping)).toEqual(new Set(['debug']));
  });

  it('logs every request as one JSON line with its id, and no token, Net Token or resume token', async () => {
    const admin = app.admin;
    const created = await call(admin, 'POST', '/admin/servers', '/admin/servers', 201, {
      body: { name: `logs-${randomBytes(3).toString('hex')}`, country: 'DE' },
    });
    keep(created.body.bootstrapToken);
    const serverID: number = created.body.serverID;
    const rotated = await call(
      admin,
      'POST',
      `/admin/servers/${serverID}/bootstrap-token`,
      '/admin/servers/:serverID/bootstrap-token',
      201,
    );
    const bootstrapToken = keep(rotated.body.bootstrapToken);

    // The legacy body field carries the bootstrap token in the body.
    const login = await call(app.http, 'POST', '/server/login', '/server/login', 200, {
      token: null,
      server: serverID,
      body: { pluginVersion: 10, pluginSHA: 'sha-test', serverAuthToken: bootstrapToken },
    });
    keep(login.body.accessToken);
    const refreshed = await call(
      app.http.withToken(login.body.accessToken),
      'GET',
      '/server/refresh',
      '/server/refresh',
      200,
      { server: serverID },
    );
    const server = app.http.withToken(keep(refreshed.body.accessToken));

    const player = await call(admin, 'POST', '/admin/players', '/admin/players', 201, {
      body: { username: `log_${randomBytes(3).toString('hex')}` },
    });
    const uid: number = player.body.uid;
    const issued = await call(admin, 'POST', `/admin/players/${uid}/net-token`, '/admin/players/:uid/net-token', 201);
    const netToken = keep(issued.body.netToken);

    const tokenLogin = await call(server, 'POST', '/player/login', '/player/login', 200, {
      body: { mode: 'TOKEN', version: 1, authToken: netToken },
      server: serverID,
    });
    const accessToken = keep(tokenLogin.body.accessToken);
    const options = await call(server, 'POST', '/player/options', '/player/options', 200, {
      body: { uid, accessToken, options: { continueEnabled: true } },
      server: serverID,
    });
    const resumeToken = keep(options.body.resumeToken);

    const time = Date.now() - 3_600_000;
    await call(server, 'POST', '/player/upload', '/player/upload', 200, {
      server: serverID,
      body: {
        player: { playerUID: uid, accessToken, timestamp: time + 250 },
        server: { serverID, serverName: created.body.serverName, country: 'DE' },
        payload: gameplayPayload(7, time, { acc: 98.5, isNewRecord: true }),
      },
    });

    const socket = await WsClient.connect(app.baseUrl, refreshed.body.accessToken);
    try {
      expect((await socket.request('resume_session', { uid, accessToken })).data).toMatchObject({ ok: true });
      expect((await socket.request('resume_session', { uid, accessToken: badToken() })).data).toMatchObject({
        ok: false,
        error: 'UNAUTHORIZED',
      });
    } finally {
      socket.close();
      await socket.closed;
    }

    await call(server, 'POST', '/player/logout', '/player/logout', 204, {
      body: { uid, accessToken },
      server: serverID,
    });
    const offline = await call(server, 'POST', '/player/login', '/player/login', 200, {
      body: { mode: 'OFFLINE_REFRESH', version: 1, resumeToken },
      server: serverID,
    });
    keep(offline.body.accessToken);
    keep(offline.body.resumeToken);

    // A signed download link: its signature is in the query string, which is never logged.
    const links = await call(server, 'POST', '/resources/down', '/resources/down', 200, {
      body: ['data/song.json'],
      server: serverID,
    });
    const link = new URL(links.body[0].url);
    keep(link.searchParams.get('sig'));
    await call(app.http, 'GET', `${link.pathname}${link.search}`, '/resources/files/*path', 200, { token: null });

    // Staff: passwords (right, wrong, new), the session's secret and CSRF token, the device
    // cookie and personal API tokens (issue 42).
    const password = keep(`log scan ${randomBytes(12).toString('base64url')}`);
    const staff = await call(admin, 'POST', '/admin/staff', '/admin/staff', 201, {
      body: { name: `logs-${randomBytes(3).toString('hex')}`, role: 'moderator', password },
    });
    await call(app.http, 'POST', '/admin/session', '/admin/session', 401, {
      body: { name: staff.body.name, password: keep(`${password}-wrong`) },
    });
    await call(app.http, 'POST', '/admin/session', '/admin/session', 401, {
      body: { name: keep(`${password}-as-a-name`).slice(0, 64), password },
    });
    const signedIn = await call(app.http, 'POST', '/admin/session', '/admin/session', 200, {
      body: { name: staff.body.name, password },
    });
    const cookies = Object.fromEntries(
      signedIn.headers.getSetCookie().map((line) => line.split(';')[0].split('=') as [string, string]),
    );
    const session = app.http.withHeaders({
      Cookie: `rhythmc_session=${keep(cookies.rhythmc_session)}`,
      'X-CSRF-Token': keep(cookies.rhythmc_csrf),
    });
    keep(cookies.rhythmc_device);
    const personal = await call(session, 'POST', '/admin/me/tokens', '/admin/me/tokens', 201, {
      body: { name: 'log scan' },
    });
    await call(app.http, 'GET', '/admin/me', '/admin/me', 200, { token: keep(personal.body.token) });
    await call(app.http, 'GET', '/admin/me', '/admin/me', 401, {
      token: keep(`rst_${randomBytes(32).toString('base64url')}`),
    });
    // A webhook's secret (shown once) and a URL holding a token (as Discord's do), through an
    // attempt that fails (the name never resolves): neither is logged.
    const hookToken = keep(randomBytes(24).toString('base64url'));
    const webhook = await call(app.admin, 'POST', '/admin/webhooks', '/admin/webhooks', 201, {
      body: { name: 'log scan', url: `https://webhook.invalid/api/webhooks/1/${hookToken}`, events: ['player.banned'] },
    });
    keep(webhook.body.secret);
    await call(app.admin, 'GET', '/admin/webhooks', '/admin/webhooks', 200);
    const banned = (
      await call(app.admin, 'POST', '/admin/players', '/admin/players', 201, {
        body: { username: `hook_${randomBytes(3).toString('hex')}` },
      })
    ).body as { uid: number };
    await call(app.admin, 'POST', `/admin/players/${banned.uid}/ban`, '/admin/players/:uid/ban', 200, { body: {} });
    await eventually(
      async () =>
        (await app.sql('SELECT 1 FROM webhook_delivery WHERE attempts > 0 AND last_error IS NOT NULL')).length > 0,
      'a failed webhook attempt',
    );
    await call(session, 'PUT', '/admin/me/password', '/admin/me/password', 204, {
      body: { currentPassword: password, newPassword: keep(`new ${password}`) },
    });
    await call(session, 'DELETE', '/admin/session', '/admin/session', 204);
    await call(session, 'GET', '/admin/me', '/admin/me', 401);

    // Refused credentials are secrets too (a mistyped token is often a real one).
    await call(app.http, 'GET', '/server/refresh', '/server/refresh', 401, { token: badToken() });
    // The game server authenticated, the player did not: the line names the server and the code.
    await call(server, 'POST', '/player/login', '/player/login', 401, {
      body: { mode: 'TOKEN', version: 1, authToken: badToken() },
      server: serverID,
    });
    await call(server, 'POST', '/player/login', '/player/login', 401, {
      body: { mode: 'OFFLINE_REFRESH', version: 1, resumeToken: badToken() },
      server: serverID,
    });
    await call(app.http, 'POST', '/admin/players', '/admin/players', 401, {
      token: badToken(),
      body: { username: 'nobody' },
    });
    await call(app.http, 'POST', '/server/login', '/server/login', 401, {
      token: null,
      body: { pluginVersion: 10, pluginSHA: 'x', serverAuthToken: badToken() },
    });
    // Refused before routing (malformed JSON): still one line, route "unmatched".
    await call(server, 'POST', '/player/login', 'unmatched', 400, {
      rawBody: `{"mode":"TOKEN","authToken":"${badToken()}"`,
    });
    await call(app.http, 'GET', `/no/such/route?token=${badToken()}`, 'unmatched', 404);

    for (const { method, path, route, status, requestId, error, server: serverId } of calls) {
      const line = capture.requestLine(requestId);
      expect(line).toEqual({
        level: status >= 500 ? 'error' : 'info',
        time: expect.any(String),
        pid: process.pid,
        hostname: expect.any(String),
        reqId: requestId,
        method,
        route,
        path: path.split('?')[0],
        client: '127.0.0.1',
        status,
        ...(error === undefined ? {} : { error }),
        ...(serverId === undefined ? {} : { server: serverId }),
        durationMs: expect.any(Number),
        msg: 'request completed',
      });
      expect(
        capture.records().filter((record) => record.msg === 'request completed' && record.reqId === requestId),
      ).toHaveLength(1);
    }
    expectNoSecretLogged();
  });

  it('keeps a sane X-Request-Id of the caller and replaces any other', async () => {
    const kept = await app.http.get('/server/ping', { headers: { 'X-Request-Id': 'edge-7f3a.42_x' } });
    expect(kept.headers.get('x-request-id')).toBe('edge-7f3a.42_x');
    expect(capture.requestLine('edge-7f3a.42_x')).toMatchObject({ route: '/server/ping', status: 200 });

    for (const header of ['has space', 'x'.repeat(65), '{"json":1}']) {
      const replaced = await app.http.get('/server/ping', { headers: { 'X-Request-Id': header } });
      const id = replaced.headers.get('x-request-id') as string;
      expect(id).toMatch(UUID);
      expect(capture.requestLine(id)).toMatchObject({ route: '/server/ping', status: 200 });
      expect(capture.lines.some((line) => line.includes(header))).toBe(false);
    }
  });

  it('logs the cause of a 500 with the request id, and still no token', async () => {
    const admin = app.admin;
    const created = await admin.post('/admin/servers', {
      name: `logs-${randomBytes(3).toString('hex')}`,
      country: 'DE',
    });
    const login = await app.http.post(
      '/server/login',
      { pluginVersion: 10, pluginSHA: 'sha-test' },
      { token: keep(created.body.bootstrapToken) },
    );
    const token = keep(login.body.accessToken);

    // No request makes the service fail on its own; a failing service method stands in for a bug.
    const spy = jest.spyOn(app.get(ServerService), 'refresh').mockRejectedValueOnce(new TypeError('refresh exploded'));
    try {
      const response = await app.http.get('/server/refresh', { token });
      expect(response.status).toBe(500);
      expect(response.body).toEqual({ error: 'INTERNAL_ERROR', message: 'Internal server error' });
      const requestId = response.headers.get('x-request-id') as string;

      const lines = capture.records().filter((record) => record.reqId === requestId);
      expect(lines).toEqual([
        {
          level: 'error',
          time: expect.any(String),
          pid: process.pid,
          hostname: expect.any(String),
          reqId: requestId,
          context: 'HTTP',
          err: {
            type: 'TypeError',
            message: 'refresh exploded',
            stack: expect.stringContaining('TypeError: refresh exploded'),
          },
          method: 'GET',
          route: '/server/refresh',
          status: 500,
          msg: 'Request failed',
        },
        {
          level: 'error',
          time: expect.any(String),
          pid: process.pid,
          hostname: expect.any(String),
          reqId: requestId,
          method: 'GET',
          route: '/server/refresh',
          path: '/server/refresh',
          client: '127.0.0.1',
          status: 500,
          error: 'INTERNAL_ERROR',
          server: expect.any(Number),
          durationMs: expect.any(Number),
          msg: 'request completed',
        },
      ]);
    } finally {
      spy.mockRestore();
    }
    expectNoSecretLogged();
  });
});
