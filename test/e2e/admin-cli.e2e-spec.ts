import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPlayer, onlinePlayer } from '../factories/player.factory';
import { createServer, onlineServer, uniqueName } from '../factories/server.factory';
import { gameplayPayload } from '../factories/upload.factory';
import { TS_REGISTER } from '../support/source-script';
import { ADMIN_TOKEN, startTestApp, TestApp } from '../support/test-app';
import { badField, badLines } from '../support/bad-request';

const ROOT = join(__dirname, '..', '..');
const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the admin CLI as a child process from its TypeScript source (no build needed), with only
 * the environment given here.
 */
function cli(args: string[], env: Record<string, string> = {}, stdin = ''): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      ['-r', TS_REGISTER, 'src/cli/admin.ts', ...args],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
    child.stdin?.end(stdin);
  });
}

describe('Admin CLI (npm run admin)', () => {
  let app: TestApp;
  let files: string;
  /** The CLI against the test app, with the admin token. */
  const admin = (...args: string[]) => cli([...args, '--url', app.baseUrl], { ADMIN_TOKEN });
  const json = (result: CliResult): any => JSON.parse(result.stdout);

  beforeAll(async () => {
    app = await startTestApp();
    files = mkdtempSync(join(tmpdir(), 'rhythmc-cli-'));
  });
  afterAll(async () => {
    await app.close();
    rmSync(files, { recursive: true, force: true });
  });

  describe('servers', () => {
    it('creates a server and prints the answer as indented JSON', async () => {
      const name = uniqueName('cli');
      const result = await admin('servers', 'create', '--name', name, '--country', 'DE', '--ip', '203.0.113.7');
      expect(result).toMatchObject({ code: 0, stderr: '' });
      const body = json(result);
      expect(body).toEqual({
        serverID: expect.any(Number),
        serverName: name,
        bootstrapToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      });
      expect(result.stdout).toBe(`${JSON.stringify(body, null, 2)}\n`);
      expect(await app.sql('SELECT name, country, ip FROM game_server WHERE id = $1', [body.serverID])).toEqual([
        { name, country: 'DE', ip: '203.0.113.7' },
      ]);
      expect(await app.sql('SELECT token_hash FROM server_credential WHERE server_id = $1', [body.serverID])).toEqual([
        { token_hash: sha256(body.bootstrapToken) },
      ]);
    });

    it('rotates a bootstrap token, on one line with --json', async () => {
      const server = await createServer(app);
      const result = await admin('servers', 'rotate-bootstrap', String(server.serverID), '--json');
      expect(result.code).toBe(0);
      const body = json(result);
      expect(result.stdout).toBe(`${JSON.stringify(body)}\n`);
      expect(await app.sql('SELECT token_hash FROM server_credential WHERE server_id = $1', [server.serverID])).toEqual(
        [{ token_hash: sha256(body.bootstrapToken) }],
      );
    });
  });

  describe('players', () => {
    it('creates a player and issues its Net Token', async () => {
      const created = await admin(
        'players',
        'create',
        '--username',
        'cli_player',
        '--uuid',
        '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0',
        '--display-name',
        'CLI Player',
      );
      expect(created.code).toBe(0);
      const player = json(created);
      expect(player).toEqual({
        uid: expect.any(Number),
        username: 'cli_player',
        displayName: 'CLI Player',
        uuid: '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0',
      });

      const token = await admin('players', 'net-token', String(player.uid));
      expect(token.code).toBe(0);
      expect(await app.sql('SELECT token_hash FROM player_credential WHERE uid = $1', [player.uid])).toEqual([
        { token_hash: sha256(json(token).netToken) },
      ]);
    });

    it('bans, sets the banstate and unbans', async () => {
      const player = await createPlayer(app);
      const ban = await admin(
        'players',
        'ban',
        String(player.uid),
        '--reason',
        'cheating',
        '--until',
        '2099-01-02T03:04:05',
        '--message',
        'Bye',
      );
      expect(ban.code).toBe(0);
      expect(json(ban)).toEqual({ uid: player.uid, reason: 'cheating', message: 'Bye', until: '2099-01-02T03:04:05' });
      expect(await app.sql('SELECT reason, message, lifted_at FROM player_ban WHERE uid = $1', [player.uid])).toEqual([
        { reason: 'cheating', message: 'Bye', lifted_at: null },
      ]);

      const banstate = await admin('players', 'banstate', String(player.uid), '2');
      expect(banstate.code).toBe(0);
      expect(json(banstate)).toEqual({ uid: player.uid, banstate: 2 });
      expect(await app.sql('SELECT banstate FROM player WHERE uid = $1', [player.uid])).toEqual([{ banstate: 2 }]);

      // 204: nothing to print.
      expect(await admin('players', 'unban', String(player.uid))).toEqual({ code: 0, stdout: '', stderr: '' });
      expect(await app.sql('SELECT 1 FROM player_ban WHERE uid = $1 AND lifted_at IS NULL', [player.uid])).toHaveLength(
        0,
      );
    });

    it("exports a player's data, then erases the player with --confirm", async () => {
      const player = await createPlayer(app);
      const exported = await admin('players', 'export', String(player.uid), '--json');
      expect(exported.code).toBe(0);
      expect(json(exported)).toMatchObject({
        format: 'rhythmc-player-export/1',
        uid: player.uid,
        tables: { player: [expect.objectContaining({ username: player.username })] },
      });
      // --confirm is required (exit 2, nothing called); a wrong name is the service's 400.
      expect((await admin('players', 'erase', String(player.uid))).code).toBe(2);
      const wrong = await admin('players', 'erase', String(player.uid), '--confirm', 'someone');
      expect(wrong.code).toBe(1);
      expect(JSON.parse(wrong.stderr)).toEqual(badLines("confirm must be the player's current username, exactly"));
      const erased = await admin('players', 'erase', String(player.uid), '--confirm', player.username);
      expect(erased.code).toBe(0);
      expect(json(erased)).toMatchObject({
        uid: player.uid,
        pseudonym: expect.stringMatching(/^erased-[0-9a-f]{12}$/),
      });
      expect(await app.sql('SELECT 1 FROM player WHERE uid = $1', [player.uid])).toEqual([]);
    });

    it("shows a player's economy", async () => {
      const player = await createPlayer(app);
      const result = await admin('economy', 'show', String(player.uid), '--limit', '5', '--json');
      expect(result.code).toBe(0);
      expect(json(result)).toEqual({ uid: player.uid, wattHour: null, updatedAt: null, history: [], nextBefore: null });
      const shown = await admin('economy', 'show', String(player.uid));
      expect(shown).toEqual({
        code: 0,
        stdout: `uid       ${player.uid}\nwattHour  -\nupdated   -\n\n(none)\n`,
        stderr: '',
      });
    });
  });

  describe('settings', () => {
    it('turns maintenance on and off', async () => {
      const on = await admin('maintenance', 'on', '--message', 'Back at 18:00');
      expect(on.code).toBe(0);
      expect(json(on)).toEqual({ enabled: true, message: 'Back at 18:00' });
      expect(await app.sql(`SELECT value FROM service_setting WHERE key = 'maintenance'`)).toEqual([
        { value: { enabled: true, message: 'Back at 18:00' } },
      ]);

      const off = await admin('maintenance', 'off');
      expect(json(off)).toEqual({ enabled: false, message: '' });
      expect(await app.sql(`SELECT value FROM service_setting WHERE key = 'maintenance'`)).toEqual([
        { value: { enabled: false, message: '' } },
      ]);
    });

    it('declares the networks of server switching with repeated --group', async () => {
      const [a, b, c] = [await createServer(app), await createServer(app), await createServer(app)];
      const result = await admin(
        'session-handover',
        'set',
        'groups',
        '--group',
        `eu=${a.serverID},${b.serverID}`,
        '--group',
        `solo=${c.serverID},${a.serverID}`,
      );
      expect(result).toEqual({
        code: 1,
        stdout: '',
        stderr: expect.stringContaining(`groups: server ${a.serverID} is in eu and in solo`),
      });
      const ok = await admin(
        'session-handover',
        'set',
        'groups',
        '--group',
        `eu=${a.serverID},${b.serverID}`,
        '--login-mode',
        'TOKEN',
      );
      expect(ok.code).toBe(0);
      const setting = {
        mode: 'groups',
        groups: [{ name: 'eu', serverIDs: [a.serverID, b.serverID] }],
        modes: ['TOKEN'],
      };
      expect(json(ok)).toEqual(setting);
      expect(await app.sql(`SELECT value FROM service_setting WHERE key = 'session_handover'`)).toEqual([
        { value: setting },
      ]);
      expect((await admin('session-handover', 'set', 'sometimes')).code).toBe(2);
      expect(json(await admin('session-handover', 'set', 'off'))).toEqual({
        mode: 'off',
        groups: [],
        modes: ['ONLINE', 'TOKEN', 'OFFLINE_REFRESH'],
      });
    });

    it('sets the plugin policy with repeated --sha', async () => {
      const result = await admin(
        'plugin-policy',
        'set',
        '--min',
        '3',
        '--latest',
        '5',
        '--sha',
        'aaa',
        '--sha',
        'bbb',
        '--down-url',
        'https://example.org/p.jar',
      );
      expect(result.code).toBe(0);
      const policy = {
        minPluginVersion: 3,
        latestPluginVersion: 5,
        allowedPluginSHAs: ['aaa', 'bbb'],
        downUrl: 'https://example.org/p.jar',
      };
      expect(json(result)).toEqual(policy);
      expect(await app.sql(`SELECT value FROM service_setting WHERE key = 'plugin_policy'`)).toEqual([
        { value: policy },
      ]);
      // Leave logins open for the other tests.
      expect((await admin('plugin-policy', 'set', '--min', '0', '--latest', '0')).code).toBe(0);
    });
  });

  describe('catalogs and maintenance jobs', () => {
    it('imports charts and collections from files, and from stdin with -', async () => {
      const charts = join(files, 'charts.json');
      writeFileSync(
        charts,
        JSON.stringify([
          { levelId: 77, name: 'Seventy-seven', difficultyConstant: 12.5, version: '1.0', active: true },
        ]),
      );
      const imported = await admin('charts', 'import', charts);
      expect(imported.code).toBe(0);
      expect(json(imported)).toEqual({ upserted: 1 });
      expect(await app.sql('SELECT name, difficulty_constant, active FROM chart WHERE level_id = 77')).toEqual([
        { name: 'Seventy-seven', difficulty_constant: 12.5, active: true },
      ]);

      const collections = join(files, 'collections.json');
      writeFileSync(
        collections,
        JSON.stringify([
          { key: 'rhythmc:title.cli', type: 'title', unlockMethod: { type: 'MANUAL' }, properties: { title: 'CLI' } },
        ]),
      );
      expect(json(await admin('collections', 'import', collections))).toEqual({ upserted: 1 });
      expect(await app.sql(`SELECT type FROM collection WHERE key = 'rhythmc:title.cli'`)).toEqual([{ type: 'title' }]);

      const piped = JSON.stringify([
        { levelId: 78, name: 'Piped', difficultyConstant: 1, version: '1', active: false },
      ]);
      const fromStdin = await cli(['charts', 'import', '-', '--url', app.baseUrl], { ADMIN_TOKEN }, piped);
      expect(fromStdin.code).toBe(0);
      expect(json(fromStdin)).toEqual({ upserted: 1 });
      expect(await app.sql('SELECT name, active FROM chart WHERE level_id = 78')).toEqual([
        { name: 'Piped', active: false },
      ]);
    });

    it('runs a rescan, a recompute and lists connections', async () => {
      expect(json(await admin('resources', 'rescan'))).toEqual({ data: 0, lang: 0, packs: 0, bytes: 0 });
      expect(json(await admin('ratings', 'recompute'))).toEqual({ players: 0, bests: 0, atpChanged: 0, batches: 0 });
      expect(json(await admin('realtime', 'connections', '--json'))).toEqual([]);
      expect(await admin('realtime', 'connections')).toEqual({ code: 0, stdout: '(none)\n', stderr: '' });
    });
  });

  describe('reads: a table by default, the JSON answer with --json', () => {
    it('lists players as a table, pages with --cursor, and prints the API answer with --json', async () => {
      const prefix = `Cli_${Date.now().toString(36)}`;
      const a = await createPlayer(app, { username: `${prefix}_a` });
      const b = await createPlayer(app, { username: `${prefix}_b` });
      const first = await admin('players', 'list', '--username', prefix, '--limit', '1');
      expect(first.code).toBe(0);
      const api = await app.admin.get('/admin/players', { query: { username: prefix, limit: 1 } });
      const lines = first.stdout.split('\n');
      expect(lines[0]).toMatch(/^uid\s+username\s+displayName\s+uuid\s+banstate\s+ban\s+online\s+created$/);
      expect(lines[1]).toMatch(
        new RegExp(`^\\s*${a.uid}\\s+${prefix}_a\\s+${prefix}_a\\s+-\\s+0\\s+-\\s+-\\s+\\d{4}-`),
      );
      expect(lines.slice(2)).toEqual(['', `more: add --cursor ${api.body.nextCursor}`, '']);
      const second = await admin(
        'players',
        'list',
        '--username',
        prefix,
        '--limit',
        '1',
        '--cursor',
        api.body.nextCursor as string,
        '--json',
      );
      expect(json(second)).toEqual(
        (await app.admin.get('/admin/players', { query: { username: prefix, limit: 1, cursor: api.body.nextCursor } }))
          .body,
      );
      expect(json(second).items[0].uid).toBe(b.uid);
    });

    it("shows a player's profile with its sections", async () => {
      const player = await createPlayer(app, { displayName: 'Shown' });
      await app.admin.post(`/admin/players/${player.uid}/ban`, { reason: 'spam' });
      const result = await admin('players', 'show', String(player.uid));
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(`uid          ${player.uid}\n`);
      expect(result.stdout).toContain('ban          spam until forever\n');
      for (const section of [
        'Sessions (latest 20):',
        'Takeovers (latest 20; sessions without proof taken over by a login with proof):',
        'Bans:',
        'Balance history (latest 20):',
        'Bests (0 of 0, by rating):',
      ])
        expect(result.stdout).toContain(section);
      expect(json(await admin('players', 'show', String(player.uid), '--json'))).toEqual(
        (await app.admin.get(`/admin/players/${player.uid}`)).body,
      );
    });

    it('shows the overview', async () => {
      const shown = await admin('overview', 'show');
      expect(shown.code).toBe(0);
      expect(shown.stdout).toMatch(
        /^serversOnline\s+\d+\nplayersOnline\s+\d+\nuploadsLastMinute\s+\d+\nuploadsLast15Minutes\s+\d+\nmaintenance\s+(off|on: .*)\npluginPolicy\s+/,
      );
      expect(json(await admin('overview', 'show', '--json'))).toEqual((await app.admin.get('/admin/overview')).body);
    });

    it('lists bans, servers, charts, collections and the audit log', async () => {
      const server = await createServer(app, { name: uniqueName('tbl') });
      expect(
        (
          await app.admin.put('/admin/charts', [
            { levelId: 7901, name: 'Off', difficultyConstant: 3, version: '1.0', active: false },
          ])
        ).status,
      ).toBe(200);
      const banned = await createPlayer(app);
      await app.admin.post(`/admin/players/${banned.uid}/ban`, { reason: 'flood', until: '2099-01-01T00:00:00' });
      const bans = await admin('bans', 'list', '--uid', String(banned.uid));
      expect(bans.stdout).toMatch(
        new RegExp(
          `^id\\s+uid\\s+username\\s+reason\\s+until\\s+created\\n\\s*\\d+\\s+${banned.uid}\\s+${banned.username}\\s+flood\\s+2099-01-01T00:00:00\\s+\\d{4}-`,
        ),
      );
      const servers = await admin('servers', 'list', '--online', 'false', '--limit', '200');
      expect(servers.stdout).toMatch(
        new RegExp(
          `\\n\\s*${server.serverID}\\s+${server.serverName}\\s+DE\\s+no\\s+0\\s+-\\s+-\\s+-\\s+-\\s+0/0/0\\n`,
        ),
      );
      const charts = (await admin('charts', 'list', '--active', 'false')).stdout.split('\n');
      expect(charts[0]).toMatch(/^levelId\s+name\s+constant\s+version\s+active\s+placeholder\s+notes\s+updated$/);
      expect(charts.some((line) => /^\s*7901\s+Off\s+3\s+1\.0\s+no\s+no\s+-\s+\d{4}-/.test(line))).toBe(true);
      expect((await admin('collections', 'list', '--type', 'title')).code).toBe(0);
      const audit = await admin('audit', 'list', '--target', `server:${server.serverID}`);
      expect(audit.stdout).toMatch(/^id\s+time\s+action\s+target\s+actor\s+credential\s+from\s+requestId\s+summary\n/);
      expect(audit.stdout).toContain(`server.register  server:${server.serverID}  ADMIN_TOKEN  admin`);
      const byActor = await admin('audit', 'list', '--actor', 'ADMIN_TOKEN', '--limit', '1', '--json');
      expect(JSON.parse(byActor.stdout).items).toEqual([expect.objectContaining({ actor: 'ADMIN_TOKEN' })]);
      const refused = await admin('audit', 'list', '--limit', '0');
      expect(refused).toEqual({
        code: 1,
        stdout: '',
        stderr: `${JSON.stringify(badLines('limit must be an integer from 1 to 200'), null, 2)}\n`,
      });
    });

    it('lists flagged plays, approves, voids and restores one', async () => {
      await app.admin.put('/admin/charts', [
        { levelId: 77, name: 'Chart 77', difficultyConstant: 10, version: '1.0', active: true },
      ]);
      const server = await onlineServer(app);
      const player = await onlinePlayer(app, server);
      const time = Date.now() - 60_000;
      const upload = await app.http.post(
        '/player/upload',
        {
          player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: time },
          server: { serverID: server.serverID, serverName: server.body.serverName as string, country: 'DE' },
          payload: gameplayPayload(77, time, { maxCombo: 9_999 }),
        },
        { token: server.accessToken },
      );
      expect(upload.status).toBe(200);
      const table = await admin('plays', 'list', '--check', 'maxCombo', '--uid', String(player.uid));
      expect(table.stdout).toMatch(
        new RegExp(
          `^id\\s+uid\\s+player\\s+level\\s+acc\\s+pass\\s+received\\s+flags\\s+review\\s+counts\\n\\s*\\d+\\s+${player.uid}\\s+\\S+\\s+77\\s+99\\.5\\s+yes\\s+\\S+\\s+maxCombo\\s+flagged\\s+no`,
        ),
      );
      const listed = json(await admin('plays', 'list', '--check', 'maxCombo', '--uid', String(player.uid), '--json'));
      expect(listed).toMatchObject({
        items: [{ uid: player.uid, flags: ['maxCombo'], review: 'flagged', counts: false }],
        nextCursor: null,
      });
      const id = String(listed.items[0].id);
      expect(json(await admin('plays', 'approve', id))).toMatchObject({ review: 'approved', counts: true });
      expect(json(await admin('plays', 'void', id, '--reason', 'macro'))).toMatchObject({
        review: 'voided',
        voidReason: 'macro',
        counts: false,
      });
      expect(json(await admin('plays', 'restore', id))).toMatchObject({ review: 'approved', counts: true });
      // The approved play counts: the player leads the chart's board, and has a place on the ATP board.
      const chart = await admin('boards', 'chart', '77');
      expect(chart.stdout).toMatch(
        new RegExp(`^rank\\s+uid\\s+username\\s+displayName\\s+acc\\s+rating\\n\\s*1\\s+${player.uid}\\s`),
      );
      expect(json(await admin('boards', 'atp', '--around', String(player.uid), '--k', '0', '--json'))).toEqual({
        board: 'atp',
        rank: expect.any(Number),
        entries: [expect.objectContaining({ uid: player.uid })],
      });
      const refused = await admin('plays', 'list', '--state', 'pending');
      expect(refused.code).toBe(1);
      expect(JSON.parse(refused.stderr)).toEqual(badLines('state must be one of flagged, approved, voided, all'));
    });
  });

  describe('seasons', () => {
    it('creates, lists, shows, changes and deletes a season; closes one and reads its archived board', async () => {
      const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
      expect(
        (
          await app.admin.put('/admin/collections', [
            {
              key: 'rhythmc:title.cli-champion',
              type: 'title',
              unlockMethod: { type: 'MANUAL' },
              properties: { title: 'Champion', description: 'A season title', rarity: 'EPIC', position: true },
            },
          ])
        ).status,
      ).toBe(200);
      const created = await admin(
        'seasons',
        'create',
        'cli-spring',
        '--name',
        'CLI spring',
        '--starts',
        `${day(1)}T00:00:00`,
        '--ends',
        `${day(30)}T00:00:00`,
        '--grant',
        'rhythmc:title.cli-champion',
        '--top',
        '3',
      );
      expect(created).toMatchObject({ code: 0, stderr: '' });
      const season = json(created);
      expect(season).toMatchObject({
        slug: 'cli-spring',
        name: 'CLI spring',
        startsAt: `${day(1)}T00:00:00`,
        endsAt: `${day(30)}T00:00:00`,
        closeRule: { collection: 'rhythmc:title.cli-champion', top: 3, board: 'atp' },
        state: 'scheduled',
      });
      const listed = await admin('seasons', 'list');
      expect(listed.stdout).toMatch(/^id\s+slug\s+name\s+state\s+startsAt\s+endsAt\s+closeRule$/m);
      expect(listed.stdout).toContain('rhythmc:title.cli-champion to the top 3');
      expect((await admin('seasons', 'show', String(season.id))).stdout).toMatch(/^state\s+scheduled$/m);
      expect(
        await admin('seasons', 'create', 'x', '--name', 'X', '--starts', 'a', '--ends', 'b', '--top', '3'),
      ).toMatchObject({ code: 2 });
      const updated = await admin('seasons', 'update', String(season.id), '--name', 'CLI spring!', '--no-grant');
      expect(json(updated)).toMatchObject({ id: season.id, name: 'CLI spring!', closeRule: null });
      expect((await admin('seasons', 'update', String(season.id))).code).toBe(2);
      const pastEnd = await admin('seasons', 'update', String(season.id), '--ends', '2020-01-01T00:00:00');
      expect(pastEnd.code).toBe(1);
      expect(JSON.parse(pastEnd.stderr)).toEqual(badField('endsAt', 'must be after startsAt'));
      expect(await admin('seasons', 'delete', String(season.id))).toEqual({ code: 0, stdout: '', stderr: '' });

      const [started] = await app.sql<{ id: string }>(
        `INSERT INTO board_period (kind, slug, name, starts_at, ends_at)
         VALUES ('season', 'cli-started', 'Started', now() - interval '1 hour', now() + interval '1 day') RETURNING id::text AS id`,
      );
      const closed = await admin('seasons', 'close', started.id);
      expect(closed).toMatchObject({ code: 0, stderr: '' });
      expect(json(closed)).toMatchObject({ season: { slug: 'cli-started', state: 'archived' }, granted: null });
      const archive = await admin('boards', 'atp', '--period', 'season:cli-started');
      expect(archive).toMatchObject({ code: 0, stderr: '' });
      expect(archive.stdout).toMatch(/^period: season cli-started \(\d+\): .* to .*, closed \(archive\)$/m);
    });
  });

  describe('webhooks', () => {
    it('registers a webhook showing its secret once, lists it without the secret, changes, reads its log and deletes it', async () => {
      const created = await admin(
        'webhooks',
        'create',
        '--name',
        'Discord #scores',
        '--receiver',
        'https://webhook.invalid/hook',
        '--event',
        'chart.first_place',
        '--event',
        'player.atp_top',
        '--format',
        'discord',
        '--atp-top',
        '5',
      );
      expect(created).toMatchObject({ code: 0, stderr: '' });
      const body = json(created);
      expect(body).toMatchObject({
        name: 'Discord #scores',
        events: ['chart.first_place', 'player.atp_top'],
        format: 'discord',
        atpTop: 5,
        enabled: true,
        secret: expect.stringMatching(/^whsec_/),
      });
      const listed = await admin('webhooks', 'list');
      expect(listed.code).toBe(0);
      expect(listed.stdout).toMatch(
        /^id\s+name\s+format\s+events\s+enabled\s+failingSince\s+pending\s+failed\s+disabledReason$/m,
      );
      expect(listed.stdout).toContain('Discord #scores');
      expect(listed.stdout).not.toContain(body.secret as string);
      const updated = await admin('webhooks', 'update', String(body.id), '--enabled', 'false');
      expect(json(updated)).toMatchObject({ id: body.id, enabled: false });
      const wrong = await admin('webhooks', 'update', String(body.id), '--enabled', 'maybe');
      expect(wrong.code).toBe(2);
      const rotated = await admin('webhooks', 'rotate-secret', String(body.id), '--overlap-seconds', '60');
      expect(rotated).toMatchObject({ code: 0, stderr: '' });
      expect(json(rotated)).toMatchObject({
        id: body.id,
        secret: expect.stringMatching(/^whsec_/),
        previousSecretExpiresAt: expect.any(String),
      });
      expect(json(rotated).secret).not.toBe(body.secret);
      const badOverlap = await admin('webhooks', 'rotate-secret', String(body.id), '--overlap-seconds', 'soon');
      expect(badOverlap.code).toBe(2);
      const log = await admin('webhooks', 'deliveries', String(body.id), '--state', 'failed', '--json');
      expect(json(log)).toEqual({ items: [], nextCursor: null });
      expect(await admin('webhooks', 'delete', String(body.id))).toEqual({ code: 0, stdout: '', stderr: '' });
      const gone = await admin('webhooks', 'delete', String(body.id));
      expect(gone.code).toBe(1);
      expect(JSON.parse(gone.stderr)).toEqual({
        error: 'NOT_FOUND',
        message: `No webhook with id ${body.id as number}`,
      });
    });
  });

  describe('public API keys', () => {
    it('creates a key shown once, lists it without the key, changes and revokes it', async () => {
      const created = await admin(
        'api-keys',
        'create',
        '--name',
        'Discord bot',
        '--scope',
        'read:boards',
        '--scope',
        'read:players',
        '--rate-limit',
        '600',
      );
      expect(created).toMatchObject({ code: 0, stderr: '' });
      const body = json(created);
      expect(body).toEqual({
        id: expect.any(Number),
        name: 'Discord bot',
        scopes: ['read:boards', 'read:players'],
        rateLimit: 600,
        effectiveRateLimit: 600,
        createdAt: expect.any(String),
        lastUsedAt: null,
        revokedAt: null,
        key: expect.stringMatching(/^rpk_[A-Za-z0-9_-]{43}$/),
      });
      expect(await app.sql('SELECT key_hash FROM public_api_key WHERE id = $1', [body.id])).toEqual([
        { key_hash: sha256(body.key) },
      ]);
      expect((await app.http.get('/public/v1/charts', { token: body.key })).status).toBe(200);

      const listed = await admin('api-keys', 'list');
      expect(listed.code).toBe(0);
      expect(listed.stdout).toMatch(/^id\s+name\s+scopes\s+perMinute\s+created\s+lastUsed\s+revoked$/m);
      expect(listed.stdout).toMatch(
        new RegExp(`^\\s*${body.id}\\s+Discord bot\\s+read:boards read:players\\s+600\\s`, 'm'),
      );
      expect(listed.stdout).not.toContain((body.key as string).slice(4));

      const updated = await admin(
        'api-keys',
        'update',
        String(body.id),
        '--scope',
        'read:boards',
        '--rate-limit',
        'default',
      );
      expect(updated.code).toBe(0);
      expect(json(updated)).toMatchObject({
        id: body.id,
        scopes: ['read:boards'],
        rateLimit: null,
        effectiveRateLimit: 1200,
      });
      expect((await app.http.get('/public/v1/players/1', { token: body.key })).status).toBe(403);

      expect(await admin('api-keys', 'revoke', String(body.id))).toEqual({ code: 0, stdout: '', stderr: '' });
      expect((await app.http.get('/public/v1/charts', { token: body.key })).status).toBe(401);
      const again = await admin('api-keys', 'update', String(body.id), '--name', 'x');
      expect(again.code).toBe(1);
      expect(JSON.parse(again.stderr)).toEqual({ error: 'NOT_FOUND', message: `No live API key with id ${body.id}` });
    });

    it('checks the command line before calling', async () => {
      const noScope = await admin('api-keys', 'create', '--name', 'x');
      expect(noScope.code).toBe(2);
      const badLimit = await admin(
        'api-keys',
        'create',
        '--name',
        'x',
        '--scope',
        'read:boards',
        '--rate-limit',
        'lots',
      );
      expect(badLimit.code).toBe(2);
      expect(badLimit.stderr).toContain('--rate-limit must be an integer');
      const nothing = await admin('api-keys', 'update', '1');
      expect(nothing.code).toBe(2);
      expect(nothing.stderr).toContain('give --name, --scope or --rate-limit');
      // A scope the service does not know is its 400, printed as it answered.
      const unknown = await admin('api-keys', 'create', '--name', 'x', '--scope', 'write:all');
      expect(unknown.code).toBe(1);
      expect(JSON.parse(unknown.stderr)).toEqual(
        badLines('scopes must be a non-empty list of distinct scopes among read:boards, read:players'),
      );
    });
  });

  describe('errors', () => {
    it('prints the error body of a refusal on stderr and exits 1', async () => {
      const file = join(files, 'packs.json');
      writeFileSync(
        file,
        JSON.stringify([
          { name: 'base', displayName: 'Base', type: 'FULL', availableSongs: [1], file: 'packs/base.zip' },
        ]),
      );
      const result = await admin('packs', 'import', file);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(JSON.parse(result.stderr)).toEqual(badLines('[0].file: "packs/base.zip" is not in the resource index'));
      expect(await app.sql('SELECT 1 FROM resource_pack')).toHaveLength(0);

      const missing = await admin('players', 'unban', '99999999', '--json');
      expect(missing).toEqual({
        code: 1,
        stdout: '',
        stderr: `${JSON.stringify({ error: 'NOT_FOUND', message: 'No player with uid 99999999' })}\n`,
      });
    });

    it('exits 1 on a wrong admin token and never prints the token', async () => {
      const wrong = 'wrong-admin-token-0123456789';
      const result = await cli(['servers', 'create', '--name', 'never', '--country', 'DE', '--url', app.baseUrl], {
        ADMIN_TOKEN: wrong,
      });
      expect(result.code).toBe(1);
      expect(JSON.parse(result.stderr)).toEqual({ error: 'UNAUTHORIZED', message: 'Invalid admin token' });
      expect(`${result.stdout}${result.stderr}`).not.toContain(wrong);
      expect(await app.sql(`SELECT 1 FROM game_server WHERE name = 'never'`)).toHaveLength(0);
    });

    it('exits 1 with UNAVAILABLE when the service cannot be reached', async () => {
      const result = await cli(['realtime', 'connections', '--url', 'http://127.0.0.1:9'], { ADMIN_TOKEN });
      expect(result.code).toBe(1);
      expect(JSON.parse(result.stderr)).toEqual({
        error: 'UNAVAILABLE',
        message: 'cannot reach http://127.0.0.1:9: ECONNREFUSED',
      });
      expect(result.stderr).not.toContain(ADMIN_TOKEN);
    });

    it.each([
      [[], 'error: missing command'],
      [['servers', 'launch'], 'error: unknown command "servers launch"'],
      [['players'], 'error: "players" needs an action'],
      [['servers', 'create', '--name', 'x'], 'error: --country is required'],
      [['servers', 'create', '--name', 'x', '--country', 'DE', '--colour', 'red'], "error: Unknown option '--colour'"],
      [['players', 'ban'], 'error: expected <uid>, got none'],
      [['players', 'banstate', '5', 'high'], 'error: value must be an integer, got "high"'],
      [['plugin-policy', 'set', '--min', '1.5', '--latest', '2'], 'error: --min must be an integer, got "1.5"'],
      [['charts', 'import', '/no/such/file.json'], 'error: cannot read /no/such/file.json'],
      [['--url', 'http://x', 'resources', 'rescan'], 'error: the command comes first'],
    ])('exits 2 with the usage for %j', async (args, message) => {
      const result = await cli(args, { ADMIN_TOKEN });
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr.startsWith(message)).toBe(true);
      expect(result.stderr).toContain('Usage: npm run admin --');
    });

    it('exits 2 when the import file is not JSON, naming the file', async () => {
      const file = join(files, 'broken.json');
      writeFileSync(file, '[{"levelId": 1,]');
      const result = await admin('charts', 'import', file);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(
        new RegExp(`^error: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not valid JSON: `),
      );
    });

    it('exits 2 without STAFF_TOKEN or ADMIN_TOKEN', async () => {
      const result = await cli(['realtime', 'connections', '--url', app.baseUrl]);
      expect(result).toEqual({
        code: 2,
        stdout: '',
        stderr:
          "error: neither STAFF_TOKEN nor ADMIN_TOKEN is set (the CLI reads its token from the environment: a personal API token from the console, or the service's ADMIN_TOKEN)\n",
      });
    });
  });

  describe('staff', () => {
    it('creates the first owner with a password from stdin, never from a flag, and manages accounts', async () => {
      const password = 'first owner passphrase';
      const created = await cli(
        ['staff', 'create', '--name', 'first-owner', '--role', 'owner', '--url', app.baseUrl],
        { ADMIN_TOKEN },
        `${password}\n`,
      );
      expect(created).toMatchObject({ code: 0, stderr: '' });
      const account = json(created);
      expect(account).toMatchObject({ name: 'first-owner', role: 'owner', disabled: false });
      expect(created.stdout).not.toContain(password);
      const signedIn = await app.http.post('/admin/session', { name: 'first-owner', password });
      expect(signedIn.status).toBe(200);

      // A personal API token from the console session, then the CLI with STAFF_TOKEN alone.
      const cookies = Object.fromEntries(
        signedIn.headers.getSetCookie().map((line) => line.split(';')[0].split('=') as [string, string]),
      );
      const session = app.http.withHeaders({
        Cookie: `rhythmc_session=${cookies.rhythmc_session}`,
        'X-CSRF-Token': cookies.rhythmc_csrf,
      });
      const token = (await session.post('/admin/me/tokens', { name: 'cli' })).body.token as string;
      const owner = (...args: string[]) => cli([...args, '--url', app.baseUrl], { STAFF_TOKEN: token });
      const me = await owner('me', 'show');
      expect(me.code).toBe(0);
      expect(me.stdout).toMatch(/^name\s+first-owner\nrole\s+owner\ncredential\s+token\n/);

      // What gives a way in that outlives the token (an account, a reset, a factor off): not with a
      // personal token; ADMIN_TOKEN (or the console) does it.
      const refused = (message: string) => ({
        code: 1,
        stdout: '',
        stderr: `${JSON.stringify(
          {
            error: 'FORBIDDEN',
            message: `${message} from a console session or with ADMIN_TOKEN, not with a personal API token`,
          },
          null,
          2,
        )}\n`,
      });
      expect(
        await cli(
          ['staff', 'create', '--name', 'cli-mod', '--role', 'moderator', '--url', app.baseUrl],
          { STAFF_TOKEN: token },
          'moderator passphrase 1\n',
        ),
      ).toEqual(refused('Staff accounts are created'));
      const mod = await cli(
        ['staff', 'create', '--name', 'cli-mod', '--role', 'moderator', '--url', app.baseUrl],
        { ADMIN_TOKEN },
        'moderator passphrase 1\n',
      );
      const modId = String(json(mod).id);
      expect((await owner('staff', 'role', modId, 'support', '--json')).stdout).toContain('"role":"support"');
      expect(json(await owner('staff', 'disable', modId))).toMatchObject({ disabled: true });
      expect(json(await owner('staff', 'enable', modId))).toMatchObject({ disabled: false });
      expect(
        await cli(
          ['staff', 'password', modId, '--url', app.baseUrl],
          { STAFF_TOKEN: token },
          'a brand new passphrase\n',
        ),
      ).toEqual(refused('Passwords are reset and authenticators turned off'));
      const reset = await cli(
        ['staff', 'password', modId, '--url', app.baseUrl],
        { ADMIN_TOKEN },
        'a brand new passphrase\n',
      );
      expect(reset.code).toBe(0);
      expect(
        (await app.http.post('/admin/session', { name: 'cli-mod', password: 'a brand new passphrase' })).status,
      ).toBe(200);
      const list = await owner('staff', 'list');
      expect(list.stdout.split('\n')[0]).toMatch(/^id\s+name\s+role\s+disabled\s+2fa\s+tokens\s+lastSignIn\s+created$/);
      expect(await owner('staff', 'second-factor-off', modId)).toEqual(
        refused('Passwords are reset and authenticators turned off'),
      );
      expect(json(await admin('staff', 'second-factor-off', modId))).toMatchObject({
        name: 'cli-mod',
        secondFactor: false,
      });
      expect(list.stdout).toContain('cli-mod');
      expect((await owner('staff', 'show', modId)).stdout).toMatch(/^id\s+\d+\nname\s+cli-mod\n/);
      // A dot segment would be resolved away (DELETE /admin/staff/{id}/tokens/.. is DELETE
      // /admin/staff/{id}): refused before any call, and the account is still there.
      for (const dots of ['..', '.', '']) {
        const dotted = await owner('staff', 'revoke-token', modId, dots);
        expect({ code: dotted.code, stderr: dotted.stderr.split('\n')[0] }).toEqual({
          code: 2,
          stderr: `error: "${dots}" is not a valid value for a path parameter`,
        });
      }
      expect((await owner('staff', 'show', modId)).stdout).toMatch(/^id\s+\d+\nname\s+cli-mod\n/);
      expect(json(await owner('staff', 'delete', modId))).toMatchObject({ name: 'cli-mod' });
      expect((await owner('tokens', 'list')).stdout).toMatch(
        /^id\s+name\s+role\s+lastUsed\s+created\n\s*\d+\s+cli\s+owner/,
      );

      // Who did it: the audit log names the owner, through its token.
      const rows = await app.sql<{ action: string; actor: string; credential: string }>(
        "SELECT action, actor, credential FROM admin_audit WHERE target = 'staff:' || $1 ORDER BY id",
        [modId],
      );
      expect(rows.map((row) => [row.action, row.actor])).toEqual([
        ['staff.create', 'ADMIN_TOKEN'],
        ['staff.update', 'first-owner'],
        ['staff.update', 'first-owner'],
        ['staff.update', 'first-owner'],
        ['staff.update', 'ADMIN_TOKEN'],
        ['staff.sign-in', 'cli-mod'],
        ['staff.update', 'ADMIN_TOKEN'],
        ['staff.delete', 'first-owner'],
      ]);
      expect(new Set(rows.filter((row) => row.actor === 'first-owner').map((row) => row.credential))).toEqual(
        new Set([expect.stringMatching(/^token:\d+$/)]),
      );
      expect(JSON.stringify(await app.sql('SELECT * FROM admin_audit'))).not.toContain('passphrase');
    });

    it('refuses an empty password (exit 2) and the service refuses a short one (exit 1)', async () => {
      expect(
        (
          await cli(
            ['staff', 'create', '--name', 'empty-pw', '--role', 'support', '--url', app.baseUrl],
            { ADMIN_TOKEN },
            '\n',
          )
        ).code,
      ).toBe(2);
      const short = await cli(
        ['staff', 'create', '--name', 'short-pw', '--role', 'support', '--url', app.baseUrl],
        { ADMIN_TOKEN },
        'short\n',
      );
      expect(short.code).toBe(1);
      expect(JSON.parse(short.stderr)).toEqual(badLines('password must be a string of 15 to 256 characters'));
    });
  });

  describe('addresses and help', () => {
    it('defaults the address to PUBLIC_BASE_URL, then to http://localhost:$PORT', async () => {
      const byBase = await cli(['realtime', 'connections', '--json'], { ADMIN_TOKEN, PUBLIC_BASE_URL: app.baseUrl });
      expect(byBase).toEqual({ code: 0, stdout: '[]\n', stderr: '' });
      const byPort = await cli(['realtime', 'connections', '--json'], { ADMIN_TOKEN, PORT: new URL(app.baseUrl).port });
      expect(byPort).toEqual({ code: 0, stdout: '[]\n', stderr: '' });
    });

    it('prints the help of everything and of one command on stdout', async () => {
      const all = await cli(['help']);
      expect(all.code).toBe(0);
      for (const command of [
        'servers create',
        'players ban <uid>',
        'maintenance on',
        'plugin-policy set',
        'resources rescan',
        'charts import <file.json>',
        'ratings recompute',
        'api-keys create',
        'api-keys list',
      ]) {
        expect(all.stdout).toContain(`  ${command}`);
      }
      const one = await cli(['players', 'ban', '--help']);
      expect(one.code).toBe(0);
      expect(one.stdout).toContain(
        'Usage: npm run admin -- players ban <uid> [--reason <text>] [--until <YYYY-MM-DDTHH:mm:ss>] [--message <text>]',
      );
      expect((await cli(['help', 'players', 'ban'])).stdout).toBe(one.stdout);
    });
  });
});
