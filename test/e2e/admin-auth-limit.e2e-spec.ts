import { HttpResponse } from '../support/http';
import { ADMIN_TOKEN, multiInstanceAvailable, startTestApp, TestApp } from '../support/test-app';

/** The limit at its defaults (10 in a row, 900 s): the test environment raises it otherwise. */
const DEFAULT_LIMITS = { THROTTLE_ADMIN_AUTH_MAX_FAILURES: '', THROTTLE_ADMIN_AUTH_LOCKOUT_SECONDS: '' };
const METRICS_TOKEN = 'test-metrics-token-0123456789';
const INVALID_ADMIN = { error: 'UNAUTHORIZED', message: 'Invalid admin token' };
const INVALID_METRICS = { error: 'UNAUTHORIZED', message: 'Invalid metrics token' };

/** 429 with Retry-After within the lock-out (900 s by default). */
function expectLockedOut(response: HttpResponse, lockoutSeconds = 900): void {
  const retryAfter = Number(response.headers.get('retry-after'));
  expect({ status: response.status, body: response.body }).toEqual({
    status: 429,
    body: { error: 'RATE_LIMITED', message: `Too many requests; retry in ${retryAfter} s` },
  });
  expect(retryAfter).toBeGreaterThan(lockoutSeconds - 60);
  expect(retryAfter).toBeLessThanOrEqual(lockoutSeconds);
}

/**
 * Wrong admin and metrics tokens per source address (decisions.md "Rate limits": 10 in a row lock
 * the address out for 900 s). The test app trusts loopback proxies, so X-Forwarded-For names the
 * source address of each request.
 */
describe('Failed admin authentications per source address', () => {
  let app: TestApp;
  let second: TestApp | null = null;

  beforeAll(async () => {
    app = await startTestApp({ env: { ...DEFAULT_LIMITS, TRUST_PROXY: 'loopback', METRICS_TOKEN } });
  });
  afterAll(async () => {
    await second?.close();
    await app.close();
  });

  const admin = (on: TestApp, from: string, token: string | null) =>
    on.http.get('/admin/servers', { token, headers: { 'X-Forwarded-For': from } });
  const metrics = (on: TestApp, from: string, token: string | null) =>
    on.http.get('/metrics', { token, headers: { 'X-Forwarded-For': from } });

  it('10 wrong admin tokens in a row lock that address out, the right token included; other addresses are not concerned', async () => {
    const from = '198.51.100.10';
    const wrong = [];
    for (let i = 0; i < 10; i++) wrong.push(await admin(app, from, `wrong-admin-token-${i}`));
    expect(wrong.map((response): unknown[] => [response.status, response.body])).toEqual(
      Array.from({ length: 10 }, () => [401, INVALID_ADMIN]),
    );
    expectLockedOut(await admin(app, from, 'wrong-admin-token-10'));
    expectLockedOut(await admin(app, from, ADMIN_TOKEN));
    expectLockedOut(await admin(app, from, null));
    // An admin write from the address is refused before it runs: nothing stored, no audit row.
    const write = await app.http.post(
      '/admin/servers',
      { name: 'locked-out', country: 'DE' },
      { token: ADMIN_TOKEN, headers: { 'X-Forwarded-For': from } },
    );
    expectLockedOut(write);
    expect(await app.sql("SELECT id FROM game_server WHERE name = 'locked-out'")).toEqual([]);

    // Another address: the right token gets in, and its own wrong ones have their own count.
    expect((await admin(app, '198.51.100.11', ADMIN_TOKEN)).status).toBe(200);
    expect((await admin(app, '198.51.100.11', 'wrong-admin-token')).body).toEqual(INVALID_ADMIN);
    expect((await admin(app, '2001:db8::11', ADMIN_TOKEN)).status).toBe(200);
    // /metrics is counted apart: the locked-out address still scrapes with the metrics token.
    expect((await metrics(app, from, METRICS_TOKEN)).status).toBe(200);
  });

  it('counts failures in a row: the right token starts the count again, and a missing token is no guess', async () => {
    const from = '198.51.100.20';
    const statuses = [];
    for (let i = 0; i < 9; i++) statuses.push((await admin(app, from, `wrong-${i}`)).status);
    statuses.push((await admin(app, from, ADMIN_TOKEN)).status);
    for (let i = 0; i < 9; i++) statuses.push((await admin(app, from, `wrong-again-${i}`)).status);
    for (let i = 0; i < 20; i++) statuses.push((await admin(app, from, null)).status);
    statuses.push((await admin(app, from, ADMIN_TOKEN)).status);
    expect(statuses).toEqual([...Array(9).fill(401), 200, ...Array(9).fill(401), ...Array(20).fill(401), 200]);
  });

  it('10 wrong metrics tokens in a row lock that address out of /metrics only', async () => {
    const from = '198.51.100.30';
    const wrong = [];
    for (let i = 0; i < 10; i++) wrong.push(await metrics(app, from, `wrong-metrics-token-${i}`));
    expect(wrong.map((response): unknown[] => [response.status, response.body])).toEqual(
      Array.from({ length: 10 }, () => [401, INVALID_METRICS]),
    );
    expectLockedOut(await metrics(app, from, METRICS_TOKEN));
    expect((await metrics(app, '198.51.100.31', METRICS_TOKEN)).status).toBe(200);
    expect((await admin(app, from, ADMIN_TOKEN)).status).toBe(200);
  });

  (multiInstanceAvailable() ? it : it.skip)(
    'with REDIS_URL, an address locked out on one instance is locked out on every instance',
    async () => {
      second = await startTestApp({
        shareWith: app,
        env: { ...DEFAULT_LIMITS, TRUST_PROXY: 'loopback', METRICS_TOKEN },
      });
      const from = '198.51.100.40';
      for (let i = 0; i < 5; i++) expect((await admin(app, from, `wrong-${i}`)).status).toBe(401);
      for (let i = 5; i < 10; i++) expect((await admin(second, from, `wrong-${i}`)).status).toBe(401);
      expectLockedOut(await admin(app, from, ADMIN_TOKEN));
      expectLockedOut(await admin(second, from, ADMIN_TOKEN));
      expect((await admin(second, '198.51.100.41', ADMIN_TOKEN)).status).toBe(200);
    },
  );
});

describe('Failed admin authentications with other numbers', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({
      env: {
        TRUST_PROXY: 'loopback',
        THROTTLE_ADMIN_AUTH_MAX_FAILURES: '3',
        THROTTLE_ADMIN_AUTH_LOCKOUT_SECONDS: '120',
      },
    });
  });
  afterAll(async () => {
    await app.close();
  });

  it('THROTTLE_ADMIN_AUTH_MAX_FAILURES and THROTTLE_ADMIN_AUTH_LOCKOUT_SECONDS set the numbers', async () => {
    const from = '203.0.113.50';
    const get = (token: string) => app.http.get('/admin/audit', { token, headers: { 'X-Forwarded-For': from } });
    expect([(await get('a')).status, (await get('b')).status, (await get('c')).status]).toEqual([401, 401, 401]);
    expectLockedOut(await get(ADMIN_TOKEN), 120);
  });
});
