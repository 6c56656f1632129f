/**
 * The plugin simulator (bench/simulate) against the real service: its smoke mode must pass on a
 * healthy service (on the embedded database and on PostgreSQL, as this suite runs both ways),
 * must fail — naming the call, with a non-zero exit — against a broken one, and its load mode
 * must run a small network through a restart without one unexpected answer.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateResourceTree } from '../../bench/harness/generate';
import { IdentityProvider, startIdentityProvider } from '../../bench/simulate/identity-provider';
import { Network } from '../../bench/simulate/network';
import { runSmoke } from '../../bench/simulate/smoke';
import { TS_REGISTER } from '../support/source-script';
import { testDatabaseServerUrl } from '../setup/test-env';
import { ADMIN_TOKEN, startTestApp, TestApp } from '../support/test-app';

const ROOT = join(__dirname, '..', '..');

/** Every call of interface.md (and the admin calls that provision them) the smoke must have made. */
const SMOKE_CALLS = [
  'POST /admin/servers',
  'POST /admin/players',
  'POST /admin/players/{uid}/net-token',
  'PUT /admin/charts',
  'PUT /admin/collections',
  'PUT /admin/packs',
  'GET /server/ping',
  'POST /server/login',
  'GET /server/refresh',
  'GET /resources/manifest?lang=true',
  'GET /server/collections',
  'GET /resources/packmanifest',
  'GET /server/charts',
  'POST /resources/down',
  'GET resource file (download url)',
  'ws connect',
  'POST /player/login ONLINE',
  'POST /player/login while logged in',
  'POST /player/collections',
  'POST /player/options',
  'POST /player/economy',
  'GET /server/baltop?limit=10',
  'GET /server/baltop?limit=0',
  'POST /player/upload',
  'ws resume_session',
  'ws chat',
  'POST /player/logout',
  'POST /player/login OFFLINE_REFRESH',
  'POST /player/logout (again)',
  'POST /player/login TOKEN',
  'POST /server/logout',
  'ws closed after server logout',
  'GET /server/refresh after logout',
];

