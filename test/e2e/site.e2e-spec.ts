import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { SITE_ASSET_CACHE, SITE_CSP } from '../../src/site/site-static';
import { createPlayer, loginPlayer, TestPlayerSession } from '../factories/player.factory';
import { onlineServer, TestServerSession } from '../factories/server.factory';
import { gameplayPayload } from '../factories/upload.factory';
import { BROWSER_SUITE_START_MS, ensureSiteBuilt, startWithChromium } from '../support/browser';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * The public leaderboard site (issue #43 item 4; docs/operations.md "Leaderboard site") in a real
 * browser (Debian's chromium driven by playwright-core) against the real service: the numbers it
 * shows are the public API's for the same seeded data (the banned player and the flagged play left
 * out), hostile display names are text, a phone-width page does not scroll sideways, and an API
 * answering 429 or 503 shows a message. SITE_SCREENSHOTS=<dir> also writes the screenshots.
 */
const SCREENSHOTS = process.env.SITE_SCREENSHOTS ?? null;
const SITE = '/leaderboard';
/** The per-address budget of the anonymous tier the site reads: the last test spends it. */
const ANONYMOUS_LIMIT = 400;
const JUDGED = 377;

let clock = Date.now() - 3_600_000;
const nextTime = () => (clock += 1_000);

async function play(
  app: TestApp,
  server: TestServerSession,
  player: TestPlayerSession,
  levelID: number,
  overrides: Record<string, unknown> = {},
): Promise<void> {
  const payload = gameplayPayload(levelID, nextTime(), overrides);
  const response = await app.http.post(
    '/player/upload',
    {
      player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: payload.time + 250 },
      server: { serverID: server.serverID, serverName: server.body.serverName as string, country: 'DE' },
      payload,
    },
    { token: server.accessToken },
  );
  if (response.status !== 200) throw new Error(`upload: ${response.status} ${response.text}`);
}

/** The page's formatting of the API's numbers (site/src/app.tsx `fmt`). */
const fmt = {
  atp: (value: number | null) => (value === null ? '–' : value.toFixed(2)),
  acc: (value: number) => `${value.toFixed(2)}%`,
  rating: (value: number) => value.toFixed(2),
  rank: (value: number | null) => (value === null ? '–' : `#${value}`),
};

/** A board's rows as the page shows them: one array of cell texts per row. */
const rowsOf = (page: Page, board: string): Promise<string[][]> =>
  page.evaluate<string[][]>(
    `Array.from(document.querySelectorAll('table[data-board="${board}"] tbody tr')).map((row) =>
      Array.from(row.querySelectorAll('td')).map((cell) => (cell.textContent || '').trim()))`,
  );

/** The player cell's text: the display name, then the username when it differs. */
const nameCell = (entry: { username: string; displayName: string }) =>
  entry.displayName === entry.username ? entry.displayName : `${entry.displayName}${entry.username}`;

