import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { CONSOLE_CSP } from '../../src/console/console-static';
import { base32Decode, totpCode, totpStep } from '../../src/staff/totp';
import { createPlayer, onlinePlayer, randomUuid } from '../factories/player.factory';
import { createServer, onlineServer, uniqueName } from '../factories/server.factory';
import { createStaff, signIn, type TestStaff } from '../factories/staff.factory';
import { defineCharts, gameplayPayload } from '../factories/upload.factory';
import { BROWSER_SUITE_START_MS, ensureConsoleBuilt, startWithChromium } from '../support/browser';
import { FakeIdentityProvider } from '../support/fake-identity-provider';
import { LogCapture } from '../support/log-capture';
import { eventually } from '../support/wait';
import { ADMIN_TOKEN, startTestApp, TestApp } from '../support/test-app';
import { testDatabaseServerUrl } from '../setup/test-env';
import { WsClient } from '../support/ws-client';

/**
 * The web console in a real browser (Debian's chromium driven by playwright-core) against the real
 * service. CONSOLE_SCREENSHOTS=docs/screenshots also writes the screenshots of docs/operations.md.
 */
const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS ?? null;

/** Evaluates an expression in the page (a string: the tests are typed without the DOM library). */
const inPage = (page: Page, expression: string): Promise<unknown> => page.evaluate(expression);
/** The database backup is the embedded database's; on PostgreSQL the service answers 409 naming pg_dump. */
const onPostgres = testDatabaseServerUrl() !== null;