/** Runs the simulator's command line; resolves with its exit code and output. */
function runCli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-r', TS_REGISTER, join(ROOT, 'bench', 'simulate', 'main.ts'), ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('plugin simulator', () => {
  let idp: IdentityProvider;
  let app: TestApp;
  let resourceDir: string;

  beforeAll(async () => {
    resourceDir = mkdtempSync(join(tmpdir(), 'rhythmc-sim-test-'));
    // The smoke describes packs/pack-0.zip and downloads a data file, so the index needs both.
    generateResourceTree(resourceDir, 30, 4_096);
    idp = await startIdentityProvider();
    app = await startTestApp({ env: { IDENTITY_PROVIDER_URL: idp.url, RESOURCE_DIR: resourceDir } });
  });

  afterAll(async () => {
    await app?.close();
    await idp?.stop();
    rmSync(resourceDir, { recursive: true, force: true });
  });

  describe('--smoke', () => {
    it('makes every call once and gets the expected answer to each', async () => {
      const report = await runSmoke({
        url: app.baseUrl,
        adminToken: ADMIN_TOKEN,
        identityProvider: true,
        selfStarted: true,
      });

      expect(report.steps.filter((step) => step.status !== 'ok')).toEqual([]);
      // The four catalog loads run in parallel, so the order of their steps varies.
      expect(report.steps.map((step) => step.call).sort()).toEqual([...SMOKE_CALLS].sort());
      expect(report.ok).toBe(true);
      expect(report.metrics.unexpected).toBe(0);
      // The smoke really went through the service: one stored play, the balance, and no session left open.
      const plays = await app.sql<{ level_id: number; acc: number }>('SELECT level_id, acc FROM play_record');
      expect(plays).toEqual([{ level_id: 990_001, acc: 99.5 }]);
      const balances = await app.sql<{ watt_hour: string }>('SELECT watt_hour FROM player_balance');
      expect(balances).toEqual([{ watt_hour: '4321' }]);
      const open = await app.sql<{ n: number }>(
        'SELECT count(*)::int AS n FROM player_session WHERE logged_out_at IS NULL',
      );
      expect(open).toEqual([{ n: 0 }]);
      expect(idp.lookups()).toBe(1);
    });

    it('fails at the first call answered otherwise, naming it (wrong admin token)', async () => {
      const lines: string[] = [];
      const report = await runSmoke(
        { url: app.baseUrl, adminToken: 'not-the-admin-token-0000', identityProvider: true, selfStarted: true },
        (line) => lines.push(line),
      );

      expect(report.ok).toBe(false);
      expect(report.steps).toEqual([
        expect.objectContaining({ call: 'POST /admin/servers', status: 'failed', expected: '201', got: '401' }),
      ]);
      expect(lines).toEqual([expect.stringMatching(/^FAIL {2}POST \/admin\/servers: expected 201, got 401/)]);
    });

    describe('against a deployment with no chart (a fresh database, given with --url)', () => {
      let fresh: TestApp;

      beforeAll(async () => {
        fresh = await startTestApp({ env: { RESOURCE_DIR: resourceDir } });
      });

      afterAll(async () => {
        await fresh?.close();
      });

      it('passes, skips the ranked checks and says why; the play is stored uncounted and no chart is added', async () => {
        expect((await fresh.sql('SELECT level_id FROM chart')).length).toBe(0);
        const result = await runCli(['--smoke', '--url', fresh.baseUrl, '--admin-token', ADMIN_TOKEN]);

        expect(result.stderr).not.toMatch(/simulator failed/);
        expect(result.code).toBe(0);
        expect(result.stdout).toMatch(
          /^skip {2}ranked checks of POST \/player\/upload: the deployment lists no chart \(GET \/server\/charts is empty\)/m,
        );
        expect(result.stdout).toMatch(/^ok {4}POST \/player\/upload +200/m);
        expect(result.stdout).not.toMatch(/^FAIL/m);
        expect(result.stdout).toMatch(
          /^smoke ok: \d+ calls answered as expected; \d+ skipped \(not checked, see "skip" above\): .*ranked checks of POST \/player\/upload$/m,
        );
        // The play is stored on a placeholder (not counted: no best, no rating); the catalog lists no chart still.
        expect(await fresh.sql('SELECT level_id, acc FROM play_record')).toEqual([{ level_id: 990_001, acc: 99.5 }]);
        expect(await fresh.sql('SELECT level_id, placeholder FROM chart')).toEqual([
          { level_id: 990_001, placeholder: true },
        ]);
        expect(await fresh.sql('SELECT uid FROM player_chart_best')).toEqual([]);
        expect(await fresh.sql('SELECT uid FROM player_rating')).toEqual([]);
      });

      it('checks the ranks again once the deployment lists a chart', async () => {
        const defined = await fresh.admin.put('/admin/charts', [
          { levelId: 4_242, name: 'Operator chart', difficultyConstant: 11, version: '1.0', active: true },
        ]);
        expect(defined.status).toBe(200);
        const report = await runSmoke({
          url: fresh.baseUrl,
          adminToken: ADMIN_TOKEN,
          identityProvider: false,
          selfStarted: false,
        });

        expect(report.ok).toBe(true);
        expect(report.steps.filter((step) => step.status === 'skipped').map((step) => step.call)).toEqual([
          'PUT /admin/charts, /admin/collections, /admin/packs',
          'POST /player/login ONLINE',
        ]);
        const best = await fresh.sql<{ level_id: number }>('SELECT level_id FROM player_chart_best');
        expect(best).toEqual([{ level_id: 4_242 }]);
      });
    });

    describe('against a broken deployment (every answer 500)', () => {
      let broken: Server;
      let brokenUrl: string;

      beforeAll(async () => {
        broken = createServer((_req, res) =>
          res
            .writeHead(500, { 'Content-Type': 'application/json' })
            .end('{"error":"INTERNAL_ERROR","message":"Internal error"}'),
        );
        await new Promise<void>((resolve) => broken.listen(0, '127.0.0.1', resolve));
        brokenUrl = `http://127.0.0.1:${(broken.address() as AddressInfo).port}`;
      });

      afterAll(async () => {
        broken.closeAllConnections();
        await new Promise<void>((resolve) => broken.close(() => resolve()));
      });

      it('exits non-zero with a line naming the call', async () => {
        const result = await runCli(['--smoke', '--url', brokenUrl, '--admin-token', 'any-admin-token-0123456789']);

        expect(result.code).toBe(1);
        expect(result.stdout).toMatch(/^FAIL {2}POST \/admin\/servers: expected 201, got 500/m);
        expect(result.stdout).toMatch(/smoke FAILED at POST \/admin\/servers/);
      });

      it('reports the failure in --json too', async () => {
        const result = await runCli([
          '--smoke',
          '--json',
          '--url',
          brokenUrl,
          '--admin-token',
          'any-admin-token-0123456789',
        ]);

        expect(result.code).toBe(1);
        const report = JSON.parse(result.stdout) as { ok: boolean; steps: unknown[]; metrics: { unexpected: number } };
        expect(report.ok).toBe(false);
        expect(report.steps).toEqual([
          expect.objectContaining({ call: 'POST /admin/servers', status: 'failed', got: '500' }),
        ]);
        expect(report.metrics.unexpected).toBe(1);
      });
    });
  });

  describe('load mode', () => {
    // The simulator starts this service itself, on the embedded database whatever the pass: the
    // same test in both passes, so it runs in the pass without DATABASE_URL only.
    (testDatabaseServerUrl() ? it.skip : it)(
      'hands out pack URLs that keep working over many download-link lifetimes (--pack-links --link-ttl)',
      async () => {
        // The simulator starts the service from src on a fresh embedded database, download links living 2 s.
        const result = await runCli(
          [
            '--source',
            'src',
            '--servers',
            '2',
            '--players',
            '3',
            '--minutes',
            '0.4',
            '--churn',
            '0',
            '--chat-per-minute',
            '0',
            '--pack-links',
            '--link-ttl',
            '2',
            '--json',
          ],
          { DATABASE_URL: '', REDIS_URL: '' },
        );
        expect(result.stderr).not.toMatch(/simulator failed/);
        expect(result.code).toBe(0);
        const report = JSON.parse(result.stdout) as {
          packLinks: { checks: number; oldestOkSeconds: number };
          metrics: { unexpected: number; calls: Array<{ call: string; byStatus: Record<string, number> }> };
        };
        expect(report.metrics.unexpected).toBe(0);
        // Every player joined at the start and again after the restart half-way (12 s = 6 link lifetimes later), fetching the boot-time URL each time.
        expect(report.packLinks.checks).toBeGreaterThanOrEqual(6 + 3);
        expect(report.packLinks.oldestOkSeconds).toBeGreaterThan(4 * 2);
        expect(
          report.metrics.calls.find((call) => call.call === 'HEAD pack url (from server login)')?.byStatus,
        ).toEqual({
          '200': report.packLinks.checks,
        });
      },
      120_000,
    );

    it('moves players between servers of one network like a proxy, without an unexpected answer', async () => {
      const network = new Network({
        urls: [app.baseUrl],
        adminToken: ADMIN_TOKEN,
        identityProvider: true,
        servers: 4,
        players: 3,
        resumeInterval: 60,
        onlineShare: 0.5,
        loginConcurrency: 2,
        existingPlayers: 0,
        churn: 0,
        chatPerMinute: 0,
        switchPerMinute: 1,
        seed: 11,
        uploadRate: 2,
        followAdvertised: false,
      });
      try {
        await network.provision();
        await network.start();
        for (let i = 0; i < 600 && network.switches.done < 4; i++)
          await new Promise((resolve) => setTimeout(resolve, 100));
        expect(network.switches.done).toBeGreaterThanOrEqual(4);
      } finally {
        await network.stop({ logoutPlayers: true });
      }
      const report = network.metrics.report();
      expect(report.firstUnexpected).toEqual([]);
      expect(report.unexpected).toBe(0);
      const counts = Object.fromEntries(report.calls.map((call) => [call.call, call.count]));
      // Every switch: the new server's login took the session over, the old server's logout found it ended.
      expect(counts['POST /player/logout (after a handover)']).toBeGreaterThanOrEqual(network.switches.done);
      expect(report.events['kick_player handover']).toBeGreaterThanOrEqual(1);
      const handedOver = await app.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM player_session WHERE logout_reason = 'handover'`,
      );
      expect(handedOver[0].n).toBeGreaterThanOrEqual(network.switches.done);
      // Leave the spec's 409 in force for the other tests of this app.
      expect((await app.admin.put('/admin/session-handover', { mode: 'off' })).status).toBe(200);
    });

    it('runs a small network through a restart of every server without an unexpected answer', async () => {
      const network = new Network({
        urls: [app.baseUrl],
        adminToken: ADMIN_TOKEN,
        identityProvider: true,
        servers: 2,
        players: 3,
        resumeInterval: 1,
        onlineShare: 0.5,
        loginConcurrency: 2,
        existingPlayers: 0,
        churn: 0,
        chatPerMinute: 0,
        seed: 7,
        uploadRate: 0,
        followAdvertised: false,
      });
      await network.provision();
      await network.start();
      expect(network.onlinePlayers).toBe(6);

      network.setUploadRate(20);
      for (let i = 0; i < 300 && network.metrics.count('POST /player/upload') < 5; i++)
        await new Promise((resolve) => setTimeout(resolve, 100));
      network.setUploadRate(0);
      const burst = await network.restart();
      expect(burst).toEqual(expect.objectContaining({ servers: 2, players: 6, failedLogins: 0 }));
      expect(network.onlinePlayers).toBe(6);
      await network.stop({ logoutPlayers: true });

      const report = network.metrics.report();
      expect(report.firstUnexpected).toEqual([]);
      expect(report.unexpected).toBe(0);
      const counts = Object.fromEntries(report.calls.map((call) => [call.call, call.count]));
      // First logins, then after the restart: ONLINE again on the online-mode server, the cached resume token on the other.
      expect(counts).toEqual(
        expect.objectContaining({
          'POST /server/login': 4,
          'POST /player/login ONLINE': 6,
          'POST /player/login TOKEN': 3,
          'POST /player/login OFFLINE_REFRESH': 3,
          'POST /player/logout': 6,
          'POST /server/logout': 2,
        }),
      );
      expect(counts['POST /player/upload']).toBeGreaterThanOrEqual(5);
      expect(report.events).toEqual(expect.objectContaining({ 'ws close 4002 (replaced on purpose)': 4 }));
      const open = await app.sql<{ n: number }>(
        'SELECT count(*)::int AS n FROM player_session WHERE logged_out_at IS NULL',
      );
      expect(open).toEqual([{ n: 0 }]);
    });
  });
});
