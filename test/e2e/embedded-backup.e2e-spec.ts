import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { runDatabaseCli } from '../../src/cli/database';
import { onlinePlayer, TestPlayerSession } from '../factories/player.factory';
import { onlineServer, TestServerSession } from '../factories/server.factory';
import { defineCharts, gameplayPayload } from '../factories/upload.factory';
import { RUN_ID_VAR, TEST_TMP_ROOT, testDatabaseServerUrl, withAdminClient, withDatabase } from '../setup/test-env';
import { ADMIN_TOKEN, startTestApp, TestApp, TestClients } from '../support/test-app';
import { eventually } from '../support/wait';

/**
 * The embedded database against outside clients, and its online backup and restore (issue 41
 * item 4; docs/operations.md "Backup and restore", docs/decisions.md "Embedded database: only the
 * service connects"). The first two blocks run in the pass without DATABASE_URL; the last in the
 * pass with it.
 */
const embeddedOnly = testDatabaseServerUrl() ? describe.skip : describe;
const postgresOnly = testDatabaseServerUrl() ? describe : describe.skip;

const CHARTS = [401, 402, 403];

function scratchDir(name: string): string {
  const dir = join(TEST_TMP_ROOT, process.env[RUN_ID_VAR] as string, `${name}-${randomBytes(4).toString('hex')}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Runs `npm run database -- …` in process against `app`; answers the exit status and what it printed. */
async function databaseCli(argv: string[], env: Record<string, string>) {
  const out: string[] = [];
  const err: string[] = [];
  const status = await runDatabaseCli(argv, env, { out: (text) => out.push(text), err: (text) => err.push(text) });
  return { status, out: out.join('\n'), err: err.join('\n') };
}

/** A game server, players and charts, and uploads whose acknowledgements are counted by payload time. */
async function world(clients: TestClients, players: number) {
  const server: TestServerSession = await onlineServer(clients);
  const sessions: TestPlayerSession[] = [];
  for (let i = 0; i < players; i++) sessions.push(await onlinePlayer(clients, server));
  await defineCharts(clients, CHARTS);
  let time = Date.now() - 3_600_000;
  const acknowledged: number[] = [];
  const upload = async (player: TestPlayerSession, levelId: number, acc: number) => {
    const at = (time += 1_000);
    const response = await clients.http.post(
      '/player/upload',
      {
        server: { serverID: server.serverID, serverName: 'backup', country: 'DE' },
        player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: at },
        payload: gameplayPayload(levelId, at, { acc }),
      },
      { token: server.accessToken },
    );
    if (response.status !== 200) throw new Error(`upload: ${response.status} ${response.text}`);
    acknowledged.push(at);
    return response;
  };
  return { server, players: sessions, upload, acknowledged };
}

/** What the boards answer: the ATP board and every chart's board, as the admin API reads them. */
async function boards(app: TestClients): Promise<unknown[]> {
  const answers = [];
  for (const path of ['/admin/boards/atp', ...CHARTS.map((levelId) => `/admin/boards/charts/${levelId}`)]) {
    const response = await app.admin.get(path);
    expect(response.status).toBe(200);
    answers.push({ path, body: response.body as unknown });
  }
  return answers;
}

/** Ranked plays: each player beats the last on each chart, so the boards have a definite order. */
async function rankedPlays(data: Awaited<ReturnType<typeof world>>): Promise<void> {
  for (const [p, player] of data.players.entries())
    for (const [c, levelId] of CHARTS.entries()) await data.upload(player, levelId, 90 + p + c / 10);
}

embeddedOnly('the embedded database refuses every client without this start’s secret', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('outside clients (no password, a wrong one, junk bytes) are refused, and the service answers as before', async () => {
    const data = await world(app, 3);
    await rankedPlays(data);
    const before = await boards(app);
    // The service's own URL carries the secret: the same address without it is what pg_dump or psql would try.
    const url = new URL(app.databaseUrl());
    expect(url.password).toMatch(/^[\w-]{32}$/);
    for (const password of [undefined, '', 'postgres', `${url.password}x`]) {
      const outsider = new Client({
        host: url.hostname,
        port: Number(url.port),
        user: 'postgres',
        database: 'postgres',
        password,
        ssl: false,
      });
      outsider.on('error', () => undefined);
      const refused = await outsider.connect().then(
        () => null,
        (error: { code?: string; message: string }) => error,
      );
      // A client that connected could run SET search_path = '' (pg_dump does) on the service's session.
      if (refused === null) await outsider.query(`SET search_path = ''`).finally(() => outsider.end());
      expect(refused).toMatchObject({ code: '28P01', message: 'password authentication failed' });
    }
    // Not the protocol at all: closed without an answer PGlite would see.
    const junk = await new Promise<string>((resolve) => {
      const socket = connect(Number(url.port), url.hostname, () => socket.end(Buffer.from('GET / HTTP/1.1\r\n\r\n')));
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
      socket.on('close', () => resolve(answer));
      socket.on('error', () => resolve(answer));
    });
    expect(junk).toContain('unsupported startup message');

    expect(await boards(app)).toEqual(before);
    const after = await data.upload(data.players[0], CHARTS[0], 99.9);
    expect(after.status).toBe(200);
  });

  it('clients holding the secret run whole query sequences: no Bind meets another client’s statement', async () => {
    const data = await world(app, 2);
    await rankedPlays(data);
    const before = await boards(app);
    const clients = await Promise.all(
      [0, 1, 2, 3].map(async () => {
        const client = new Client({ connectionString: app.databaseUrl() });
        await client.connect();
        return client;
      }),
    );
    // Each client's parameterised statement has its own number of parameters: a Bind that met another
    // client's unnamed statement fails ("bind message supplies 1 parameters, but prepared statement
    // "" requires 2"), and an Execute that met another's portal answers another's row.
    const statements = [
      { text: 'SELECT $1::int AS sum', params: (i: number) => [i], sum: (i: number) => i },
      { text: 'SELECT $1::int + $2::int AS sum', params: (i: number) => [i, 1], sum: (i: number) => i + 1 },
      {
        text: 'SELECT $1::int + $2::int + $3::int AS sum',
        params: (i: number) => [i, 1, 1],
        sum: (i: number) => i + 2,
      },
    ];
    const failures: string[] = [];
    const run = async (client: Client, c: number) => {
      for (let i = 0; i < 150; i++) {
        const statement = statements[(c + i) % statements.length];
        try {
          const { rows } = await client.query<{ sum: number }>(statement.text, statement.params(i));
          if (rows[0]?.sum !== statement.sum(i)) failures.push(`client ${c}: ${JSON.stringify(rows)} for ${i}`);
        } catch (error) {
          failures.push(`client ${c}: ${(error as Error).message}`);
        }
      }
    };
    // One client in an explicit transaction meanwhile: its statements run between BEGIN and COMMIT alone.
    const inTransaction = async (client: Client) => {
      for (let i = 0; i < 20; i++) {
        await client.query('BEGIN');
        const { rows } = await client.query<{ sum: number }>('SELECT $1::int * 2 AS sum', [i]);
        if (rows[0]?.sum !== i * 2) failures.push(`transaction: ${JSON.stringify(rows)} for ${i}`);
        await client.query('COMMIT');
      }
    };
    const uploads = async () => {
      for (let i = 0; i < 10; i++) await data.upload(data.players[i % 2], CHARTS[i % 3], 80 + i / 100);
    };
    await Promise.all([
      run(clients[0], 0),
      run(clients[1], 1),
      run(clients[2], 2),
      inTransaction(clients[3]),
      uploads(),
    ]);
    expect(failures).toEqual([]);

    // A client that leaves in the middle of a sequence (Parse and Bind sent, no Sync) and one that
    // leaves inside a transaction holding a lock: both are closed for it, and everyone goes on.
    const holder = clients[3];
    await holder.query('BEGIN');
    await holder.query('SELECT pg_advisory_xact_lock(4242)');
    holder.on('error', () => undefined);
    (holder as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    const halfway = clients[0] as unknown as {
      connection: { parse(q: object): void; bind(q: object): void; flush(): void; stream: { destroy(): void } };
    };
    clients[0].on('error', () => undefined);
    halfway.connection.parse({ text: 'SELECT $1::int AS one', types: [] });
    halfway.connection.bind({ values: ['1'] });
    halfway.connection.flush();
    await new Promise((resolve) => setTimeout(resolve, 100));
    halfway.connection.stream.destroy();
    await eventually(
      async () =>
        (await clients[1].query<{ got: boolean }>('SELECT pg_try_advisory_lock(4242) AS got')).rows[0]?.got === true,
      'the leaver’s lock released',
    );
    await clients[1].query('SELECT pg_advisory_unlock(4242)');
    expect((await clients[2].query<{ sum: number }>('SELECT $1::int + $2::int AS sum', [40, 2])).rows).toEqual([
      { sum: 42 },
    ]);
    await Promise.all([clients[1].end(), clients[2].end()]);
    expect(await boards(app)).not.toEqual([]);
    expect((await data.upload(data.players[0], CHARTS[0], 99.99)).status).toBe(200);
    expect((await boards(app)).length).toBe(before.length);
  });

  it('what a client holding the secret SETs (search_path as pg_dump empties it) is reset when it leaves', async () => {
    const data = await world(app, 2);
    await rankedPlays(data);
    const before = await boards(app);
    const insider = new Client({ connectionString: app.databaseUrl() });
    await insider.connect();
    await insider.query(`SET search_path = ''`);
    await insider.query(`SET statement_timeout = 1`);
    expect((await insider.query<{ search_path: string }>('SHOW search_path')).rows).toEqual([{ search_path: '""' }]);
    await insider.end();

    // A client that connects next never sees it: its reset is queued before its startup message.
    const next = new Client({ connectionString: app.databaseUrl() });
    await next.connect();
    expect((await next.query<{ search_path: string }>('SHOW search_path')).rows).toEqual([{ search_path: 'public' }]);
    await next.end();
    // The service's own connection gets the reset queued when the worker sees the client leave.
    await eventually(async () => (await app.admin.get('/admin/boards/atp')).status === 200, 'the session reset');
    expect(await boards(app)).toEqual(before);
    expect(
      await app.sql<{ search_path: string; statement_timeout: string }>(
        `SELECT current_setting('search_path') AS search_path, current_setting('statement_timeout') AS statement_timeout`,
      ),
    ).toEqual([{ search_path: 'public', statement_timeout: '0' }]);
    expect((await data.upload(data.players[1], CHARTS[1], 99.95)).status).toBe(200);
  });
});

embeddedOnly('an online backup of the embedded database, restored into a new data dir', () => {
  let app: TestApp;
  let restored: TestApp | null = null;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await restored?.close();
    await app?.close();
  });

  it('is taken while uploads are served, and the restored service answers the same boards', async () => {
    const data = await world(app, 4);
    await rankedPlays(data);
    const original = await boards(app);

    // Uploads that beat nothing (lower accuracies): stored records, so real writes, but the boards stay.
    let uploading = true;
    const load = (async () => {
      for (let i = 0; uploading; i++)
        await data.upload(data.players[i % data.players.length], CHARTS[i % CHARTS.length], 50 + (i % 10));
    })();
    while (data.acknowledged.length < CHARTS.length * data.players.length + 20)
      await new Promise((resolve) => setTimeout(resolve, 10));

    const file = join(scratchDir('backups'), 'network.tar.gz');
    const env = { ADMIN_TOKEN, PORT: String(new URL(app.baseUrl).port) };
    const acknowledgedBefore = data.acknowledged.length;
    const taken = await databaseCli(['backup', '--out', file, '--url', app.baseUrl], env);
    const acknowledgedAfter = data.acknowledged.length;
    uploading = false;
    await load;

    expect(taken).toMatchObject({ status: 0, err: '' });
    const written = JSON.parse(taken.out) as { file: string; bytes: number; sha256: string };
    expect(written).toEqual({
      file,
      bytes: readFileSync(file).length,
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(existsSync(`${file}.partial`)).toBe(false);
    expect(acknowledgedAfter).toBeGreaterThan(acknowledgedBefore); // uploads were answered while it was taken
    expect(await app.sql(`SELECT action, target, summary FROM admin_audit WHERE action = 'database.backup'`)).toEqual([
      { action: 'database.backup', target: 'database', summary: { bytes: written.bytes, sha256: written.sha256 } },
    ]);

    // A second backup never goes over the first.
    expect(await databaseCli(['backup', '--out', file, '--url', app.baseUrl], env)).toMatchObject({
      status: 1,
      err: expect.stringContaining('the file exists') as string,
    });

    const dataDir = join(scratchDir('restored'), 'data');
    const restoredCli = await databaseCli(['restore', file], { DATA_DIR: dataDir, DATABASE_URL: '', ADMIN_TOKEN });
    expect(restoredCli).toMatchObject({ status: 0, err: '' });
    expect(JSON.parse(restoredCli.out)).toEqual({ dataDir, tables: expect.any(Number) as number });

    restored = await startTestApp({ env: { DATA_DIR: dataDir } });
    expect(await boards(restored)).toEqual(original);
    // Every upload acknowledged before the backup was asked for is in it; nothing that was never acknowledged.
    const times = (
      await restored.sql<{ t: string }>('SELECT time_ms::text AS t FROM play_record ORDER BY time_ms')
    ).map((row) => Number(row.t));
    expect(times.slice(0, acknowledgedBefore)).toEqual(data.acknowledged.slice(0, acknowledgedBefore));
    expect(data.acknowledged.slice(0, times.length)).toEqual(times);
    expect(times.length).toBeLessThanOrEqual(acknowledgedAfter);
  });

  it('refuses a data dir that is not empty, and a file that is not a backup, leaving both as they were', async () => {
    const occupied = scratchDir('occupied');
    writeFileSync(join(occupied, 'keep.txt'), 'mine');
    const notBackup = join(scratchDir('junk'), 'junk.tar.gz');
    writeFileSync(notBackup, 'not a backup');
    expect(await databaseCli(['restore', notBackup], { DATA_DIR: occupied, DATABASE_URL: '' })).toEqual({
      status: 1,
      out: '',
      err: 'error: not a backup of the embedded database: not a gzip file',
    });
    const empty = join(scratchDir('empty'), 'data');
    expect(await databaseCli(['restore', notBackup], { DATA_DIR: empty, DATABASE_URL: '' })).toMatchObject({
      status: 1,
    });
    expect(existsSync(empty) ? readdirSync(empty) : []).toEqual([]);

    const file = join(scratchDir('backups'), 'again.tar.gz');
    expect((await databaseCli(['backup', '--out', file, '--url', app.baseUrl], { ADMIN_TOKEN })).status).toBe(0);
    expect(await databaseCli(['restore', file], { DATA_DIR: occupied, DATABASE_URL: '' })).toEqual({
      status: 1,
      out: '',
      err: `error: ${occupied} is not empty: restore into a new, empty DATA_DIR (the restore never replaces a database)`,
    });
    expect(readdirSync(occupied)).toEqual(['keep.txt']);
    expect(await databaseCli(['restore'], { DATA_DIR: occupied })).toMatchObject({ status: 2 });
  });
});

postgresOnly('a backup asked of a service on PostgreSQL', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('answers 409 naming pg_dump, stores no audit row, and the CLI writes nothing', async () => {
    const response = await app.admin.post('/admin/database/backup');
    expect({ status: response.status, body: response.body as unknown }).toEqual({
      status: 409,
      body: {
        error: 'CONFLICT',
        message:
          'The service runs on PostgreSQL (DATABASE_URL): back it up with pg_dump (docs/operations.md "Backup and restore")',
      },
    });
    expect(await app.sql(`SELECT 1 FROM admin_audit WHERE action = 'database.backup'`)).toEqual([]);
    const file = join(scratchDir('backups'), 'pg.tar.gz');
    const cli = await databaseCli(['backup', '--out', file, '--url', app.baseUrl], { ADMIN_TOKEN });
    expect(cli.status).toBe(1);
    expect(cli.err).toContain('the service answered 409');
    expect(existsSync(file) || existsSync(`${file}.partial`)).toBe(false);
    expect(
      await databaseCli(['restore', file], { DATA_DIR: scratchDir('r'), DATABASE_URL: app.env.DATABASE_URL }),
    ).toEqual({
      status: 1,
      out: '',
      err: 'error: DATABASE_URL is set: restore a PostgreSQL backup with pg_restore (docs/operations.md)',
    });
  });
});

postgresOnly('the restore drill on PostgreSQL (docs/operations.md "Restore drill")', () => {
  let app: TestApp | undefined;
  let restored: TestApp | undefined;
  const serverUrl = testDatabaseServerUrl() as string;
  const database = `rhythmc_test_restored_${randomBytes(5).toString('hex')}`;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await restored?.close();
    await app?.close();
    await withAdminClient(serverUrl, (admin) => admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`));
  });

  it('pg_dump while uploads are served, pg_restore into a new database: the service started on it answers the same boards', async () => {
    const live = app as TestApp;
    const data = await world(live, 4);
    await rankedPlays(data);
    const original = await boards(live);

    let uploading = true;
    const load = (async () => {
      for (let i = 0; uploading; i++)
        await data.upload(data.players[i % data.players.length], CHARTS[i % CHARTS.length], 50 + (i % 10));
    })();
    while (data.acknowledged.length < CHARTS.length * data.players.length + 20)
      await new Promise((resolve) => setTimeout(resolve, 10));

    // The documented commands, as an operator runs them (docs/operations.md "Backup and restore").
    const file = join(scratchDir('pg-backups'), 'network.dump');
    const acknowledgedBefore = data.acknowledged.length;
    await promisify(execFile)('pg_dump', ['-Fc', '-d', live.env.DATABASE_URL, '-f', file]);
    uploading = false;
    await load;
    // Every instance stops before the restore (the Redis index is kept, as after a real outage).
    await live.close();
    app = undefined;
    await withAdminClient(serverUrl, (admin) => admin.query(`CREATE DATABASE "${database}" TEMPLATE template0`));
    const restoredUrl = withDatabase(serverUrl, database);
    await promisify(execFile)('pg_restore', ['--no-owner', '-d', restoredUrl, file]);

    restored = await startTestApp({
      env: {
        DATABASE_URL: restoredUrl,
        REDIS_KEY_PREFIX: live.env.REDIS_KEY_PREFIX,
        DATA_DIR: scratchDir('pg-restored'),
      },
    });
    expect(await boards(restored)).toEqual(original);
    const times = (
      await restored.sql<{ t: string }>('SELECT time_ms::text AS t FROM play_record ORDER BY time_ms')
    ).map((row) => Number(row.t));
    // Every upload acknowledged before pg_dump started is in the dump; nothing that was never acknowledged.
    expect(times.slice(0, acknowledgedBefore)).toEqual(data.acknowledged.slice(0, acknowledgedBefore));
    expect(data.acknowledged.slice(0, times.length)).toEqual(times);

    // The restored service takes uploads and ranks them with the restored plays.
    const server = await onlineServer(restored);
    const player = await onlinePlayer(restored, server);
    const answer = await restored.http.post(
      '/player/upload',
      {
        server: { serverID: server.serverID, serverName: 'restored', country: 'DE' },
        player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: Date.now() },
        payload: gameplayPayload(CHARTS[0], Date.now(), { acc: 100 }),
      },
      { token: server.accessToken },
    );
    expect(answer.status).toBe(200);
    expect((answer.body as { trackRank: number }).trackRank).toBe(1);
    const board = (await restored.admin.get(`/admin/boards/charts/${CHARTS[0]}`)).body as {
      entries: Array<{ uid: number }>;
    };
    expect(board.entries.map((entry) => entry.uid)).toEqual([
      player.uid,
      ...(original[1] as { body: { entries: Array<{ uid: number }> } }).body.entries.map((entry) => entry.uid),
    ]);
  });
});
