import { createHash } from 'node:crypto';
import { csrfTokenOf } from '../../src/auth/staff-credentials';
import {
  createStaff,
  createToken,
  setCookies,
  signIn,
  staffName,
  staffPassword,
  type TestStaffSession,
} from '../factories/staff.factory';
import { HttpClient } from '../support/http';
import { multiInstanceAvailable, startTestApp, TestApp } from '../support/test-app';
import { badLines, badRequest } from '../support/bad-request';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const LOCAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;

/**
 * Staff accounts, console sessions and personal API tokens (issue 42): what is stored, what the
 * cookies say, what a cross-site request gets, when a session ends, and that a disabled or
 * deleted account, a revoked token and a role change count from the next request on.
 */
describe('Staff accounts and sessions', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ env: { TRUST_PROXY: 'loopback' } });
  });
  afterAll(async () => {
    await app?.close();
  });

  const audit = (where: string, params: unknown[]) =>
    app.sql<Record<string, unknown>>(
      `SELECT action, target, summary, credential, actor, actor_id FROM admin_audit WHERE ${where} ORDER BY id`,
      params,
    );

  describe('accounts', () => {
    it('creates an account with a scrypt hash of its password, answers no password, and refuses bad input', async () => {
      const name = staffName('mod');
      const password = staffPassword();
      const created = await app.admin.post('/admin/staff', { name, role: 'moderator', password });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: expect.any(Number),
        name,
        role: 'moderator',
        disabled: false,
        createdAt: expect.stringMatching(LOCAL),
        passwordChangedAt: expect.stringMatching(LOCAL),
        lastSignInAt: null,
        tokens: 0,
        secondFactor: false,
      });
      const [row] = await app.sql<{ password_hash: string; device_key: string }>(
        'SELECT password_hash, device_key FROM staff_account WHERE id = $1',
        [created.body.id],
      );
      expect(row.password_hash).toMatch(/^scrypt\$N=32768,r=8,p=3\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
      expect(row.password_hash).not.toContain(password);
      expect(row.device_key).toMatch(/^[0-9a-f]{64}$/);
      expect(await audit('target = $1', [`staff:${created.body.id}`])).toEqual([
        {
          action: 'staff.create',
          target: `staff:${created.body.id}`,
          summary: { name, role: 'moderator' },
          credential: 'admin',
          actor: 'ADMIN_TOKEN',
          actor_id: null,
        },
      ]);

      const count = async () => (await app.sql('SELECT id FROM staff_account')).length;
      const before = await count();
      for (const [body, message] of [
        [{ name, role: 'moderator', password }, `name ${name} is taken`],
        [
          { name: 'Alice', role: 'moderator', password },
          'name must be 2-32 characters of a-z, 0-9, ".", "_" and "-", starting with a letter or digit',
        ],
        [{ name: 'anonymous', role: 'moderator', password }, 'name must not be anonymous or unknown'],
        [
          { name: staffName(), role: 'superuser', password },
          'role must be one of read-only, support, moderator, admin, owner',
        ],
        [
          { name: staffName(), role: 'support', password: 'fourteen chars' },
          'password must be a string of 15 to 256 characters',
        ],
        [
          { name: staffName(), role: 'support', password: 'x'.repeat(257) },
          'password must be a string of 15 to 256 characters',
        ],
        [{ name: staffName(), role: 'support', password, extra: 1 }, 'extra: property extra should not exist'],
      ] as const) {
        const response = await app.admin.post('/admin/staff', body);
        expect({ status: response.status, body: response.body }).toEqual({
          status: 400,
          body: badLines(message as string),
        });
      }
      expect(await count()).toBe(before);
    });

    it('lists and shows accounts with their tokens and sessions, never a secret', async () => {
      const staff = await createStaff(app, 'support');
      const session = await signIn(app, staff);
      const token = await createToken(session, { name: 'nightly export' });
      const shown = await app.admin.get(`/admin/staff/${staff.id}`);
      expect(shown.status).toBe(200);
      expect(shown.body).toEqual({
        id: staff.id,
        name: staff.name,
        role: 'support',
        disabled: false,
        createdAt: expect.stringMatching(LOCAL),
        passwordChangedAt: expect.stringMatching(LOCAL),
        lastSignInAt: expect.stringMatching(LOCAL),
        tokens: 1,
        secondFactor: false,
        tokenList: [
          {
            id: token.id,
            name: 'nightly export',
            role: 'support',
            createdAt: expect.stringMatching(LOCAL),
            lastUsedAt: null,
          },
        ],
        sessions: [
          {
            id: expect.any(Number),
            createdAt: expect.stringMatching(LOCAL),
            lastSeenAt: expect.stringMatching(LOCAL),
            sourceAddress: '127.0.0.1',
          },
        ],
      });
      expect(shown.text).not.toContain(token.token);
      expect(shown.text).not.toContain(session.secret);
      const listed = await app.admin.get('/admin/staff', { query: { limit: 200 } });
      expect(listed.body.items).toContainEqual(expect.objectContaining({ id: staff.id, name: staff.name, tokens: 1 }));
      expect(listed.body.nextCursor).toBeNull();
      expect((await app.admin.get('/admin/staff/99999')).body).toEqual({
        error: 'NOT_FOUND',
        message: 'No staff account with id 99999',
      });
    });

    it('keeps an enabled owner: the last one cannot be demoted, disabled or deleted (409), another can', async () => {
      expect(await app.sql("SELECT id FROM staff_account WHERE role = 'owner'")).toEqual([]);
      const first = await createStaff(app, 'owner');
      for (const [method, body] of [
        ['PATCH', { role: 'admin' }],
        ['PATCH', { disabled: true }],
        ['DELETE', undefined],
      ] as const) {
        const response = await app.admin.request(method, `/admin/staff/${first.id}`, { body });
        expect({ status: response.status, body: response.body }).toEqual({
          status: 409,
          body: {
            error: 'CONFLICT',
            message: `${first.name} is the last enabled owner: make another account owner first`,
          },
        });
      }
      expect(await app.sql('SELECT role, disabled_at FROM staff_account WHERE id = $1', [first.id])).toEqual([
        { role: 'owner', disabled_at: null },
      ]);
      const second = await createStaff(app, 'owner');
      expect((await app.admin.request('PATCH', `/admin/staff/${first.id}`, { body: { role: 'admin' } })).status).toBe(
        200,
      );
      // Now `second` is the last: both demoting each other at once leaves one of them owner.
      const third = await createStaff(app, 'owner');
      const [a, b] = await Promise.all([
        app.admin.request('PATCH', `/admin/staff/${second.id}`, { body: { role: 'admin' } }),
        app.admin.request('PATCH', `/admin/staff/${third.id}`, { body: { role: 'admin' } }),
      ]);
      expect([a.status, b.status].sort()).toEqual([200, 409]);
      expect(
        await app.sql("SELECT count(*)::int AS owners FROM staff_account WHERE role = 'owner' AND disabled_at IS NULL"),
      ).toEqual([{ owners: 1 }]);
      expect((await app.admin.request('PATCH', `/admin/staff/${first.id}`, { body: {} })).body).toEqual(
        badRequest('Give at least one of role, disabled, password, secondFactor'),
      );
      // null is no value: 400 naming the field, never taken for one (it answered 500 for password).
      for (const [body, message] of [
        [{ password: null }, 'password must be a string of 15 to 256 characters'],
        [{ role: null }, 'role must be one of read-only, support, moderator, admin, owner'],
        [{ disabled: null }, 'disabled must be a boolean value'],
        [
          { secondFactor: null },
          'secondFactor can only be turned off here (false); the person enrols from their console session',
        ],
      ] as const) {
        const refused = await app.admin.request('PATCH', `/admin/staff/${first.id}`, { body });
        expect({ status: refused.status, body: refused.body }).toEqual({ status: 400, body: badLines(message) });
      }
    });

    it('gives no way in that outlives the credential: no account, reset or factor removal with a personal token, none of it on your own account', async () => {
      const owner = await createStaff(app, 'owner');
      const session = await signIn(app, owner);
      const token = app.http.withToken((await createToken(session)).token);
      const other = await createStaff(app, 'support');
      const forbidden = (message: string) => ({ status: 403, body: { error: 'FORBIDDEN', message } });
      const tokenMessage = (what: string) =>
        forbidden(`${what} from a console session or with ADMIN_TOKEN, not with a personal API token`);
      const own = forbidden(
        'Your own password and authenticator change at /admin/me/password and /admin/me/totp, with your current password',
      );
      const answer = async (response: Promise<{ status: number; body: unknown }>) => {
        const { status, body } = await response;
        return { status, body };
      };
      const staffCount = async () => (await app.sql('SELECT id FROM staff_account ORDER BY id')).length;
      const before = await staffCount();
      const hashOf = async (id: number) =>
        (await app.sql('SELECT password_hash FROM staff_account WHERE id = $1', [id]))[0];
      const [otherHash, ownerHash] = [await hashOf(other.id), await hashOf(owner.id)];

      // A personal token (a leaked one is revoked in the end): no new account, no reset, no factor off.
      expect(
        await answer(token.post('/admin/staff', { name: staffName('mint'), role: 'owner', password: staffPassword() })),
      ).toEqual(tokenMessage('Staff accounts are created'));
      for (const body of [{ password: staffPassword() }, { secondFactor: false }])
        expect(await answer(token.request('PATCH', `/admin/staff/${other.id}`, { body }))).toEqual(
          tokenMessage('Passwords are reset and authenticators turned off'),
        );
      // The rest of staff management is the token's, as its role says.
      expect((await token.request('PATCH', `/admin/staff/${other.id}`, { body: { role: 'moderator' } })).status).toBe(
        200,
      );
      // Your own password and factor: /admin/me (the current password), from the session as from the token.
      for (const client of [session.client, token])
        for (const body of [
          { password: staffPassword() },
          { secondFactor: false },
          { role: 'admin', password: staffPassword() },
        ])
          expect(await answer(client.request('PATCH', `/admin/staff/${owner.id}`, { body }))).toEqual(own);
      expect(await staffCount()).toBe(before);
      expect([await hashOf(other.id), await hashOf(owner.id)]).toEqual([otherHash, ownerHash]);
      // From the console session, and with ADMIN_TOKEN, on someone else: as before.
      expect(
        (await session.client.request('PATCH', `/admin/staff/${other.id}`, { body: { password: staffPassword() } }))
          .status,
      ).toBe(200);
      expect(
        (await app.admin.request('PATCH', `/admin/staff/${other.id}`, { body: { secondFactor: false } })).status,
      ).toBe(200);
      expect(
        (
          await session.client.post('/admin/staff', {
            name: staffName('made'),
            role: 'support',
            password: staffPassword(),
          })
        ).status,
      ).toBe(201);
    });
  });

  describe('sign-in', () => {
    it('sets an HttpOnly SameSite=Strict session cookie for /admin, a CSRF cookie and a device cookie', async () => {
      const staff = await createStaff(app, 'moderator');
      const response = await app.http.post('/admin/session', {
        name: staff.name.toUpperCase(),
        password: staff.password,
      });
      expect(response.status).toBe(200);
      const cookies = setCookies(response.headers);
      expect(response.headers.getSetCookie()).toEqual([
        `rhythmc_session=${cookies.rhythmc_session}; Path=/admin; SameSite=Strict; HttpOnly`,
        `rhythmc_csrf=${cookies.rhythmc_csrf}; Path=/; SameSite=Strict`,
        `rhythmc_device=${cookies.rhythmc_device}; Path=/admin/session; SameSite=Strict; Max-Age=31536000; HttpOnly`,
      ]);
      expect(cookies.rhythmc_session).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(cookies.rhythmc_csrf).toBe(csrfTokenOf(cookies.rhythmc_session));
      expect(cookies.rhythmc_device).toMatch(new RegExp(`^${staff.id}\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}$`));
      expect(response.body).toEqual({
        name: staff.name,
        accountId: staff.id,
        role: 'moderator',
        permissions: [
          'account.self',
          'overview.read',
          'players.read',
          'servers.read',
          'catalog.read',
          'boards.read',
          'plays.read',
          'players.create',
          'players.net-token',
          'players.ban',
          'plays.review',
          'servers.logout',
          'audit.read',
        ],
        credential: 'session',
        session: { expiresAt: expect.stringMatching(LOCAL), idleTimeoutSeconds: 1800 },
        timeZone: 'UTC',
        secondFactor: false,
        csrfToken: cookies.rhythmc_csrf,
      });
      // Stored: the SHA-256 of the secret only.
      const [row] = await app.sql<{ token_hash: string; id: string }>(
        'SELECT id::text, token_hash FROM staff_session WHERE account_id = $1',
        [staff.id],
      );
      expect(row.token_hash).toBe(sha256(cookies.rhythmc_session));
      expect(await audit('target = $1 AND action = $2', [`staff:${staff.id}`, 'staff.sign-in'])).toEqual([
        {
          action: 'staff.sign-in',
          target: `staff:${staff.id}`,
          summary: {},
          credential: `session:${row.id}`,
          actor: staff.name,
          actor_id: staff.id,
        },
      ]);
    });

    it('marks the cookies Secure when the request came through an HTTPS proxy it trusts, not otherwise', async () => {
      const staff = await createStaff(app, 'support');
      const viaProxy = await app.http.post(
        '/admin/session',
        { name: staff.name, password: staff.password },
        { headers: { 'X-Forwarded-Proto': 'https' } },
      );
      expect(viaProxy.headers.getSetCookie().every((line) => line.endsWith('; Secure'))).toBe(true);
      const untrusted = await startTestApp();
      try {
        const other = await createStaff(untrusted, 'support');
        const direct = await untrusted.http.post(
          '/admin/session',
          { name: other.name, password: other.password },
          { headers: { 'X-Forwarded-Proto': 'https' } },
        );
        expect(direct.status).toBe(200);
        expect(direct.headers.getSetCookie().some((line) => line.includes('Secure'))).toBe(false);
      } finally {
        await untrusted.close();
      }
    });

    it('answers one 401 for a wrong password and an unknown name, and audits both without the password', async () => {
      const staff = await createStaff(app, 'support');
      const wrong = await app.http.post('/admin/session', { name: staff.name, password: `${staff.password}!` });
      const unknown = await app.http.post('/admin/session', { name: 'nobody-here', password: staff.password });
      for (const response of [wrong, unknown]) {
        expect({ status: response.status, body: response.body }).toEqual({
          status: 401,
          body: { error: 'UNAUTHORIZED', message: 'Wrong name or password' },
        });
        expect(response.headers.getSetCookie()).toEqual([]);
      }
      const rows = await audit("action = 'staff.sign-in-failed' AND id > (SELECT max(id) - 2 FROM admin_audit)", []);
      expect(rows).toEqual([
        {
          action: 'staff.sign-in-failed',
          target: `staff:${staff.id}`,
          summary: { name: staff.name, reason: 'wrong name or password' },
          credential: 'none',
          actor: 'anonymous',
          actor_id: null,
        },
        {
          action: 'staff.sign-in-failed',
          target: 'staff:unknown',
          summary: { reason: 'wrong name or password' },
          credential: 'none',
          actor: 'anonymous',
          actor_id: null,
        },
      ]);
      expect(JSON.stringify(await app.sql('SELECT * FROM admin_audit'))).not.toContain(staff.password);
      for (const body of [{ name: staff.name }, { name: staff.name, password: 7 }, { password: 'x' }])
        expect((await app.http.post('/admin/session', body)).status).toBe(400);
    });

    it('refuses a sign-in from another origin (403) and keeps nothing', async () => {
      const staff = await createStaff(app, 'support');
      const foreign: Array<Record<string, string>> = [
        { Origin: 'https://evil.example' },
        { 'Sec-Fetch-Site': 'cross-site' },
        { Origin: 'null' },
      ];
      for (const headers of foreign) {
        const response = await app.http.post(
          '/admin/session',
          { name: staff.name, password: staff.password },
          { headers },
        );
        expect({ headers, status: response.status, error: response.body.error }).toEqual({
          headers,
          status: 403,
          error: 'FORBIDDEN',
        });
      }
      expect(await app.sql('SELECT id FROM staff_session WHERE account_id = $1', [staff.id])).toEqual([]);
      // The console's own origin is fine.
      const own = await app.http.post(
        '/admin/session',
        { name: staff.name, password: staff.password },
        { headers: { Origin: app.baseUrl, 'Sec-Fetch-Site': 'same-origin' } },
      );
      expect(own.status).toBe(200);
    });

    it('refuses a disabled account with the right password', async () => {
      const staff = await createStaff(app, 'support');
      expect((await app.admin.request('PATCH', `/admin/staff/${staff.id}`, { body: { disabled: true } })).status).toBe(
        200,
      );
      const response = await app.http.post('/admin/session', { name: staff.name, password: staff.password });
      expect({ status: response.status, body: response.body }).toEqual({
        status: 401,
        body: { error: 'UNAUTHORIZED', message: 'This account is disabled' },
      });
      expect((await app.admin.request('PATCH', `/admin/staff/${staff.id}`, { body: { disabled: false } })).status).toBe(
        200,
      );
      expect((await app.http.post('/admin/session', { name: staff.name, password: staff.password })).status).toBe(200);
    });
  });

  describe('a session', () => {
    let session: TestStaffSession;

    beforeEach(async () => {
      session = await signIn(app, await createStaff(app, 'moderator'));
    });

    it('authorizes only with its CSRF token, and never a cross-site request', async () => {
      const cookieOnly = app.http.withHeaders({ Cookie: `rhythmc_session=${session.secret}` });
      const cases: Array<[string, HttpClient, Record<string, string>, string]> = [
        [
          'cookie, no Origin, no token',
          cookieOnly,
          {},
          'Session cookie refused: the X-CSRF-Token header is missing or wrong',
        ],
        [
          'cookie and a wrong token',
          cookieOnly,
          { 'X-CSRF-Token': csrfTokenOf('another') },
          'Session cookie refused: the X-CSRF-Token header is missing or wrong',
        ],
        [
          'a foreign Origin',
          session.client,
          { Origin: 'https://evil.example' },
          "Session cookie refused: the request's Origin is not this service",
        ],
        [
          'Sec-Fetch-Site: same-site (a sibling subdomain)',
          session.client,
          { 'Sec-Fetch-Site': 'same-site' },
          'Session cookie refused: the request is cross-site (Sec-Fetch-Site)',
        ],
      ];
      for (const [label, client, headers, message] of cases) {
        for (const [method, path, body] of [
          ['GET', '/admin/overview', undefined],
          ['POST', '/admin/players', { username: 'csrf_victim' }],
        ] as const) {
          const response = await client.request(method, path, { headers, body });
          expect({ label, path, status: response.status, body: response.body }).toEqual({
            label,
            path,
            status: 403,
            body: { error: 'FORBIDDEN', message },
          });
        }
      }
      expect(await app.sql("SELECT uid FROM player WHERE username = 'csrf_victim'")).toEqual([]);
      // The console's own requests: the token, and Origin/Sec-Fetch-Site of the service itself.
      const own = await session.client.get('/admin/overview', {
        headers: { Origin: app.baseUrl, 'Sec-Fetch-Site': 'same-origin' },
      });
      expect(own.status).toBe(200);
      // A bearer header is read first: the cookie does not turn a wrong token into a right one.
      const both = await session.client.get('/admin/overview', { token: 'rst_not-a-token' });
      expect(both.status).toBe(401);
    });

    it('ends on sign-out, on the service: the same cookie is refused afterwards', async () => {
      const [row] = await app.sql<{ id: string }>('SELECT id::text FROM staff_session WHERE token_hash = $1', [
        sha256(session.secret),
      ]);
      const out = await session.client.delete('/admin/session');
      expect(out.status).toBe(204);
      expect(out.headers.getSetCookie()).toEqual([
        'rhythmc_session=; Path=/admin; SameSite=Strict; Max-Age=0; HttpOnly',
        'rhythmc_csrf=; Path=/; SameSite=Strict; Max-Age=0',
      ]);
      expect(await app.sql('SELECT id FROM staff_session WHERE id = $1', [row.id])).toEqual([]);
      const after = await session.client.get('/admin/me');
      expect({ status: after.status, body: after.body }).toEqual({
        status: 401,
        body: { error: 'UNAUTHORIZED', message: 'The session has ended; sign in again' },
      });
      expect(await audit('credential = $1', [`session:${row.id}`])).toEqual([
        expect.objectContaining({ action: 'staff.sign-in' }),
        expect.objectContaining({ action: 'staff.sign-out', actor: session.staff.name }),
      ]);
    });

    it('ends after STAFF_SESSION_IDLE_SECONDS without a request, and moves its last request forward once a minute', async () => {
      const lastSeen = () =>
        app.sql<{ seconds: number }>(
          'SELECT extract(epoch FROM now() - last_seen_at)::int AS seconds FROM staff_session WHERE token_hash = $1',
          [sha256(session.secret)],
        );
      await app.sql("UPDATE staff_session SET last_seen_at = now() - interval '10 minutes' WHERE token_hash = $1", [
        sha256(session.secret),
      ]);
      expect((await session.client.get('/admin/me')).status).toBe(200);
      expect(await lastSeen()).toEqual([{ seconds: 0 }]);
      await app.sql("UPDATE staff_session SET last_seen_at = now() - interval '1801 seconds' WHERE token_hash = $1", [
        sha256(session.secret),
      ]);
      expect((await session.client.get('/admin/me')).status).toBe(401);
      // The ended session's row is gone.
      expect(await lastSeen()).toEqual([]);
    });

    it('ends STAFF_SESSION_MAX_SECONDS after its sign-in however busy it is', async () => {
      await app.sql("UPDATE staff_session SET created_at = now() - interval '43170 seconds' WHERE token_hash = $1", [
        sha256(session.secret),
      ]);
      expect((await session.client.get('/admin/me')).status).toBe(200);
      await app.sql("UPDATE staff_session SET created_at = now() - interval '43200 seconds' WHERE token_hash = $1", [
        sha256(session.secret),
      ]);
      expect((await session.client.get('/admin/me')).body).toEqual({
        error: 'UNAUTHORIZED',
        message: 'The session has ended; sign in again',
      });
    });

    it('follows a role change from the next request on', async () => {
      expect((await session.client.get('/admin/audit')).status).toBe(200);
      await app.admin.request('PATCH', `/admin/staff/${session.staff.id}`, { body: { role: 'support' } });
      expect((await session.client.get('/admin/audit')).body).toEqual({
        error: 'FORBIDDEN',
        message: 'The support role may not do this (audit.read)',
      });
      await app.admin.request('PATCH', `/admin/staff/${session.staff.id}`, { body: { role: 'admin' } });
      expect((await session.client.post('/admin/ratings/recompute')).status).toBe(200);
    });

    it('changes its own password: the other sessions end, this one stays', async () => {
      const other = await signIn(app, session.staff);
      const newPassword = staffPassword();
      const wrong = await session.client.put('/admin/me/password', { currentPassword: 'not it at all!!', newPassword });
      expect({ status: wrong.status, body: wrong.body }).toEqual({
        status: 400,
        body: badLines('currentPassword is wrong'),
      });
      const changed = await session.client.put('/admin/me/password', {
        currentPassword: session.staff.password,
        newPassword,
      });
      expect(changed.status).toBe(204);
      expect((await session.client.get('/admin/me')).status).toBe(200);
      expect((await other.client.get('/admin/me')).status).toBe(401);
      expect(
        (await app.http.post('/admin/session', { name: session.staff.name, password: session.staff.password })).status,
      ).toBe(401);
      expect((await app.http.post('/admin/session', { name: session.staff.name, password: newPassword })).status).toBe(
        200,
      );
      expect(
        (await audit('target = $1 AND action = $2', [`staff:${session.staff.id}`, 'staff.password']))[0],
      ).toMatchObject({ summary: {}, actor: session.staff.name });
    });
  });

  describe('personal API tokens', () => {
    it('are shown once, stored hashed, carry their role or less, note their last use and stop when revoked', async () => {
      const session = await signIn(app, await createStaff(app, 'moderator'));
      const created = await session.client.post('/admin/me/tokens', { name: 'ban bot', role: 'support' });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: expect.any(Number),
        name: 'ban bot',
        role: 'support',
        createdAt: expect.stringMatching(LOCAL),
        lastUsedAt: null,
        token: expect.stringMatching(/^rst_[A-Za-z0-9_-]{43}$/),
      });
      const token = created.body.token as string;
      expect(await app.sql('SELECT token_hash FROM staff_token WHERE id = $1', [created.body.id])).toEqual([
        { token_hash: sha256(token) },
      ]);
      const bearer = app.http.withToken(token);
      expect((await bearer.get('/admin/me')).body).toMatchObject({
        name: session.staff.name,
        role: 'support',
        credential: 'token',
      });
      expect((await bearer.post(`/admin/players/1/ban`, { reason: 'x' })).body).toEqual({
        error: 'FORBIDDEN',
        message: 'The support role may not do this (players.ban)',
      });
      const listed = await session.client.get('/admin/me/tokens');
      expect(listed.body.items).toEqual([
        expect.objectContaining({ id: created.body.id, lastUsedAt: expect.stringMatching(LOCAL) }),
      ]);
      expect(listed.text).not.toContain(token);

      // Never above the account's role, at creation and after a demotion.
      expect((await session.client.post('/admin/me/tokens', { name: 'x', role: 'admin' })).body).toEqual(
        badLines('role must be at most your own (moderator)'),
      );
      const full = await createToken(session, { name: 'full' });
      await app.admin.request('PATCH', `/admin/staff/${session.staff.id}`, { body: { role: 'read-only' } });
      expect((await app.http.get('/admin/me', { token: full.token })).body.role).toBe('read-only');

      // A token creates no token and changes no password; ADMIN_TOKEN has no tokens of its own.
      expect((await bearer.post('/admin/me/tokens', { name: 'more' })).body).toEqual({
        error: 'FORBIDDEN',
        message: 'Personal API tokens are created from a console session, not with a token',
      });
      expect((await app.admin.get('/admin/me/tokens')).body).toEqual({
        error: 'FORBIDDEN',
        message: 'ADMIN_TOKEN belongs to no staff account: sign in to the console as a staff member',
      });

      expect((await session.client.delete(`/admin/me/tokens/${created.body.id}`)).status).toBe(204);
      expect((await bearer.get('/admin/me')).body).toEqual({ error: 'UNAUTHORIZED', message: 'Invalid admin token' });
      expect((await session.client.delete(`/admin/me/tokens/${created.body.id}`)).status).toBe(404);
      expect(
        (await audit('target = $1', [`staff-token:${created.body.id}`])).map((row) => [
          row.action,
          row.summary,
          row.actor,
        ]),
      ).toEqual([
        ['staff.token-create', { name: 'ban bot', role: 'support' }, session.staff.name],
        ['staff.token-revoke', {}, session.staff.name],
      ]);
    });
  });

  describe('a disabled or deleted account', () => {
    it('loses its sessions and tokens at once', async () => {
      for (const change of ['disable', 'delete'] as const) {
        const session = await signIn(app, await createStaff(app, 'admin'));
        const token = await createToken(session);
        expect((await session.client.get('/admin/me')).status).toBe(200);
        expect((await app.http.get('/admin/me', { token: token.token })).status).toBe(200);
        const response =
          change === 'disable'
            ? await app.admin.request('PATCH', `/admin/staff/${session.staff.id}`, { body: { disabled: true } })
            : await app.admin.delete(`/admin/staff/${session.staff.id}`);
        expect({ change, status: response.status }).toEqual({ change, status: 200 });
        expect({ change, status: (await session.client.get('/admin/me')).status }).toEqual({ change, status: 401 });
        expect({ change, status: (await app.http.get('/admin/me', { token: token.token })).status }).toEqual({
          change,
          status: 401,
        });
        expect(await app.sql('SELECT id FROM staff_session WHERE account_id = $1', [session.staff.id])).toEqual([]);
        expect(await app.sql('SELECT id FROM staff_token WHERE account_id = $1', [session.staff.id])).toEqual([]);
      }
      // Its audit rows stay, with its name.
      expect((await audit("action = 'staff.delete'", [])).at(-1)).toMatchObject({ actor: 'ADMIN_TOKEN' });
    });

    (multiInstanceAvailable() ? it : it.skip)('on every instance (PostgreSQL and Redis)', async () => {
      const second = await startTestApp({ shareWith: app });
      try {
        const session = await signIn(second, await createStaff(app, 'moderator'));
        const token = await createToken(session);
        expect((await session.client.get('/admin/me')).status).toBe(200);
        await app.admin.request('PATCH', `/admin/staff/${session.staff.id}`, { body: { role: 'support' } });
        expect((await second.http.get('/admin/audit', { token: token.token })).status).toBe(403);
        await app.admin.request('PATCH', `/admin/staff/${session.staff.id}`, { body: { disabled: true } });
        expect((await session.client.get('/admin/me')).status).toBe(401);
        expect((await second.http.get('/admin/me', { token: token.token })).status).toBe(401);
      } finally {
        await second.close();
      }
    });
  });

  describe('the audit log', () => {
    it('names the person of every write and can be filtered by person', async () => {
      const session = await signIn(app, await createStaff(app, 'support'));
      const player = await session.client.post('/admin/players', { username: 'by_support' });
      expect(player.status).toBe(201);
      const mine = await app.admin.get<{ items: Array<Record<string, unknown>> }>('/admin/audit', {
        query: { actor: session.staff.name },
      });
      expect(mine.body.items.map((item) => [item.action, item.actor, item.actorId])).toEqual([
        ['player.create', session.staff.name, session.staff.id],
        ['staff.sign-in', session.staff.name, session.staff.id],
      ]);
      expect(mine.body.items[0].credential).toMatch(/^session:\d+$/);
      const byToken = await app.admin.get('/admin/audit', { query: { actor: 'ADMIN_TOKEN', limit: 1 } });
      expect(byToken.body.items).toEqual([
        expect.objectContaining({ actor: 'ADMIN_TOKEN', actorId: null, credential: 'admin' }),
      ]);
      expect((await app.admin.get('/admin/audit', { query: { actor: 'Not A Name' } })).body).toEqual(
        badLines('actor must be a staff name, ADMIN_TOKEN or anonymous'),
      );
    });
  });
});