describe('Leaderboard site', () => {
  let app: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let server: TestServerSession;
  const problems: string[] = [];
  const p: Record<string, TestPlayerSession> = {};
  const ANN_UUID = '5b1c2d3e-4f50-4612-8a7b-9c0d1e2f3a4b';
  const HOSTILE = '<img src=x onerror=window.pwned=1><b>x</b>';
  const LONG = 'Ŵ'.repeat(60);
  const api = async (path: string, query: Record<string, string | number> = {}): Promise<unknown> => {
    const response = await app.http.get(`/public/v1/${path}`, { token: null, query });
    expect(response.status).toBe(200);
    return response.body;
  };
  const watch = (watched: Page) => {
    watched.setDefaultTimeout(10_000);
    watched.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    watched.on('console', (message) => {
      if (message.type() === 'error' && !/status of (4\d\d|503)/.test(message.text()))
        problems.push(`console: ${message.text()}`);
    });
  };
  const shot = async (name: string, on: Page = page) => {
    if (SCREENSHOTS) await on.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  };
  /** A fresh load of the page (from about:blank: a goto that only changes the hash would keep the old page's content on screen). */
  const open = async (hash: string, on: Page = page) => {
    await on.goto('about:blank');
    await on.goto(`${app.baseUrl}${SITE}/${hash}`);
  };

  beforeAll(async () => {
    ensureSiteBuilt();
    if (SCREENSHOTS) mkdirSync(SCREENSHOTS, { recursive: true });
    ({ app, browser } = await startWithChromium(() =>
      startTestApp({
        env: {
          SITE_ENABLED: 'true',
          SITE_PATH: SITE,
          SITE_NAME: 'Beat <i>Network</i>',
          SITE_ACCENT_COLOR: '#FF8800',
          SITE_BACKGROUND_COLOR: '#101820',
          PUBLIC_API_ANONYMOUS_RATE_LIMIT: String(ANONYMOUS_LIMIT),
        },
      }),
    ));
    server = await onlineServer(app);
    const charts = await app.admin.put('/admin/charts', [
      { levelId: 811, name: 'Alpha Stream', difficultyConstant: 10, version: '1.0', active: true },
      { levelId: 812, name: 'Beta Pulse', difficultyConstant: 12.5, version: '1.0', active: true },
    ]);
    expect(charts.status).toBe(200);
    const players: Array<[string, string, string?, string?]> = [
      ['ann', 'ann_site', 'Ann', ANN_UUID],
      ['anna', 'anna_site'],
      ['hostile', 'hostile_site', HOSTILE],
      ['long', 'long_site', LONG],
      ['cheater', 'cheater_site'],
      ['flaggy', 'flaggy_site'],
    ];
    for (const [id, username, displayName, uuid] of players)
      p[id] = await loginPlayer(
        app,
        server,
        await createPlayer(app, { username, ...(displayName ? { displayName } : {}), ...(uuid ? { uuid } : {}) }),
      );
    await play(app, server, p.cheater, 811, { acc: 100 });
    await play(app, server, p.cheater, 812, { acc: 100 });
    await play(app, server, p.ann, 811, { acc: 99.5 });
    await play(app, server, p.ann, 812, { acc: 97.25, fullCombo: true });
    await play(app, server, p.anna, 811, { acc: 96 });
    await play(app, server, p.hostile, 811, { acc: 98 });
    await play(app, server, p.hostile, 812, { acc: 95 });
    await play(app, server, p.long, 812, { acc: 99 });
    // Flagged (a combo above the judged notes): never counted, so flaggy is on no board.
    await play(app, server, p.flaggy, 812, { acc: 100, maxCombo: JUDGED + 1 });
    expect((await app.admin.post(`/admin/players/${p.cheater.uid}/ban`, { reason: 'cheating' })).status).toBe(200);
    context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    page = await context.newPage();
    watch(page);
  }, BROWSER_SUITE_START_MS);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('is served with a strict CSP, no-cache for the page, theme and settings, and a year for hashed assets', async () => {
    const index = await fetch(`${app.baseUrl}${SITE}/`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-security-policy')).toBe(SITE_CSP);
    expect(SITE_CSP).toContain("script-src 'self';");
    expect(SITE_CSP).not.toContain('unsafe-inline');
    expect(index.headers.get('x-content-type-options')).toBe('nosniff');
    expect(index.headers.get('x-frame-options')).toBe('DENY');
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const html = await index.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/ style=/);
    const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)?.[1];
    const style = /href="\.\/(assets\/[^"]+\.css)"/.exec(html)?.[1];
    for (const asset of [script, style]) {
      expect(asset).toBeDefined();
      const answer = await fetch(`${app.baseUrl}${SITE}/${asset}`);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('cache-control')).toBe(SITE_ASSET_CACHE);
      expect(answer.headers.get('content-security-policy')).toBe(SITE_CSP);
    }
    const theme = await fetch(`${app.baseUrl}${SITE}/theme.css`);
    expect(theme.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(theme.headers.get('cache-control')).toBe('no-cache');
    expect(await theme.text()).toBe(
      'html:root {\n  --accent: #ff8800;\n  --bg: #101820;\n  --fg: #f2f2f7;\n  --on-accent: #111111;\n  color-scheme: dark;\n}\n',
    );
    const settings = await fetch(`${app.baseUrl}${SITE}/site.json`);
    expect(settings.headers.get('cache-control')).toBe('no-cache');
    expect(await settings.json()).toEqual({ name: 'Beat <i>Network</i>' });
    expect((await fetch(`${app.baseUrl}${SITE}`, { redirect: 'manual' })).headers.get('location')).toBe(`${SITE}/`);
    const missing = await fetch(`${app.baseUrl}${SITE}/assets/none.js`);
    expect({ status: missing.status, body: await missing.json() }).toEqual({
      status: 404,
      body: { error: 'NOT_FOUND', message: 'Not found' },
    });
    for (const [method, path] of [
      ['GET', `${SITE}/theme.css/x`],
      ['GET', `${SITE}/site.json/x`],
      ['POST', `${SITE}/theme.css`],
      ['DELETE', `${SITE}/site.json`],
    ])
      expect({ method, path, status: (await fetch(`${app.baseUrl}${path}`, { method })).status }).toEqual({
        method,
        path,
        status: 404,
      });
    // Another path than SITE_PATH is not the site.
    expect((await fetch(`${app.baseUrl}/site/`)).status).toBe(404);
  });

  it('shows the ATP board as the public API answers it, the network name as text, without the banned or flagged player', async () => {
    await open('');
    await page.locator('table[data-board="atp"]').waitFor();
    const board = (await api('boards/atp', { limit: 50 })) as {
      entries: Array<{ rank: number; uid: number; username: string; displayName: string; atp: number }>;
    };
    expect(board.entries.map((entry) => entry.uid)).toEqual(
      expect.arrayContaining([p.ann.uid, p.anna.uid, p.hostile.uid, p.long.uid]),
    );
    expect(board.entries).toHaveLength(4);
    expect(await rowsOf(page, 'atp')).toEqual(
      board.entries.map((entry) => [String(entry.rank), nameCell(entry), fmt.atp(entry.atp)]),
    );
    const shown = JSON.stringify(await rowsOf(page, 'atp'));
    expect(shown).not.toContain('cheater_site');
    expect(shown).not.toContain('flaggy_site');
    await expect(page.locator('.brand').textContent()).resolves.toBe('Beat <i>Network</i>');
    await expect(page.title()).resolves.toBe('Beat <i>Network</i>');
    expect(await page.locator('.brand i').count()).toBe(0);
    // The theme's accent is the one configured.
    expect(await page.evaluate('getComputedStyle(document.querySelector(".top")).borderBottomColor')).toBe(
      'rgb(255, 136, 0)',
    );
    await shot('site-board-desktop');
  });

  it('renders hostile, long and non-Latin display names as text', async () => {
    await open('');
    const hostileRow = page.locator(`table[data-board="atp"] tr[data-uid="${p.hostile.uid}"]`);
    await expect(hostileRow.locator('.name').textContent()).resolves.toBe(HOSTILE);
    await expect(
      page.locator(`table[data-board="atp"] tr[data-uid="${p.long.uid}"] .name`).textContent(),
    ).resolves.toBe(LONG);
    expect(await page.locator('main img, main b').count()).toBe(0);
    expect(await page.evaluate('window.pwned === undefined')).toBe(true);
  });

  it("opens a chart's board from the chart list, linkable by its levelId, as the public API answers it", async () => {
    await open('');
    await page.getByRole('link', { name: 'Charts', exact: true }).click();
    await page.getByRole('link', { name: /Beta Pulse/ }).click();
    await page.getByRole('heading', { name: 'Beta Pulse' }).waitFor();
    expect(new URL(page.url()).hash).toBe('#/chart/812');
    await page.locator('table[data-board="chart"]').waitFor();
    const board = (await api('boards/charts/812', { limit: 50 })) as {
      entries: Array<{ rank: number; uid: number; username: string; displayName: string; acc: number; rating: number }>;
    };
    expect(board.entries.map((entry) => entry.uid)).toEqual([p.long.uid, p.ann.uid, p.hostile.uid]);
    const expected = board.entries.map((entry) => [
      String(entry.rank),
      nameCell(entry),
      fmt.acc(entry.acc),
      fmt.rating(entry.rating),
    ]);
    expect(await rowsOf(page, 'chart')).toEqual(expected);
    await shot('site-chart-desktop');
    // The same page from its link, in a fresh tab.
    const fresh = await context.newPage();
    watch(fresh);
    await open('#/chart/812', fresh);
    await fresh.locator('table[data-board="chart"]').waitFor();
    expect(await rowsOf(fresh, 'chart')).toEqual(expected);
    await fresh.close();
  });

  it("searches a player, opens the player page, and shows the API's bests, ranks and recent plays; links by name and uuid", async () => {
    await open('');
    await page.getByLabel('Player name').fill('ann');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('heading', { name: 'Players starting with “ann”' }).waitFor();
    expect(new URL(page.url()).hash).toBe('#/search/ann');
    const found = page.locator('ul.players li');
    // The heading renders before the search answers; wait for the list itself.
    await page.locator('ul.players').waitFor();
    await expect(found.allTextContents()).resolves.toEqual(['Annann_site', 'anna_site']);
    await found.first().getByRole('link').click();
    await page.locator('table[data-board="bests"]').waitFor();
    expect(new URL(page.url()).hash).toBe(`#/player/id/${p.ann.uid}`);

    const profile = (await api(`players/${p.ann.uid}`, { bests: 30, recent: 10 })) as {
      atp: number;
      siteRank: number;
      bestCount: number;
      bests: Array<{ levelId: number; chartName: string; acc: number; rating: number; trackRank: number | null }>;
      recentPlays: Array<{
        levelId: number;
        chartName: string;
        acc: number;
        rating: number;
        fullCombo: boolean;
        allPerfect: boolean;
        playedAt: string;
      }>;
    };
    expect(profile.bestCount).toBe(2);
    const expectProfile = async (on: Page) => {
      await expect(on.locator('h1.name').textContent()).resolves.toBe('Ann');
      await expect(on.locator('[data-stat="atp"]').textContent()).resolves.toBe(fmt.atp(profile.atp));
      await expect(on.locator('[data-stat="rank"]').textContent()).resolves.toBe(fmt.rank(profile.siteRank));
      await expect(on.locator('[data-stat="bestCount"]').textContent()).resolves.toBe(String(profile.bestCount));
      expect(await rowsOf(on, 'bests')).toEqual(
        profile.bests.map((best) => [
          best.chartName,
          fmt.acc(best.acc),
          fmt.rating(best.rating),
          fmt.rank(best.trackRank),
        ]),
      );
      expect(await rowsOf(on, 'recent')).toEqual(
        profile.recentPlays.map((recent) => [
          `${recent.chartName}${recent.allPerfect ? 'AP' : recent.fullCombo ? 'FC' : ''}`,
          fmt.acc(recent.acc),
          fmt.rating(recent.rating),
          recent.playedAt.slice(0, 10),
        ]),
      );
    };
    await expectProfile(page);
    expect(profile.recentPlays.map((recent) => recent.levelId)).toEqual([812, 811]);
    // By rating: Beta Pulse (12.5, behind long_site) before Alpha Stream (10, first: the banned player takes no rank).
    expect(profile.bests.map((best) => [best.levelId, best.trackRank])).toEqual([
      [812, 2],
      [811, 1],
    ]);
    await shot('site-player-desktop');

    // Its links: by name (ignoring case) and by uuid, each from a fresh tab.
    for (const hash of ['#/player/ANN_SITE', `#/player/uuid/${ANN_UUID}`]) {
      const fresh = await context.newPage();
      watch(fresh);
      await open(hash, fresh);
      await fresh.locator('table[data-board="recent"]').waitFor();
      await expectProfile(fresh);
      await fresh.close();
    }
    await expect(page.locator('a.permalink').getAttribute('href')).resolves.toBe(`#/player/uuid/${ANN_UUID}`);
  });

  it('says so for the banned player, an unknown player and a name that is no username, instead of a blank page', async () => {
    await open('#/player/cheater_site');
    await expect(page.getByRole('alert').locator('p').textContent()).resolves.toBe('No player named cheater_site.');
    await open(`#/player/id/${p.cheater.uid}`);
    await expect(page.getByRole('alert').locator('p').textContent()).resolves.toBe(
      `No player with uid ${p.cheater.uid}`,
    );
    await open('#/player/%3Cscript%3E');
    await expect(page.getByRole('alert').locator('p').textContent()).resolves.toBe('No such player.');
    await open('#/search/a%20b');
    await expect(page.locator('main p').textContent()).resolves.toBe('A player name is 1 to 32 letters, digits or _.');
    await page.getByLabel('Player name').fill('<b>');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect(page.locator('.search .hint').textContent()).resolves.toBe('Letters, digits and _ only');
  });

  it('fits a phone: no horizontal scroll on the board, a chart board and a player page with a long name', async () => {
    const phone = await browser.newContext({ viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true });
    const small = await phone.newPage();
    watch(small);
    for (const [hash, ready, name] of [
      ['', 'table[data-board="atp"]', 'site-board-phone'],
      ['#/chart/812', 'table[data-board="chart"]', 'site-chart-phone'],
      [`#/player/id/${p.long.uid}`, 'table[data-board="recent"]', 'site-player-phone'],
      ['#/charts', 'ul.charts', 'site-charts-phone'],
    ]) {
      await open(hash, small);
      await small.locator(ready).waitFor();
      const widths = await small.evaluate<{ scroll: number; client: number }>(
        '({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })',
      );
      expect({ hash, ...widths }).toEqual({ hash, scroll: widths.client, client: 360 });
      await shot(name, small);
    }
    await phone.close();
  });

  it.each([
    [429, '30', 'Too many requests from your address. Please try again in 30 seconds.'],
    [503, '5', 'The leaderboards are unavailable right now. Please try again in 5 seconds.'],
  ])('an API answering %i shows a message and a retry, then the board once it answers', async (status, retry, text) => {
    await page.route('**/public/v1/boards/atp?*', (route) =>
      route.fulfill({
        status,
        headers: { 'Retry-After': retry, 'Content-Type': 'application/json' },
        body: JSON.stringify({ error: status === 429 ? 'RATE_LIMITED' : 'UNAVAILABLE', message: 'x' }),
      }),
    );
    await open('');
    await expect(page.getByRole('alert').locator('p').textContent()).resolves.toBe(text);
    await expect(page.locator('.brand').textContent()).resolves.toBe('Beat <i>Network</i>');
    await shot(`site-${status}`);
    await page.unroute('**/public/v1/boards/atp?*');
    await page.getByRole('button', { name: 'Try again' }).click();
    await page.locator('table[data-board="atp"]').waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);
  });

  it('a player page with the profile answering 503 shows a message', async () => {
    await page.route('**/public/v1/players/*', (route) =>
      route.fulfill({ status: 503, headers: { 'Content-Type': 'application/json' }, body: '{}' }),
    );
    await open(`#/player/id/${p.ann.uid}`);
    await expect(page.getByRole('alert').locator('p').textContent()).resolves.toBe(
      'The leaderboards are unavailable right now. Please try again in a moment.',
    );
    await page.unroute('**/public/v1/players/*');
  });

  it('had no CSP violation or script error on any page', () => {
    expect(problems).toEqual([]);
  });

  // Last: it spends this address's budget of the minute.
  it("with the address's real anonymous limit spent, the page shows the 429 message with the API's Retry-After", async () => {
    let last = 200;
    for (let call = 0; call <= ANONYMOUS_LIMIT && last !== 429; call++)
      last = (await app.http.get('/public/v1/charts', { token: null })).status;
    expect(last).toBe(429);
    const limited = await app.http.get('/public/v1/boards/atp', { token: null });
    expect(limited.status).toBe(429);
    const wait = Number(limited.headers.get('retry-after'));
    expect(wait).toBeGreaterThan(0);
    // A fresh context: the browser's cache may still hold the board's answer (public, max-age).
    const fresh = await browser.newContext();
    const limitedPage = await fresh.newPage();
    watch(limitedPage);
    await open('', limitedPage);
    await expect(limitedPage.getByRole('alert').locator('p').textContent()).resolves.toMatch(
      /^Too many requests from your address\. Please try again in \d+ seconds?\.$/,
    );
    await fresh.close();
  });
});

describe('Leaderboard site turned off', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { PUBLIC_API_ANONYMOUS_RATE_LIMIT: '60' } });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('is not served: its path answers the normal 404, the public API still answers', async () => {
    expect(app.config.site).toBeNull();
    for (const path of ['/site/', '/site', '/site/theme.css', '/site/site.json', '/site/index.html']) {
      const response = await fetch(`${app.baseUrl}${path}`, { redirect: 'manual' });
      expect({ path, status: response.status, body: await response.json() }).toEqual({
        path,
        status: 404,
        body: { error: 'NOT_FOUND', message: 'Not found' },
      });
    }
    expect((await app.http.get('/public/v1/charts', { token: null })).status).toBe(200);
  });
});