describe('Web console', () => {
  const logs = new LogCapture();
  let app: TestApp;
  const idp = new FakeIdentityProvider();
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  /** Content-Security-Policy violations and page errors: none may happen. */
  const problems: string[] = [];
  /** The owner the suite signs in as (its password is in no log line). */
  let owner: TestStaff;
  const resourceDir = mkdtempSync(join(tmpdir(), 'rhythmc-console-'));
  const watch = (watched: Page) => {
    watched.setDefaultTimeout(10_000);
    watched.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    watched.on('console', (message) => {
      if (message.type() === 'error' && !/status of 4\d\d/.test(message.text()))
        problems.push(`console: ${message.text()}`);
    });
    // confirm() is accepted; prompt() gets `promptAnswer` (the erasure asks for the username).
    watched.on('dialog', (dialog) => void dialog.accept(dialog.type() === 'prompt' ? promptAnswer : undefined));
  };
  let promptAnswer = '';

  beforeAll(async () => {
    ensureConsoleBuilt();
    if (SCREENSHOTS) mkdirSync(SCREENSHOTS, { recursive: true });
    await idp.start();
    mkdirSync(join(resourceDir, 'packs'), { recursive: true });
    writeFileSync(join(resourceDir, 'packs', 'console.zip'), 'zip');
    ({ app, browser } = await startWithChromium(() =>
      startTestApp({
        env: { LOG_LEVEL: 'debug', IDENTITY_PROVIDER_URL: idp.url, RESOURCE_DIR: resourceDir },
        logDestination: logs,
      }),
    ));
    owner = await createStaff(app, 'owner', 'console-owner');
    context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    page = await context.newPage();
    watch(page);
  }, BROWSER_SUITE_START_MS);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await idp.stop();
    rmSync(resourceDir, { recursive: true, force: true });
  });

  const shot = async (name: string, on: Page = page) => {
    if (SCREENSHOTS) await on.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  };
  /** Signs in through the form as the console's user would. */
  const signInAs = async (on: Page, staff: TestStaff) => {
    await on.goto(`${app.baseUrl}/console/`);
    await on.getByLabel('Name').fill(staff.name);
    await on.getByLabel('Password').fill(staff.password);
    await on.getByRole('button', { name: 'Sign in' }).click();
    await on.getByRole('heading', { name: 'Overview' }).waitFor();
  };
  const login = () => signInAs(page, owner);
  /** The page's own fetch of an admin route, with the session cookie and the CSRF token the console sends. */
  const fetchInPage = (on: Page, method: string, path: string) =>
    inPage(
      on,
      `fetch(${JSON.stringify(path)}, { method: ${JSON.stringify(method)}, headers: { 'X-CSRF-Token': (document.cookie.match(/rhythmc_csrf=([^;]+)/) || [])[1] || '' } }).then(async (r) => ({ status: r.status, body: await r.json().catch(() => null) }))`,
    ) as Promise<{ status: number; body: unknown }>;

  it('is served with a strict CSP, nosniff, no-cache for index.html and a year for hashed assets', async () => {
    const index = await fetch(`${app.baseUrl}/console/`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toContain("default-src 'self'");
    expect(CONSOLE_CSP).toContain("frame-ancestors 'none'");
    expect(index.headers.get('x-content-type-options')).toBe('nosniff');
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const html = await index.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${app.baseUrl}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-type')).toMatch(/javascript/);
    // Read to the end: an unread body keeps fetch's socket open after the file (a leaked handle).
    expect((await asset.text()).length).toBeGreaterThan(1000);
    expect((await fetch(`${app.baseUrl}/console`, { redirect: 'manual' })).headers.get('location')).toBe('/console/');
    const missing = await fetch(`${app.baseUrl}/console/assets/none.js`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: 'NOT_FOUND', message: 'Not found' });
  });

  it('shows the API error for a wrong password, not a blank page', async () => {
    await page.goto(`${app.baseUrl}/console/`);
    await page.getByLabel('Name').fill(owner.name);
    await page.getByLabel('Password').fill('not the password at all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toBe('401 UNAUTHORIZED: Wrong name or password');
    expect(await context.cookies()).toEqual([]);
    await shot('console-login-error');
  });

  it('signs in: an HttpOnly session cookie the page cannot read, nothing in storage, and the overview', async () => {
    const server = await onlineServer(app, { name: uniqueName('lobby') });
    await onlinePlayer(app, server);
    await login();
    const cookies = await context.cookies();
    const session = cookies.find((cookie) => cookie.name === 'rhythmc_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/admin', secure: false });
    expect(cookies.find((cookie) => cookie.name === 'rhythmc_csrf')).toMatchObject({
      httpOnly: false,
      sameSite: 'Strict',
    });
    expect(cookies.find((cookie) => cookie.name === 'rhythmc_device')).toMatchObject({
      httpOnly: true,
      path: '/admin/session',
    });
    expect(String(await inPage(page, 'document.cookie'))).not.toContain(session?.value as string);
    expect(await inPage(page, 'sessionStorage.length + localStorage.length')).toBe(0);
    expect(page.url()).not.toContain(owner.password);
    await page.getByRole('banner').getByText(owner.name).waitFor();
    await page.getByText('servers online').waitFor();
    expect(await page.locator('.stat-value').first().textContent()).toBe('1');
    await shot('console-overview');
  });

  it('finds a player by name, bans them, and kick_player reaches the game server over its WebSocket', async () => {
    const server = await onlineServer(app, { name: uniqueName('survival') });
    const player = await onlinePlayer(app, server, { displayName: 'Griefer' });
    const ws = await WsClient.connect(app.baseUrl, server.accessToken);
    try {
      await page.getByRole('link', { name: 'Players' }).click();
      await page.getByLabel('Find by').selectOption('username');
      await page.getByLabel('Search').fill(player.username.slice(0, 6).toUpperCase());
      await page.getByRole('button', { name: 'Search' }).click();
      await page.getByRole('link', { name: player.username }).click();
      await page.getByRole('heading', { name: /Griefer/ }).waitFor();
      await page.getByText(`on ${server.body.serverName as string}`).waitFor();
      const form = page.getByRole('form', { name: 'Ban' });
      await form.getByLabel('Reason', { exact: true }).fill('griefing');
      await form.getByLabel(/Kick message/).fill('Banned for griefing');
      await form.getByRole('button', { name: 'Ban' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: 'Banned permanently; kick message: Banned for griefing' })
        .waitFor();
      const kick = await ws.next((frame) => frame.event === 'kick_player');
      expect(kick).toEqual({
        event: 'kick_player',
        data: { uid: player.uid, message: 'Banned for griefing', reason: 'griefing', until: '' },
      });
      await page.getByText('banned permanently: griefing').waitFor();
      await shot('console-player');

      // A wrong until is the API's 400, worded as the API words it.
      await form.getByLabel(/Until/).fill('2001-01-01T10:00:00');
      await form.getByRole('button', { name: 'Ban' }).click();
      await expect(form.getByRole('alert').textContent()).resolves.toBe('400 BAD_REQUEST: until must be in the future');

      await page.getByRole('button', { name: 'New Net Token' }).click();
      const netToken = await page.getByRole('dialog', { name: 'Net Token' }).getByRole('textbox').inputValue();
      expect(netToken.length).toBeGreaterThan(20);
      await page.getByRole('button', { name: 'Done' }).click();

      await page.getByRole('link', { name: 'Bans' }).click();
      await page.getByRole('table', { name: 'Active bans' }).getByText(player.username).waitFor();
      await page.getByRole('button', { name: 'Unban' }).click();
      await page.getByText(`Lifted the ban of ${player.username}`).waitFor();
      expect((await app.admin.get('/admin/bans', { query: { uid: player.uid } })).body.items).toEqual([]);

      // Erase (a privacy request): the prompt wants the username; the player's rows are gone.
      await page.goto(`${app.baseUrl}/console/#/players/${player.uid}`);
      promptAnswer = player.username;
      await page.getByRole('button', { name: 'Erase player' }).click();
      await page.getByRole('status').filter({ hasText: 'Erased; the audit log calls the player erased-' }).waitFor();
      expect(await app.sql('SELECT uid FROM player WHERE uid = $1', [player.uid])).toEqual([]);
      await page.goto(`${app.baseUrl}/console/#/players`);
    } finally {
      ws.close();
    }
  });

  it("shows a session takeover on the player's page and the holder's conflicts on the Servers page", async () => {
    const uuid = randomUuid();
    const username = `Sq${uuid.slice(0, 8)}`;
    idp.addAccount(uuid, username);
    const player = await createPlayer(app, { uuid, username });
    const squatter = await onlineServer(app, { name: uniqueName('squatter') });
    const legit = await onlineServer(app, { name: uniqueName('legit') });
    const squat = await app.http.post(
      '/player/login',
      { mode: 'ONLINE', version: 1, uuid, username },
      { token: squatter.accessToken },
    );
    expect(squat.status).toBe(200);
    const taken = await app.http.post(
      '/player/login',
      { mode: 'TOKEN', version: 1, authToken: player.netToken },
      { token: legit.accessToken },
    );
    expect(taken.status).toBe(200);

    await page.getByRole('link', { name: 'Players' }).click();
    await page.getByLabel('Find by').selectOption('uid');
    await page.getByLabel('Search').fill(String(player.uid));
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: username }).click();
    await page.getByRole('heading', { name: 'Takeovers' }).waitFor();
    const row = page.getByRole('table', { name: 'Takeovers' }).getByRole('row').nth(1);
    expect((await row.getByRole('cell').allTextContents()).slice(1)).toEqual([
      squatter.body.serverName,
      legit.body.serverName,
      'Net Token',
    ]);
    await page.getByText(`1; latest`).waitFor();
    const sessions = page.getByRole('table', { name: 'Sessions' });
    await sessions.getByText('TOKEN (proven)').waitFor();
    await sessions.getByText(/\(takeover\)$/).waitFor();

    await page.getByRole('link', { name: 'Servers' }).click();
    const servers = page.getByRole('table', { name: 'Servers' });
    await servers
      .getByRole('row')
      .filter({ hasText: squatter.body.serverName as string })
      .getByText('taken over 1 · kept out 0 · ONLINE refused 0')
      .waitFor();
  });

  it('registers a server and shows its bootstrap token once, good for a real /server/login', async () => {
    const name = uniqueName('console');
    await page.getByRole('link', { name: 'Servers' }).click();
    const form = page.getByRole('form', { name: 'Register a server' });
    await form.getByLabel('Name').fill(name);
    await form.getByLabel('Country or region').fill('FR');
    await form.getByRole('button', { name: 'Register' }).click();
    const dialog = page.getByRole('dialog', { name: `Bootstrap token of ${name}` });
    const bootstrapToken = await dialog.getByRole('textbox').inputValue();
    await page.getByRole('table', { name: 'Servers' }).getByText(name).waitFor();
    await shot('console-servers');
    const login = await app.http.post(
      '/server/login',
      { pluginVersion: 10, pluginSHA: 'sha-test' },
      { token: bootstrapToken },
    );
    expect(login.status).toBe(200);
    expect(login.body.serverName).toBe(name);
    await dialog.getByRole('button', { name: 'Done' }).click();
    await expect(dialog.count()).resolves.toBe(0);

    // A duplicate name is the API's 400.
    await form.getByLabel('Name').fill(name);
    await form.getByRole('button', { name: 'Register' }).click();
    await expect(form.getByRole('alert').textContent()).resolves.toMatch(/^400 BAD_REQUEST: /);

    // The server is online now: log its session out from its row; its access token stops working.
    await page.getByRole('button', { name: 'Refresh' }).click();
    const row = page.getByRole('table', { name: 'Servers' }).getByRole('row').filter({ hasText: name });
    await row.getByRole('button', { name: 'Log out' }).click();
    await page.getByText(`Logged ${name} out.`).waitFor();
    expect((await app.http.get('/server/charts', { token: login.body.accessToken as string })).status).toBe(401);
  });

  it('creates a public API key shown once, changes its scopes and revokes it; the key works and then stops', async () => {
    await page.getByRole('link', { name: 'API keys' }).click();
    const form = page.getByRole('form', { name: 'Create an API key' });
    await form.getByLabel('Name', { exact: true }).fill('Website');
    await form.getByLabel('Calls a minute (empty: the default)').fill('300');
    await form.getByLabel('read:players', { exact: true }).check();
    await form.getByRole('button', { name: 'Create' }).click();
    const dialog = page.getByRole('dialog', { name: 'API key of Website' });
    const key = await dialog.getByRole('textbox').inputValue();
    expect(key).toMatch(/^rpk_[A-Za-z0-9_-]{43}$/);
    const table = page.getByRole('table', { name: 'API keys' });
    const row = table.getByRole('row').filter({ hasText: 'Website' });
    await row.waitFor();
    await shot('console-api-keys');
    const board = await app.http.get('/public/v1/boards/atp', { token: key });
    expect({ status: board.status, limit: board.headers.get('ratelimit-limit') }).toEqual({
      status: 200,
      limit: '300',
    });
    expect((await app.http.get('/public/v1/players?prefix=a', { token: key })).status).toBe(200);
    await dialog.getByRole('button', { name: 'Done' }).click();
    await expect(dialog.count()).resolves.toBe(0);
    // Only its hash is kept, and the page never shows the key again.
    expect(await page.content()).not.toContain(key.slice(4));

    // Take read:players away and go back to the default limit.
    await row.getByLabel('read:players', { exact: true }).uncheck();
    await row.getByLabel('Calls a minute of Website').fill('');
    await row.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved Website: every instance applies it from the next call.').waitFor();
    const [stored] = await app.sql<{ scopes: string[]; rate_limit: number | null }>(
      "SELECT scopes, rate_limit FROM public_api_key WHERE name = 'Website'",
    );
    expect(stored).toEqual({ scopes: ['read:boards'], rate_limit: null });
    expect((await app.http.get('/public/v1/players?prefix=a', { token: key })).status).toBe(403);

    await table.getByRole('row').filter({ hasText: 'Website' }).getByRole('button', { name: 'Revoke' }).click();
    await page.getByText('Revoked Website.').waitFor();
    await table
      .getByRole('row')
      .filter({ hasText: 'Website' })
      .getByText(/^revoked /)
      .waitFor();
    expect((await app.http.get('/public/v1/boards/atp', { token: key })).status).toBe(401);

    // A key without a scope cannot be asked for: the button waits for one.
    await form.getByLabel('Name', { exact: true }).fill('Nothing');
    await form.getByLabel('read:boards', { exact: true }).uncheck();
    await form.getByLabel('read:players', { exact: true }).uncheck();
    await expect(form.getByRole('button', { name: 'Create' }).isDisabled()).resolves.toBe(true);
    await form.getByLabel('read:boards', { exact: true }).check();
    await expect(form.getByRole('button', { name: 'Create' }).isDisabled()).resolves.toBe(false);
  });

  it('registers a webhook showing its secret once, shows its delivery log, pauses and deletes it', async () => {
    await page.getByRole('link', { name: 'Webhooks' }).click();
    const form = page.getByRole('form', { name: 'Register a webhook' });
    await form.getByLabel('Name', { exact: true }).fill('Moderation');
    await form.getByLabel('URL', { exact: true }).fill('https://webhook.invalid/moderation');
    await form.getByLabel('player.banned', { exact: true }).check();
    await form.getByRole('button', { name: 'Register' }).click();
    const dialog = page.getByRole('dialog', { name: 'Signing secret of Moderation' });
    const secret = await dialog.getByRole('textbox').inputValue();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const [stored] = await app.sql<{ id: number; events: string[] }>(
      "SELECT id, events FROM webhook WHERE name = 'Moderation'",
    );
    expect(stored.events).toEqual(['chart.first_place', 'player.banned']);
    await dialog.getByRole('button', { name: 'Done' }).click();
    expect(await page.content()).not.toContain(secret.slice(6));
    const table = page.getByRole('table', { name: 'Webhooks' });
    const row = table.getByRole('row').filter({ hasText: 'Moderation' });
    await row.waitFor();
    await shot('console-webhooks');

    // A ban makes a delivery; the name never resolves, so its log shows the failed attempt.
    const player = (await app.admin.post('/admin/players', { username: `hook_${Date.now() % 100000}` })).body as {
      uid: number;
    };
    expect((await app.admin.post(`/admin/players/${player.uid}/ban`, {})).status).toBe(200);
    await eventually(
      async () =>
        (await app.sql('SELECT 1 FROM webhook_delivery WHERE webhook_id = $1 AND attempts > 0', [stored.id])).length >
        0,
      'an attempt',
    );
    await row.getByRole('button', { name: 'Deliveries' }).click();
    const log = page.getByRole('table', { name: 'Deliveries of Moderation' });
    await log.getByText('player.banned').waitFor();

    // A new secret, shown once; the old one keeps signing for a day.
    await row.getByRole('button', { name: 'New secret' }).click();
    const rotated = page.getByRole('dialog', { name: 'New signing secret of Moderation' });
    const newSecret = await rotated.getByRole('textbox').inputValue();
    expect(await app.sql('SELECT secret, previous_secret FROM webhook WHERE id = $1', [stored.id])).toEqual([
      { secret: newSecret, previous_secret: secret },
    ]);
    await rotated.getByRole('button', { name: 'Done' }).click();
    expect(await page.content()).not.toContain(newSecret.slice(6));

    await row.getByRole('button', { name: 'Pause' }).click();
    await page.getByText('Paused Moderation.').waitFor();
    expect(await app.sql('SELECT enabled FROM webhook WHERE id = $1', [stored.id])).toEqual([{ enabled: false }]);
    await table.getByRole('row').filter({ hasText: 'Moderation' }).getByRole('button', { name: 'Delete' }).click();
    await page.getByText('Deleted Moderation.').waitFor();
    expect(await app.sql('SELECT id FROM webhook WHERE id = $1', [stored.id])).toEqual([]);
  });

  it('shows the catalog batch 400 per entry and field', async () => {
    await page.getByRole('link', { name: 'Charts' }).click();
    await page.getByRole('button', { name: 'New batch' }).click();
    await page.locator('textarea[name=batch]').fill(
      JSON.stringify([
        { levelId: 7, name: 'Fine', difficultyConstant: 9, version: '1', active: true },
        { levelId: -1, name: 'Bad', difficultyConstant: 9, version: '1', active: true },
      ]),
    );
    await page.getByRole('button', { name: 'PUT /admin/charts' }).click();
    const problems = page.getByRole('list', { name: 'Problems by entry' });
    await problems.getByText('Entry [1] (-1)').waitFor();
    await problems.getByText('levelId: must be an integer from 0 to 2147483647').waitFor();
  });

  it("edits one chart's name as JSON: every other field of every chart on the page stays as stored", async () => {
    await app.admin.put('/admin/charts', [
      {
        levelId: 9101,
        name: 'Alpha',
        difficultyConstant: 12.8,
        version: '1.2.0',
        active: true,
        notes: 812,
        createdAt: '2026-03-01T10:00:00',
      },
      { levelId: 9102, name: 'Beta', difficultyConstant: 0.5, version: 'b', active: false, notes: null },
      { levelId: 9103, name: 'Gamma', difficultyConstant: 14.25, version: '3', active: true, notes: 5 },
    ]);
    // An upload naming an unknown level makes a placeholder (constant 0, inactive, no notes).
    const server = await onlineServer(app);
    const player = await onlinePlayer(app, server);
    const time = Date.now() - 60_000;
    const upload = await app.http.post(
      '/player/upload',
      {
        player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: time },
        server: { serverID: server.serverID, serverName: server.body.serverName as string, country: 'DE' },
        payload: gameplayPayload(9104, time),
      },
      { token: server.accessToken },
    );
    expect(upload.status).toBe(200);
    type StoredChart = Record<string, unknown> & { levelId: number };
    const stored = async () =>
      (await app.admin.get<{ items: StoredChart[] }>('/admin/charts', { query: { limit: 200 } })).body.items;
    const before = await stored();
    expect(before.find((chart) => chart.levelId === 9104)).toMatchObject({ placeholder: true, notes: null });
    expect(before.find((chart) => chart.levelId === 9101)).toMatchObject({ placeholder: false, notes: 812 });

    // (The page is still on Charts from the test before: away and back loads it afresh.)
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('link', { name: 'Charts' }).click();
    const table = page.getByRole('table', { name: 'Charts' });
    const row = (levelId: number) => table.getByRole('row').filter({ hasText: String(levelId) });
    // The console shows notes and the placeholder flag.
    await row(9104).getByText('placeholder').waitFor();
    await row(9101).getByRole('cell', { name: '812', exact: true }).waitFor();
    await shot('console-charts');

    await page.getByRole('button', { name: 'Edit this page as JSON' }).click();
    const editor = page.locator('textarea[name=batch]');
    const batch = JSON.parse(await editor.inputValue()) as StoredChart[];
    expect(batch.find((entry) => entry.levelId === 9101)).toEqual({
      levelId: 9101,
      name: 'Alpha',
      difficultyConstant: 12.8,
      version: '1.2.0',
      active: true,
      notes: 812,
    });
    await editor.fill(
      JSON.stringify(
        batch.map((entry) => (entry.levelId === 9101 ? { ...entry, name: 'Alpha (remastered)' } : entry)),
        null,
        2,
      ),
    );
    await page.getByRole('button', { name: 'PUT /admin/charts' }).click();
    const notice = page.getByRole('status').filter({ hasText: /^Stored: / });
    await notice.waitFor();
    expect(await stored()).toEqual(
      before.map((chart) =>
        chart.levelId === 9101 ? { ...chart, name: 'Alpha (remastered)', updatedAt: expect.any(String) } : chart,
      ),
    );
    expect(await notice.textContent()).toBe(`Stored: 1 upserted (${batch.length - 1} unchanged, not sent)`);
    await row(9101).getByText('Alpha (remastered)').waitFor();
    // Saving again with nothing changed sends nothing.
    await page.getByRole('button', { name: 'PUT /admin/charts' }).click();
    await page.getByRole('status').filter({ hasText: 'Nothing changed: nothing sent' }).waitFor();
  });

  it('lists the audit log, filtered by target', async () => {
    const other = await createServer(app, { name: uniqueName('audited') });
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('table', { name: 'Audit log' }).getByText('player.ban').first().waitFor();
    await shot('console-audit');
    await page.getByLabel(/Target/).fill(`server:${other.serverID}`);
    await page.getByRole('button', { name: 'Filter' }).click();
    // (waitForFunction would eval a string, which the console's CSP refuses.)
    await eventually(
      async () => (await page.getByRole('table', { name: 'Audit log' }).locator('tbody tr').count()) === 1,
      'the filtered audit log',
      10_000,
    );
    await page.getByRole('table', { name: 'Audit log' }).getByText('server.register').waitFor();
    await page.getByRole('table', { name: 'Audit log' }).getByText(`server:${other.serverID}`).waitFor();
  });

  it('pages a list (usePagedList): next page, first page, and a new filter starts on the first page', async () => {
    // 53 entries of one target: a page of 50 (newest first), then 3.
    const target = `paged:${uniqueName('pages')}`;
    await app.sql(
      `INSERT INTO admin_audit (action, target, summary, credential, actor)
       SELECT 'test.paged', $1, jsonb_build_object('n', n), 'ADMIN_TOKEN', 'ADMIN_TOKEN' FROM generate_series(1, 53) n`,
      [target],
    );
    const table = page.getByRole('table', { name: 'Audit log' });
    const rows = async (count: number, what: string) =>
      eventually(async () => (await table.locator('tbody tr').count()) === count, what, 10_000);
    const first = page.getByRole('button', { name: 'First page' });
    const next = page.getByRole('button', { name: 'Next page' });
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByLabel(/Target/).fill(target);
    await page.getByRole('button', { name: 'Filter' }).click();
    await rows(50, 'the first page of 50');
    await table.getByText('{"n":53}').waitFor();
    expect({ first: await first.isDisabled(), next: await next.isDisabled() }).toEqual({ first: true, next: false });
    await next.click();
    await rows(3, 'the last page of 3');
    await table.getByText('{"n":1}').waitFor();
    expect({ first: await first.isDisabled(), next: await next.isDisabled() }).toEqual({ first: false, next: true });
    await first.click();
    await rows(50, 'the first page again');
    await table.getByText('{"n":53}').waitFor();
    // On page 2, another filter answers its own first page (the cursor of the old filter is dropped).
    await next.click();
    await rows(3, 'page 2 again');
    await page.getByLabel(/Target/).fill(`${target}-none`);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('No entry.').waitFor();
    expect(await first.isDisabled()).toBe(true);
  });

  it('switches maintenance on and off', async () => {
    await page.getByRole('link', { name: 'Network settings' }).click();
    const form = page.getByRole('form', { name: 'Maintenance' });
    await form.getByLabel('Maintenance on').check();
    await form.getByLabel('Message').fill('Back at six');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.getByText('Maintenance is on').waitFor();
    expect((await app.admin.get('/admin/overview')).body.maintenance).toEqual({
      enabled: true,
      message: 'Back at six',
    });
    await form.getByLabel('Maintenance on').uncheck();
    await form.getByRole('button', { name: 'Save' }).click();
    await form.getByText('Maintenance is off').waitFor();
  });

  it('saves maintenance and the plugin policy without changing the fields the form left alone', async () => {
    // Values the old forms lost: a message with a line break (an <input> drops it), a SHA with a space.
    await app.admin.put('/admin/maintenance', { enabled: false, message: 'Back at six\nSee #status' });
    const policy = {
      minPluginVersion: 3,
      latestPluginVersion: 12,
      allowedPluginSHAs: ['sha-test', 'build 42'],
      downUrl: 'https://example.org/rhythmc-12.jar',
    };
    await app.admin.put('/admin/plugin-policy', policy);
    const overview = async () => (await app.admin.get('/admin/overview')).body as Record<string, unknown>;
    try {
      await page.getByRole('link', { name: 'Overview' }).click();
      await page.getByRole('link', { name: 'Network settings' }).click();
      const maintenance = page.getByRole('form', { name: 'Maintenance' });
      await maintenance.getByLabel('Maintenance on').check();
      await maintenance.getByRole('button', { name: 'Save' }).click();
      await maintenance.getByText('Maintenance is on').waitFor();
      expect((await overview()).maintenance).toEqual({ enabled: true, message: 'Back at six\nSee #status' });
      await maintenance.getByLabel('Maintenance on').uncheck();
      await maintenance.getByRole('button', { name: 'Save' }).click();
      await maintenance.getByText('Maintenance is off').waitFor();
      expect((await overview()).maintenance).toEqual({ enabled: false, message: 'Back at six\nSee #status' });

      const form = page.getByRole('form', { name: 'Plugin policy' });
      await form.getByLabel('Minimum plugin version').fill('4');
      await form.getByRole('button', { name: 'Save' }).click();
      await form.getByText(/^Plugin policy stored/).waitFor();
      expect((await overview()).pluginPolicy).toEqual({ ...policy, minPluginVersion: 4 });
      // An edited list is one SHA a line, each as typed.
      await form.getByLabel(/Allowed plugin SHAs/).fill('sha-test\nbuild 42\n\nbuild 43');
      await form.getByRole('button', { name: 'Save' }).click();
      await form.getByText(/3 allowed builds$/).waitFor();
      expect((await overview()).pluginPolicy).toEqual({
        ...policy,
        minPluginVersion: 4,
        allowedPluginSHAs: ['sha-test', 'build 42', 'build 43'],
      });
    } finally {
      await app.admin.put('/admin/plugin-policy', {
        minPluginVersion: 0,
        latestPluginVersion: 0,
        allowedPluginSHAs: [],
        downUrl: '',
      });
    }
  });

  it("shows a chart's board around a player, at the rank the upload answered", async () => {
    await defineCharts(app, [8801]);
    const server = await onlineServer(app);
    const player = await onlinePlayer(app, server, { displayName: 'Boarded' });
    const time = Date.now() - 60_000;
    const upload = await app.http.post(
      '/player/upload',
      {
        player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: time },
        server: { serverID: server.serverID, serverName: server.body.serverName as string, country: 'DE' },
        payload: gameplayPayload(8801, time, { acc: 100 }),
      },
      { token: server.accessToken },
    );
    expect(upload.body).toMatchObject({ trackRank: 1 });
    await page.getByRole('link', { name: 'Boards' }).click();
    await page.getByRole('combobox', { name: 'Board' }).selectOption('chart');
    await page.getByLabel('levelId').fill('8801');
    await page.getByLabel('Around uid (optional)').fill(String(player.uid));
    await page.getByRole('button', { name: 'Show' }).click();
    await page.getByText('Rank of the player: 1').waitFor();
    await expect(
      page.getByRole('table', { name: 'Board' }).getByRole('row').filter({ hasText: 'Boarded' }).count(),
    ).resolves.toBe(1);
  });

  it('creates a season, closes one with a close rule and shows its archived board', async () => {
    await defineCharts(app, [8803]);
    const title = {
      key: 'rhythmc:title.console-champion',
      type: 'title',
      unlockMethod: { type: 'MANUAL' },
      properties: { title: 'Champion', description: 'A season title', rarity: 'EPIC', position: true },
    };
    expect((await app.admin.put('/admin/collections', [title])).status).toBe(200);
    await page.getByRole('link', { name: 'Seasons' }).click();
    const form = page.getByRole('form', { name: 'Create a season' });
    const year = new Date().getUTCFullYear() + 1;
    await form.getByLabel('Slug').fill('console-next');
    await form.getByLabel('Name').fill('Next year');
    await form.getByLabel('Starts').fill(`${year}-01-01T00:00`);
    await form.getByLabel('Ends').fill(`${year}-04-01T00:00`);
    await form.getByRole('button', { name: 'Create' }).click();
    await page.getByText(/Created console-next \(id \d+\)/).waitFor();
    const [stored] = await app.sql(
      `SELECT name, starts_at, ends_at, grant_collection FROM board_period WHERE slug = 'console-next'`,
    );
    expect(stored).toEqual({
      name: 'Next year',
      starts_at: new Date(`${year}-01-01T00:00:00Z`),
      ends_at: new Date(`${year}-04-01T00:00:00Z`),
      grant_collection: null,
    });

    // A season that has started (the API takes no start in the past), with a play on its board.
    await app.sql(
      `INSERT INTO board_period (kind, slug, name, starts_at, ends_at, grant_collection, grant_top)
       VALUES ('season', 'console-now', 'Running', now() - interval '1 hour', now() + interval '1 day', $1, 1)`,
      [title.key],
    );
    const server = await onlineServer(app);
    const player = await onlinePlayer(app, server, { displayName: 'Seasoned' });
    const time = Date.now() - 60_000;
    const upload = await app.http.post(
      '/player/upload',
      {
        player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: time },
        server: { serverID: server.serverID, serverName: server.body.serverName as string, country: 'DE' },
        payload: gameplayPayload(8803, time, { acc: 100 }),
      },
      { token: server.accessToken },
    );
    expect(upload.status).toBe(200);
    // The row was written behind the page's back: load the page again (the link alone keeps its list).
    await page.reload();
    const row = page.getByRole('table', { name: 'Seasons' }).getByRole('row').filter({ hasText: 'console-now' });
    await row.getByRole('button', { name: 'Close now' }).click();
    await page
      .getByText(`Closed console-now: rhythmc:title.console-champion granted to 1 player(s) (${player.uid}).`)
      .waitFor();
    await row.getByRole('link', { name: 'Archived board' }).click();
    await page.getByText('closed: the archive, as read at the close').waitFor();
    await expect(
      page.getByRole('table', { name: 'Board' }).getByRole('row').filter({ hasText: 'Seasoned' }).count(),
    ).resolves.toBe(1);
    expect(
      await app.sql('SELECT uid::int AS uid FROM player_collection WHERE collection_key = $1', [title.key]),
    ).toEqual([{ uid: player.uid }]);
    await shot('seasons');
  });

  it('reviews a flagged play: approve puts it on the board, void takes it off', async () => {
    await defineCharts(app, [8802]);
    const server = await onlineServer(app);
    const player = await onlinePlayer(app, server, { displayName: 'Flagged' });
    const time = Date.now() - 60_000;
    const upload = await app.http.post(
      '/player/upload',
      {
        player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: time },
        server: { serverID: server.serverID, serverName: server.body.serverName as string, country: 'DE' },
        payload: gameplayPayload(8802, time, { acc: 100, maxCombo: 99_999 }),
      },
      { token: server.accessToken },
    );
    expect(upload.body).toMatchObject({ trackRank: null, playRating: 0 });
    await page.getByRole('link', { name: 'Plays' }).click();
    const row = page.getByRole('table', { name: 'Plays' }).getByRole('row').filter({ hasText: player.username });
    await row.getByRole('cell', { name: 'maxCombo', exact: true }).waitFor();
    await row.getByRole('button', { name: 'Approve' }).click();
    await page.getByText(/: approved, counts$/).waitFor();
    const board = await app.admin.get(`/admin/boards/charts/8802`);
    expect(board.body).toMatchObject({ entries: [{ rank: 1, uid: player.uid }] });
    // The page now shows the approved play under "approved"; void it there (the prompt for a reason is accepted empty).
    await page.getByRole('combobox', { name: 'Show' }).selectOption('approved');
    await page
      .getByRole('table', { name: 'Plays' })
      .getByRole('row')
      .filter({ hasText: player.username })
      .getByRole('button', { name: 'Void' })
      .click();
    await page.getByText(/: voided, does not count$/).waitFor();
    expect((await app.admin.get(`/admin/boards/charts/8802`)).body).toMatchObject({ entries: [] });
  });

  it("shows a flagged play's judgement counts, combo and both times in the service's zone, and ratings to 4 decimals", async () => {
    await defineCharts(app, [8803], 13);
    await defineCharts(app, [8804], 13);
    const server = await onlineServer(app);
    const player = await onlinePlayer(app, server, { displayName: 'Detailed' });
    const time = Date.now() - 60_000;
    const send = (levelId: number, at: number, overrides: Record<string, unknown>) =>
      app.http.post(
        '/player/upload',
        {
          player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: at },
          server: { serverID: server.serverID, serverName: server.body.serverName as string, country: 'DE' },
          payload: gameplayPayload(levelId, at, overrides),
        },
        { token: server.accessToken },
      );
    // 95.2 % on a 13: 13 + 0.2 / 3 = 13.0666… (float noise in the API's answer).
    expect((await send(8804, time, { acc: 95.2 })).status).toBe(200);
    expect((await send(8803, time + 1_000, { acc: 100, maxCombo: 99_999, fullCombo: true })).status).toBe(200);
    const [flagged] = await app.sql<{ id: string }>(
      'SELECT id::text FROM play_record WHERE uid = $1 AND level_id = 8803',
      [player.uid],
    );
    const detail = (await app.admin.get(`/admin/plays/${flagged.id}`)).body as Record<string, unknown>;

    await page.goto(`${app.baseUrl}/console/#/plays/${flagged.id}`);
    await page.getByRole('heading', { name: `Play ${flagged.id} (flagged)` }).waitFor();
    const judgements = page.getByRole('table', { name: 'Judgements' });
    expect(await judgements.getByRole('row').nth(1).getByRole('cell').allTextContents()).toEqual([
      'tap',
      '311',
      '4',
      '0',
    ]);
    await page.getByText('99999 · full combo').waitFor();
    await page.getByText(`${String(detail.sentAt).replace('T', ' ')} UTC`).waitFor();
    await page.getByText(`${String(detail.receivedAt).replace('T', ' ')} UTC`).waitFor();
    await shot('console-play');

    const profile = (await app.admin.get(`/admin/players/${player.uid}`)).body as {
      bests: Array<{ levelId: number; rating: number }>;
      atp: number;
    };
    const best = profile.bests.find((entry) => entry.levelId === 8804) as { rating: number };
    expect(String(best.rating).split('.')[1].length).toBeGreaterThan(4);
    await page.goto(`${app.baseUrl}/console/#/players/${player.uid}`);
    const row = page.getByRole('table', { name: 'Bests' }).getByRole('row').filter({ hasText: '8804' });
    await row.getByRole('cell', { name: best.rating.toFixed(4), exact: true }).waitFor();
    await page.getByText(profile.atp.toFixed(4)).first().waitFor();
  });

  it('reaches every admin write: creates a player, sets session handover, recomputes, describes and withdraws a pack', async () => {
    // A malformed escape in a pasted address draws the console (it threw while drawing: a blank page).
    await page.goto(`${app.baseUrl}/console/#/players/%E0`);
    await page.getByRole('link', { name: 'Network settings' }).waitFor();
    await page.goto(`${app.baseUrl}/console/#/players`);
    const create = page.getByRole('form', { name: 'Create a player' });
    await create.getByLabel('Username').fill('ConsoleMade');
    await create.getByRole('button', { name: 'Create' }).click();
    await create.getByText(/^Created ConsoleMade \(uid \d+\)$/).waitFor();
    expect((await app.admin.get('/admin/players', { query: { username: 'ConsoleMade' } })).body.items).toHaveLength(1);

    await page.getByRole('link', { name: 'Network settings' }).click();
    const handover = page.getByRole('form', { name: 'Session handover' });
    await handover.getByLabel('Mode').selectOption('all');
    await handover.getByLabel('ONLINE').uncheck();
    await handover.getByRole('button', { name: 'Save' }).click();
    await handover.getByText('Session handover: all').waitFor();
    expect((await app.admin.get('/admin/overview')).body.sessionHandover).toEqual({
      mode: 'all',
      groups: [],
      modes: ['TOKEN', 'OFFLINE_REFRESH'],
    });
    await handover.getByLabel('Mode').selectOption('off');
    await handover.getByRole('button', { name: 'Save' }).click();
    await handover.getByText('Session handover: off').waitFor();
    await page.getByRole('button', { name: 'Recompute ratings' }).click();
    await page.getByText(/^Recomputed: /).waitFor();

    await page.getByRole('link', { name: 'Packs & resources' }).click();
    await page.getByRole('button', { name: 'Rescan resources' }).click();
    await page.getByText(/^Rescanned: .*, 1 packs, /).waitFor();
    await page.getByRole('button', { name: 'Edit packs as JSON' }).click();
    // A bad entry: the 400's errors listed by entry (its message reads `[0].type must be …`).
    await page
      .getByLabel('Packs as JSON')
      .fill(
        JSON.stringify([{ name: 'p', displayName: 'P', type: 'HALF', availableSongs: [], file: 'packs/console.zip' }]),
      );
    await page.getByRole('button', { name: 'PUT /admin/packs' }).click();
    await page
      .getByRole('list', { name: 'Problems by entry' })
      .getByText('Entry [0]: type: must be one of FULL, CHAPTER, SONG')
      .waitFor();
    await page.getByLabel('Packs as JSON').fill(
      JSON.stringify([
        {
          name: 'console-pack',
          displayName: 'Console',
          type: 'CHAPTER',
          availableSongs: [1, 2],
          file: 'packs/console.zip',
        },
      ]),
    );
    await page.getByRole('button', { name: 'PUT /admin/packs' }).click();
    await page.getByText('Saved 1 pack').waitFor();
    const packRow = page.getByRole('table', { name: 'Packs' }).getByRole('row').filter({ hasText: 'console-pack' });
    await packRow.getByRole('cell', { name: 'packs/console.zip' }).waitFor();
    await packRow.getByRole('button', { name: 'Withdraw' }).click();
    await page.getByText('Withdrew console-pack').waitFor();
    expect((await app.admin.get('/admin/packs')).body).toEqual({ items: [] });
  });

  it(
    onPostgres
      ? 'takes a database backup from Network settings as an owner: on PostgreSQL the 409 naming pg_dump'
      : 'takes a database backup from Network settings as an owner: its name, size and SHA-256, and the file saved',
    async () => {
      await page.goto(`${app.baseUrl}/console/#/settings`);
      const card = page.getByRole('group', { name: 'Database backup' });
      await card.getByRole('button', { name: 'Take a backup' }).click();
      if (onPostgres) {
        await card
          .getByRole('alert')
          .filter({
            hasText:
              '409 CONFLICT: The service runs on PostgreSQL (DATABASE_URL): back it up with pg_dump (docs/operations.md "Backup and restore")',
          })
          .waitFor();
        expect(await card.getByRole('status').count()).toBe(0);
        expect(await app.sql(`SELECT 1 FROM admin_audit WHERE action = 'database.backup'`)).toEqual([]);
        return;
      }
      const notice = card.getByRole('status');
      await notice.waitFor();
      const shown =
        /^Backup (rhythmc-embedded-[0-9TZ-]+\.tar\.gz): (\d+) bytes, SHA-256 ([0-9a-f]{64})\. Save \1$/.exec(
          (await notice.textContent()) ?? '',
        );
      expect(shown).not.toBeNull();
      const [, filename, bytes, sha256] = shown as RegExpExecArray;
      const [saved] = await Promise.all([
        page.waitForEvent('download'),
        card.getByRole('link', { name: `Save ${filename}` }).click(),
      ]);
      expect(saved.suggestedFilename()).toBe(filename);
      const data = readFileSync(await saved.path());
      // The file saved is the one the service answered: its size and SHA-256 as shown, a gzip stream.
      expect({
        bytes: data.length,
        sha256: createHash('sha256').update(data).digest('hex'),
        magic: [...data.subarray(0, 2)],
      }).toEqual({ bytes: Number(bytes), sha256, magic: [0x1f, 0x8b] });
      expect(await app.sql(`SELECT target, summary FROM admin_audit WHERE action = 'database.backup'`)).toEqual([
        { target: 'database', summary: { bytes: Number(bytes), sha256 } },
      ]);
      const [audited] = (await app.admin.get('/admin/audit', { query: { action: 'database.backup' } })).body
        .items as Array<Record<string, unknown>>;
      expect(audited).toMatchObject({ actor: owner.name, actorId: owner.id });
    },
  );

  it('shows an admin Network settings without the database backup, which the API refuses (owners only)', async () => {
    const admin = await createStaff(app, 'admin', 'console-admin');
    const adminContext = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    try {
      const on = await adminContext.newPage();
      watch(on);
      await signInAs(on, admin);
      await on.getByRole('link', { name: 'Network settings' }).click();
      await on.getByRole('group', { name: 'Ratings' }).waitFor();
      expect(await on.getByRole('group', { name: 'Database backup' }).count()).toBe(0);
      expect(await on.getByRole('button', { name: 'Take a backup' }).count()).toBe(0);
      expect(await fetchInPage(on, 'POST', '/admin/database/backup')).toEqual({
        status: 403,
        body: { error: 'FORBIDDEN', message: 'The admin role may not do this (database.backup)' },
      });
    } finally {
      await adminContext.close();
    }
  });

  it('lets an owner add staff, change a role and disable an account (its session ends), and names the owner in the audit log', async () => {
    await page.getByRole('link', { name: 'Staff' }).click();
    const form = page.getByRole('form', { name: 'Add a staff member' });
    await form.getByLabel('Name').fill('console-support');
    await form.getByLabel('Role').selectOption('support');
    await form.getByLabel(/First password/).fill('support first passphrase');
    await form.getByRole('button', { name: 'Add' }).click();
    await page.getByText(/^Added console-support \(support\)/).waitFor();
    const row = page.getByRole('table', { name: 'Staff' }).getByRole('row').filter({ hasText: 'console-support' });
    await row.getByLabel('Role of console-support').selectOption('moderator');
    await page.getByText('console-support is now moderator').waitFor();
    const listed = await app.admin.get<{ items: Array<{ id: number; name: string; role: string }> }>('/admin/staff', {
      query: { limit: 200 },
    });
    const member = listed.body.items.find((item) => item.name === 'console-support') as { id: number; role: string };
    expect(member.role).toBe('moderator');
    const session = await signIn(app, {
      id: member.id,
      name: 'console-support',
      role: 'moderator',
      password: 'support first passphrase',
    });
    expect((await session.client.get('/admin/me')).status).toBe(200);
    // A password reset is offered on others' rows only: one's own is changed under My account (the API answers 403).
    await row.getByRole('button', { name: 'Reset password' }).waitFor();
    const ownRow = page.getByRole('table', { name: 'Staff' }).getByRole('row').filter({ hasText: owner.name });
    expect(await ownRow.getByRole('button', { name: 'Reset password' }).count()).toBe(0);
    expect(await ownRow.getByRole('link', { name: 'My account' }).getAttribute('href')).toBe('#/account');
    await row.getByRole('button', { name: 'Disable' }).click();
    await page.getByText('Disabled console-support').waitFor();
    expect((await session.client.get('/admin/me')).status).toBe(401);
    await shot('console-staff');

    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByLabel(/Person/).fill(owner.name);
    await page.getByRole('button', { name: 'Filter' }).click();
    const audit = page.getByRole('table', { name: 'Audit log' });
    await audit
      .getByRole('row')
      .filter({ hasText: 'staff.create' })
      .filter({ hasText: `staff:${member.id}` })
      .waitFor();
    expect(await audit.getByRole('row').filter({ hasText: 'staff.update' }).count()).toBe(2);
  });

  it('gives the signed-in member personal API tokens: shown once, working as a bearer, revocable', async () => {
    await page.getByRole('link', { name: 'My account' }).click();
    const form = page.getByRole('form', { name: 'New API token' });
    await form.getByLabel('Token name').fill('console script');
    await form.getByLabel('Role').selectOption('support');
    await form.getByRole('button', { name: 'Create token' }).click();
    const dialog = page.getByRole('dialog', { name: 'API token console script' });
    const token = await dialog.getByRole('textbox').inputValue();
    expect((await app.http.get('/admin/me', { token })).body).toMatchObject({ name: owner.name, role: 'support' });
    await dialog.getByRole('button', { name: 'Done' }).click();
    const row = page
      .getByRole('table', { name: 'Your API tokens' })
      .getByRole('row')
      .filter({ hasText: 'console script' });
    await row.getByRole('button', { name: 'Revoke' }).click();
    await page.getByText('Revoked console script').waitFor();
    expect((await app.http.get('/admin/me', { token })).status).toBe(401);
    await shot('console-account');
  });

  it('signs a moderator in: the pages and buttons of the role only, the API refusing the rest, then signs out', async () => {
    const moderator = await createStaff(app, 'moderator', 'console-moderator');
    const server = await onlineServer(app, { name: uniqueName('modview') });
    const player = await createPlayer(app);
    await defineCharts(app, [8805]);
    const modContext = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    try {
      const mod = await modContext.newPage();
      watch(mod);
      await signInAs(mod, moderator);
      await mod.getByRole('banner').getByText('moderator', { exact: true }).waitFor();
      expect(await mod.getByRole('navigation', { name: 'Pages' }).getByRole('link').allTextContents()).toEqual([
        'Overview',
        'Players',
        'Servers',
        'Bans',
        'Charts',
        'Collections',
        'Packs & resources',
        'Boards',
        'Seasons',
        'Plays',
        'Audit log',
        'My account',
      ]);

      // Servers: a moderator logs a server out, but neither registers one nor rotates a token.
      await mod.getByRole('link', { name: 'Servers' }).click();
      const serverRow = mod
        .getByRole('table', { name: 'Servers' })
        .getByRole('row')
        .filter({ hasText: server.body.serverName as string });
      await serverRow.getByRole('button', { name: 'Log out' }).waitFor();
      expect(await serverRow.getByRole('button', { name: 'Rotate token' }).count()).toBe(0);
      expect(await mod.getByRole('form', { name: 'Register a server' }).count()).toBe(0);

      // The catalog and the packs are read-only for a moderator.
      await mod.getByRole('link', { name: 'Charts' }).click();
      await mod.getByRole('table', { name: 'Charts' }).getByRole('cell', { name: 'Chart 8805' }).waitFor();
      expect(await mod.getByRole('button', { name: 'Edit this page as JSON' }).count()).toBe(0);
      await mod.getByRole('link', { name: 'Packs & resources' }).click();
      await mod.getByRole('heading', { name: 'Packs & resources' }).waitFor();
      expect(await mod.getByRole('button', { name: 'Rescan resources' }).count()).toBe(0);

      // A player: ban (a moderator's), a Net Token (support's and up), create (support's and up).
      await mod.goto(`${app.baseUrl}/console/#/players/${player.uid}`);
      const ban = mod.getByRole('form', { name: 'Ban' });
      await ban.getByLabel('Reason', { exact: true }).fill('moderated');
      await ban.getByRole('button', { name: 'Ban' }).click();
      await mod.getByRole('status').filter({ hasText: 'Banned permanently' }).waitFor();
      await mod.getByRole('button', { name: 'New Net Token' }).waitFor();
      await mod.getByText('banned permanently: moderated').waitFor();
      expect(await mod.getByRole('button', { name: 'Erase player' }).count()).toBe(0);
      expect(await mod.getByRole('button', { name: 'Export data' }).count()).toBe(0);
      const [banned] = (await app.admin.get('/admin/audit', { query: { actor: moderator.name, action: 'player.ban' } }))
        .body.items as Array<Record<string, unknown>>;
      expect(banned).toMatchObject({ target: `player:${player.uid}`, actor: moderator.name, actorId: moderator.id });
      await shot('console-moderator', mod);

      // A page of another role: the page says so, and the API refuses it whatever the page shows.
      await mod.goto(`${app.baseUrl}/console/#/staff`);
      await mod
        .getByRole('alert')
        .filter({ hasText: '403 FORBIDDEN: The moderator role may not see the Staff page' })
        .waitFor();
      expect(await fetchInPage(mod, 'GET', '/admin/staff')).toEqual({
        status: 403,
        body: { error: 'FORBIDDEN', message: 'The moderator role may not do this (staff.manage)' },
      });
      expect((await fetchInPage(mod, 'POST', '/admin/ratings/recompute')).status).toBe(403);
      // The owner's database backup: no page shows it to a moderator, and the API refuses it.
      await mod.goto(`${app.baseUrl}/console/#/settings`);
      await mod
        .getByRole('alert')
        .filter({ hasText: '403 FORBIDDEN: The moderator role may not see the Network settings page' })
        .waitFor();
      expect(await mod.getByRole('button', { name: 'Take a backup' }).count()).toBe(0);
      expect(await fetchInPage(mod, 'POST', '/admin/database/backup')).toEqual({
        status: 403,
        body: { error: 'FORBIDDEN', message: 'The moderator role may not do this (database.backup)' },
      });

      await mod.getByRole('button', { name: 'Sign out' }).click();
      await mod.getByRole('button', { name: 'Sign in' }).waitFor();
      expect((await fetchInPage(mod, 'GET', '/admin/me')).status).toBe(401);
    } finally {
      await modContext.close();
    }
  });

  it('sets up a second factor on My account, then signs in with password and authenticator code', async () => {
    const member = await createStaff(app, 'support', 'console-totp');
    const totpContext = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    try {
      const on = await totpContext.newPage();
      watch(on);
      await signInAs(on, member);
      await on.getByRole('link', { name: 'My account' }).click();
      const setUp = on.getByRole('form', { name: 'Set up a second factor' });
      await setUp.getByLabel('Your password').fill(member.password);
      await setUp.getByRole('button', { name: 'Set up' }).click();
      const key = await on.getByRole('dialog', { name: 'Authenticator key' }).getByRole('textbox').inputValue();
      expect(key).toMatch(/^[A-Z2-7]{32}$/);
      const confirmForm = on.getByRole('form', { name: 'Confirm the second factor' });
      // The code of the current step (still accepted if a step boundary passes before the service
      // checks it); the sign-in below uses the next step's, accepted from now for the next minute.
      const step = totpStep(Date.now());
      await confirmForm.getByLabel('Code shown by the app').fill(totpCode(base32Decode(key), step));
      await confirmForm.getByRole('button', { name: 'Turn on' }).click();
      await on.getByText('On: every sign-in from now on asks for a code').waitFor();
      expect((await app.admin.get(`/admin/staff/${member.id}`)).body).toMatchObject({ secondFactor: true });
      // The password field of "Turn off" is a field of its own (not the code field reused).
      const offForm = on.getByRole('form', { name: 'Turn the second factor off' });
      expect(
        await offForm
          .getByLabel('Your password')
          .evaluate((input) => (input as unknown as { maxLength: number }).maxLength),
      ).toBe(-1);
      await shot('console-second-factor', on);
      await on.getByRole('button', { name: 'Sign out' }).click();
      await on.getByRole('button', { name: 'Sign in' }).waitFor();

      // Password first; the form then asks for the code (no error shown for that), a wrong one is refused.
      await on.getByLabel('Name').fill(member.name);
      await on.getByLabel('Password').fill(member.password);
      await on.getByRole('button', { name: 'Sign in' }).click();
      const codeField = on.getByLabel('Authenticator code');
      await codeField.waitFor();
      expect(await on.getByRole('alert').count()).toBe(0);
      await codeField.fill(totpCode(base32Decode(key), step + 5));
      await on.getByRole('button', { name: 'Sign in' }).click();
      await on
        .getByRole('alert')
        .filter({ hasText: '401 UNAUTHORIZED: Wrong or already used authenticator code' })
        .waitFor();
      await codeField.fill(totpCode(base32Decode(key), step + 1));
      await on.getByRole('button', { name: 'Sign in' }).click();
      // Signed in, back on the page it signed out from (the address kept #/account).
      await on.getByRole('form', { name: 'Turn the second factor off' }).waitFor();
      expect((await fetchInPage(on, 'GET', '/admin/me')).body).toMatchObject({ name: member.name, secondFactor: true });
    } finally {
      await totpContext.close();
    }
  });

  it('works on a 375 px phone screen', async () => {
    const phone = await browser.newContext({ viewport: { width: 375, height: 740 }, isMobile: true, hasTouch: true });
    try {
      const small = await phone.newPage();
      watch(small);
      await signInAs(small, owner);
      expect(await inPage(small, 'document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
      await small.getByRole('button', { name: 'Menu' }).click();
      await small.getByRole('link', { name: 'Servers' }).click();
      await small.getByRole('heading', { name: 'Servers' }).waitFor();
      expect(await inPage(small, 'document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
      if (SCREENSHOTS) await small.screenshot({ path: join(SCREENSHOTS, 'console-phone-servers.png'), fullPage: true });
    } finally {
      await phone.close();
    }
  });

  it('starts a paged list over when its filter changes (Servers: all, page 2, then offline)', async () => {
    // 150 more servers, never logged in: two pages of 100 whichever filter. (Late in the file: the
    // tests before look for their servers on the first page.)
    await app.sql(`INSERT INTO game_server (name, country) SELECT 'paged-' || n, 'DE' FROM generate_series(1, 150) n`);
    const [{ total }] = await app.sql<{ total: number }>('SELECT count(*)::int AS total FROM game_server');
    const table = page.getByRole('table', { name: 'Servers' });
    const rows = () => table.locator('tbody tr').count();
    const first = page.getByRole('button', { name: 'First page' });
    await page.getByRole('link', { name: 'Servers' }).click();
    await eventually(async () => (await rows()) === 100 && (await first.isDisabled()), 'the first page of 100', 10_000);
    await page.getByRole('button', { name: 'Next page' }).click();
    await eventually(
      async () => (await rows()) === total - 100 && !(await first.isDisabled()),
      'the second page',
      10_000,
    );
    // Another filter: its own first page, not the old filter's cursor applied to it.
    await page.getByRole('combobox', { name: 'Show' }).selectOption('false');
    await eventually(
      async () => (await rows()) === 100 && (await first.isDisabled()),
      'the first page of the offline servers',
      10_000,
    );
  });

  it('signs out: the session ends on the service, and its cookie is refused even if sent again', async () => {
    const cookie = (await context.cookies()).find((candidate) => candidate.name === 'rhythmc_session');
    const csrf = (await context.cookies()).find((candidate) => candidate.name === 'rhythmc_csrf');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect((await context.cookies()).map((candidate) => candidate.name)).toEqual(['rhythmc_device']);
    const replayed = await app.http.get('/admin/me', {
      headers: { Cookie: `rhythmc_session=${cookie?.value}`, 'X-CSRF-Token': csrf?.value ?? '' },
    });
    expect(replayed.status).toBe(401);
    await page.reload();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
  });

  it('broke no Content-Security-Policy rule and logged no token or password', () => {
    expect(problems).toEqual([]);
    const text = logs.lines.join('\n');
    expect(text).not.toContain(ADMIN_TOKEN);
    expect(text).not.toContain(owner.password);
    expect(text).not.toMatch(/authorization/i);
    expect(logs.records().some((record) => record.path === '/admin/players' && record.status === 200)).toBe(true);
  });
});

describe('Web console without ADMIN_TOKEN', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ env: { ADMIN_TOKEN: '' } });
  });
  afterAll(async () => {
    await app.close();
  });

  it.each(['/console', '/console/', '/console/index.html'])('GET %s answers 404 with the error body', async (path) => {
    const response = await app.http.get(path);
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ error: 'NOT_FOUND', message: 'Not found' });
  });
});