/**
 * Failed sign-ins (issue 42): limited per address and per account, and a guesser who names an
 * account cannot keep its owner's right password out on a browser that signed in before.
 */
describe('Sign-in limits', () => {
  let app: TestApp;
  const from = (address: string, device?: string) => ({
    'X-Forwarded-For': address,
    ...(device ? { Cookie: `rhythmc_device=${device}` } : {}),
  });

  beforeAll(async () => {
    app = await startTestApp({
      env: {
        TRUST_PROXY: 'loopback',
        THROTTLE_ADMIN_AUTH_MAX_FAILURES: '3',
        THROTTLE_SIGN_IN_ACCOUNT_MAX_FAILURES: '5',
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it("locks out a guessing address and, after guesses from several, unknown browsers, never the owner's own", async () => {
    const victim = await createStaff(app, 'owner');
    const first = await signIn(app, victim, { headers: from('198.51.100.1') });
    expect(first.device).not.toBeNull();
    const attempt = (address: string, password: string, device?: string) =>
      app.http.post('/admin/session', { name: victim.name, password }, { headers: from(address, device) });
    const wrong = `${victim.password}?`;

    // Three wrong passwords from one address lock that address out, the right password included.
    for (let i = 0; i < 3; i++) expect((await attempt('203.0.113.1', wrong)).status).toBe(401);
    const locked = await attempt('203.0.113.1', victim.password);
    expect({ status: locked.status, error: locked.body.error }).toEqual({ status: 429, error: 'RATE_LIMITED' });
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(800);
    // Anyone else still signs in: a new browser elsewhere, and the owner's own.
    expect((await attempt('198.51.100.2', victim.password)).status).toBe(200);
    expect((await attempt('198.51.100.1', victim.password, first.device as string)).status).toBe(200);

    // Five wrong in a row from addresses of their own lock the account out of unknown browsers…
    for (const address of ['203.0.113.2', '203.0.113.3', '203.0.113.4', '203.0.113.5', '203.0.113.6'])
      expect((await attempt(address, wrong)).status).toBe(401);
    const unknownBrowser = await attempt('198.51.100.9', victim.password);
    expect({ status: unknownBrowser.status, error: unknownBrowser.body.error }).toEqual({
      status: 429,
      error: 'RATE_LIMITED',
    });
    // …but not out of the browser it signed in on before: the guesses named the account, not that browser.
    const own = await attempt('198.51.100.1', victim.password, first.device as string);
    expect(own.status).toBe(200);
    // A device cookie of another account, or a forged one, is an unknown browser.
    const other = await signIn(app, await createStaff(app, 'support'), { headers: from('198.51.100.3') });
    expect((await attempt('198.51.100.4', victim.password, other.device as string)).status).toBe(429);
    const forged = `${victim.id}.${'A'.repeat(22)}.${'B'.repeat(43)}`;
    expect((await attempt('198.51.100.5', victim.password, forged)).status).toBe(429);

    // Eight failed sign-ins are in the audit log (the 429s are not: they never reached the password).
    expect(
      await app.sql(
        "SELECT count(*)::int AS n FROM admin_audit WHERE action = 'staff.sign-in-failed' AND target = $1",
        [`staff:${victim.id}`],
      ),
    ).toEqual([{ n: 8 }]);
  });

  it('counts unknown names against the address only', async () => {
    for (let i = 0; i < 3; i++)
      expect(
        (await app.http.post('/admin/session', { name: 'ghost', password: 'x' }, { headers: from('203.0.113.50') }))
          .status,
      ).toBe(401);
    const staff = await createStaff(app, 'support');
    expect(
      (
        await app.http.post(
          '/admin/session',
          { name: staff.name, password: staff.password },
          { headers: from('203.0.113.50') },
        )
      ).status,
    ).toBe(429);
    expect(
      (
        await app.http.post(
          '/admin/session',
          { name: staff.name, password: staff.password },
          { headers: from('203.0.113.51') },
        )
      ).status,
    ).toBe(200);
  });
});
