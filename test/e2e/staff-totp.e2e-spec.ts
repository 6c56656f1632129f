import { base32Decode, totpCode, totpStep } from '../../src/staff/totp';
import { createStaff, createToken, signIn, type TestStaff, type TestStaffSession } from '../factories/staff.factory';
import { startTestApp, TestApp } from '../support/test-app';
import { badField, badLines, badRequest } from '../support/bad-request';

/**
 * The optional second factor of staff sign-in (issue 42, docs/decisions.md "A second factor"):
 * enrolment from a console session with the password, confirmation with a code, sign-in asking
 * for a code, replays and wrong codes refused and counted, an owner turning it off.
 */
describe('Staff second factor (TOTP)', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ env: { TRUST_PROXY: 'loopback', THROTTLE_SIGN_IN_ACCOUNT_MAX_FAILURES: '4' } });
  });
  afterAll(async () => {
    await app?.close();
  });

  const stored = async (id: number) => {
    const [row] = await app.sql<{
      totp_secret: string | null;
      totp_pending_secret: string | null;
      totp_last_step: number | null;
      on: boolean;
    }>(
      `SELECT totp_secret, totp_pending_secret, totp_last_step, totp_enabled_at IS NOT NULL AS on
         FROM staff_account WHERE id = $1`,
      [id],
    );
    return row;
  };
  const codeOf = (secret: string, step: number) => totpCode(base32Decode(secret), step);
  const attempt = (staff: TestStaff, code?: string, address = '198.51.100.20') =>
    app.http.post(
      '/admin/session',
      { name: staff.name, password: staff.password, ...(code === undefined ? {} : { code }) },
      { headers: { 'X-Forwarded-For': address } },
    );
  const sessionsOf = async (id: number) =>
    (await app.sql<{ n: number }>('SELECT count(*)::int AS n FROM staff_session WHERE account_id = $1', [id]))[0].n;
  const auditOf = (id: number, actions: string[]) =>
    app.sql<{ action: string; summary: unknown }>(
      'SELECT action, summary FROM admin_audit WHERE target = $1 AND action = ANY($2) ORDER BY id',
      [`staff:${id}`, actions],
    );

  /**
   * Enrols and confirms with the code of the current step: accepted even if a step boundary passes
   * before the service checks it, and the next step's code is then accepted for the next minute.
   */
  async function enrol(session: TestStaffSession): Promise<{ secret: string; confirmedStep: number }> {
    const started = await session.client.post('/admin/me/totp', { password: session.staff.password });
    expect(started.status).toBe(201);
    const secret = started.body.secret as string;
    const confirmedStep = totpStep(Date.now());
    const confirmed = await session.client.put('/admin/me/totp', { code: codeOf(secret, confirmedStep) });
    expect(confirmed.status).toBe(204);
    return { secret, confirmedStep };
  }

  it('is set up from a console session with the password, and on only once a code confirms it', async () => {
    const staff = await createStaff(app, 'moderator');
    const session = await signIn(app, staff);

    const wrong = await session.client.post('/admin/me/totp', { password: `${staff.password}!` });
    expect({ status: wrong.status, body: wrong.body }).toEqual({
      status: 400,
      body: badLines('password is wrong'),
    });
    expect(await stored(staff.id)).toEqual({
      totp_secret: null,
      totp_pending_secret: null,
      totp_last_step: null,
      on: false,
    });

    const started = await session.client.post('/admin/me/totp', { password: staff.password });
    expect(started.status).toBe(201);
    const secret = started.body.secret as string;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(started.body).toEqual({
      secret,
      uri: `otpauth://totp/rhythmc:${staff.name}?secret=${secret}&issuer=rhythmc&algorithm=SHA1&digits=6&period=30`,
    });
    expect(await stored(staff.id)).toEqual({
      totp_secret: null,
      totp_pending_secret: secret,
      totp_last_step: null,
      on: false,
    });
    // Not on yet: sign-in asks for no code.
    expect((await attempt(staff)).status).toBe(200);
    expect((await session.client.get('/admin/me')).body).toMatchObject({ secondFactor: false });

    const step = totpStep(Date.now());
    for (const [code, message] of [
      [codeOf(secret, step + 3), 'code is wrong: enter the code the app shows now'],
      ['12345', 'code is wrong: enter the code the app shows now'],
      [123456, 'code must be shorter than or equal to 16 characters; code must be a string'],
    ] as const) {
      const refused = await session.client.put('/admin/me/totp', { code });
      expect({ status: refused.status, body: refused.body }).toEqual({
        status: 400,
        body: badLines(...message.split('; ')),
      });
    }
    expect((await stored(staff.id)).on).toBe(false);

    const confirmed = await session.client.put('/admin/me/totp', { code: codeOf(secret, step) });
    expect(confirmed.status).toBe(204);
    const row = await stored(staff.id);
    expect(row).toEqual({
      totp_secret: secret,
      totp_pending_secret: null,
      totp_last_step: expect.any(Number),
      on: true,
    });
    expect([step, step + 1]).toContain(row.totp_last_step);
    expect((await session.client.get('/admin/me')).body).toMatchObject({ secondFactor: true });
    expect((await app.admin.get(`/admin/staff/${staff.id}`)).body).toMatchObject({ secondFactor: true });
    // Confirming again: nothing is being set up.
    const again = await session.client.put('/admin/me/totp', { code: codeOf(secret, step + 1) });
    expect({ status: again.status, body: again.body }).toEqual({
      status: 400,
      body: badRequest('No second factor is being set up: start with POST /admin/me/totp'),
    });
    // Starting again while on: 409, the secret unchanged.
    const twice = await session.client.post('/admin/me/totp', { password: staff.password });
    expect({ status: twice.status, body: twice.body }).toEqual({
      status: 409,
      body: { error: 'CONFLICT', message: 'A second factor is already on: turn it off first (DELETE /admin/me/totp)' },
    });
    expect((await stored(staff.id)).totp_secret).toBe(secret);
    // Each change is in the audit log, and the secret in none of it.
    expect(await auditOf(staff.id, ['staff.totp-start', 'staff.totp-on', 'staff.totp-off'])).toEqual([
      { action: 'staff.totp-start', summary: {} },
      { action: 'staff.totp-on', summary: {} },
    ]);
    const logged = await app.sql<{ n: number }>(
      "SELECT count(*)::int AS n FROM admin_audit WHERE summary::text LIKE '%' || $1 || '%'",
      [secret],
    );
    expect(logged).toEqual([{ n: 0 }]);
  });

  it('asks a signed-up account for a code at sign-in, refuses wrong and used codes, and opens one session per code', async () => {
    const staff = await createStaff(app, 'support');
    const { secret, confirmedStep } = await enrol(await signIn(app, staff));
    const sessions = await sessionsOf(staff.id);

    const none = await attempt(staff);
    expect({ status: none.status, body: none.body }).toEqual({
      status: 401,
      body: { error: 'UNAUTHORIZED', message: 'Enter the code of your authenticator app', secondFactor: 'totp' },
    });
    expect(none.headers.getSetCookie()).toEqual([]);
    const wrong = await attempt(staff, codeOf(secret, confirmedStep + 5));
    expect({ status: wrong.status, body: wrong.body }).toEqual({
      status: 401,
      body: { error: 'UNAUTHORIZED', message: 'Wrong or already used authenticator code', secondFactor: 'totp' },
    });
    // The code of the confirmation is used already.
    expect((await attempt(staff, codeOf(secret, confirmedStep))).body).toEqual(wrong.body);
    // A right code with a wrong password: the password's answer, and the code stays unused.
    const next = codeOf(secret, confirmedStep + 1);
    const wrongPassword = await app.http.post('/admin/session', {
      name: staff.name,
      password: `${staff.password}?`,
      code: next,
    });
    expect({ status: wrongPassword.status, body: wrongPassword.body }).toEqual({
      status: 401,
      body: { error: 'UNAUTHORIZED', message: 'Wrong name or password' },
    });
    expect(await sessionsOf(staff.id)).toBe(sessions);

    const signedIn = await attempt(staff, next);
    expect(signedIn.status).toBe(200);
    expect(signedIn.body).toMatchObject({ name: staff.name, credential: 'session', secondFactor: true });
    expect(await sessionsOf(staff.id)).toBe(sessions + 1);
    expect((await stored(staff.id)).totp_last_step).toBe(confirmedStep + 1);
    // The same code again (a replay, or a second browser racing): refused.
    const replay = await attempt(staff, next);
    expect({ status: replay.status, body: replay.body }).toEqual({ status: 401, body: wrong.body });
    expect(await sessionsOf(staff.id)).toBe(sessions + 1);

    // Audit: every refused code and the wrong password, not the missing code; the sign-in names its second factor.
    const failedCode = {
      action: 'staff.sign-in-failed',
      summary: { name: staff.name, reason: 'wrong authenticator code' },
    };
    expect(await auditOf(staff.id, ['staff.sign-in', 'staff.sign-in-failed'])).toEqual([
      { action: 'staff.sign-in', summary: {} },
      failedCode,
      failedCode,
      { action: 'staff.sign-in-failed', summary: { name: staff.name, reason: 'wrong name or password' } },
      { action: 'staff.sign-in', summary: { secondFactor: 'totp' } },
      failedCode,
    ]);
  });

  it('counts wrong codes as failed sign-ins: the account locks out of unknown browsers', async () => {
    const staff = await createStaff(app, 'support');
    const { secret, confirmedStep } = await enrol(await signIn(app, staff));
    // THROTTLE_SIGN_IN_ACCOUNT_MAX_FAILURES=4, each guess from an address of its own.
    for (let i = 0; i < 4; i++)
      expect((await attempt(staff, String(100_000 + i), `203.0.113.${30 + i}`)).status).toBe(401);
    const locked = await attempt(staff, codeOf(secret, confirmedStep + 1), '198.51.100.40');
    expect({ status: locked.status, error: locked.body.error }).toEqual({ status: 429, error: 'RATE_LIMITED' });
    expect((await stored(staff.id)).totp_last_step).toBe(confirmedStep);
  });

  it("is set up and turned off by the person from a console session only; an owner turns off anyone's", async () => {
    const staff = await createStaff(app, 'admin');
    const session = await signIn(app, staff);
    const token = await createToken(session);
    for (const client of [app.http.withToken(token.token), app.admin]) {
      for (const [method, body] of [
        ['POST', { password: staff.password }],
        ['PUT', { code: '123456' }],
        ['DELETE', { password: staff.password }],
      ] as const) {
        const refused = await client.request(method, '/admin/me/totp', { body });
        expect({ method, status: refused.status, error: refused.body.error }).toEqual({
          method,
          status: 403,
          error: 'FORBIDDEN',
        });
      }
    }

    const { secret } = await enrol(session);
    const wrong = await session.client.request('DELETE', '/admin/me/totp', { body: { password: 'not the password!' } });
    expect({ status: wrong.status, body: wrong.body }).toEqual({
      status: 400,
      body: badLines('password is wrong'),
    });
    expect((await stored(staff.id)).totp_secret).toBe(secret);
    const off = await session.client.request('DELETE', '/admin/me/totp', { body: { password: staff.password } });
    expect(off.status).toBe(204);
    expect(await stored(staff.id)).toEqual({
      totp_secret: null,
      totp_pending_secret: null,
      totp_last_step: null,
      on: false,
    });
    expect((await attempt(staff)).status).toBe(200);

    // Lost phone: an owner turns it off (PATCH), and only off.
    await enrol(session);
    const on = await app.admin.request('PATCH', `/admin/staff/${staff.id}`, { body: { secondFactor: true } });
    expect({ status: on.status, body: on.body }).toEqual({
      status: 400,
      body: badField(
        'secondFactor',
        'can only be turned off here (false); the person enrols from their console session',
      ),
    });
    expect((await stored(staff.id)).on).toBe(true);
    const reset = await app.admin.request('PATCH', `/admin/staff/${staff.id}`, { body: { secondFactor: false } });
    expect(reset.status).toBe(200);
    expect(reset.body).toMatchObject({ id: staff.id, secondFactor: false });
    expect((await stored(staff.id)).on).toBe(false);
    expect((await attempt(staff)).status).toBe(200);
    const [audit] = await app.sql<{ action: string; summary: unknown; actor: string }>(
      "SELECT action, summary, actor FROM admin_audit WHERE target = $1 AND action = 'staff.update' ORDER BY id DESC LIMIT 1",
      [`staff:${staff.id}`],
    );
    expect(audit).toEqual({ action: 'staff.update', summary: { secondFactor: false }, actor: 'ADMIN_TOKEN' });
  });
});
