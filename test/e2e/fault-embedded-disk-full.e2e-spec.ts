import type { Type } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import workerThreads from 'node:worker_threads';
import { Client } from 'pg';
import { EmbeddedDatabase } from '../../src/database/embedded/embedded-database';
import { MemoryRankIndex, SNAPSHOT_FILE } from '../../src/ranking/rank-index/memory-rank-index';
import { RankIndex } from '../../src/ranking/rank-index/rank-index';
import { onlinePlayer, TestPlayerSession } from '../factories/player.factory';
import { onlineServer, TestServerSession } from '../factories/server.factory';
import { defineCharts, gameplayPayload } from '../factories/upload.factory';
import { EMBEDDED_TEMPLATE_VAR, RUN_ID_VAR, TEST_TMP_ROOT, testDatabaseServerUrl } from '../setup/test-env';
import { HttpClient, HttpResponse } from '../support/http';
import { reportFaultTiming } from '../support/fault-timing';
import { LogCapture } from '../support/log-capture';
import { indexAgainstSql } from '../support/rank-index-check';
import { startServiceChild } from '../support/service-child';
import { ADMIN_TOKEN, startTestApp, TestApp, TestClients, testServiceEnv } from '../support/test-app';
import { mountTmpfs, Tmpfs, tmpfsUnavailable } from '../support/tmpfs';
import { eventually } from '../support/wait';

/**
 * The embedded database's data dir on a small tmpfs that really fills up (docs/operations.md
 * "Faults and recovery, measured"). Two ways a full disk hurts PostgreSQL: a data file that cannot
 * grow (53100, an ERROR: the statement is rolled back) and a WAL segment that cannot be created
 * (53100 as a PANIC: PGlite's one backend has exited and the next call into it never returned).
 * Runs in the pass without DATABASE_URL; needs root for `mount -t tmpfs` (CI has it).
 */
const skipped = testDatabaseServerUrl()
  ? 'the embedded database: runs in the pass without DATABASE_URL'
  : tmpfsUnavailable();
const describeWithTmpfs = skipped === null ? describe : describe.skip;

const OUT_OF_SPACE = {
  status: 503,
  body: { error: 'UNAVAILABLE', message: 'The database is out of resources (disk space, memory or connections)' },
  retryAfter: '5',
};
const NOT_READY = { status: 503, body: { error: 'UNAVAILABLE', message: 'Service unavailable' } };

/** A tmpfs of `sizeMiB` holding a copy of the run's migrated embedded database. */
function diskWithDatabase(sizeMiB: number): Tmpfs {
  const dir = join(TEST_TMP_ROOT, process.env[RUN_ID_VAR] as string, `disk-${randomBytes(4).toString('hex')}`);
  const disk = mountTmpfs(dir, sizeMiB);
  cpSync(process.env[EMBEDDED_TEMPLATE_VAR] as string, dir, { recursive: true });
  return disk;
}

/** A game server, a player and two charts; uploads of the player, each with its own payload.time. */
async function world(clients: TestClients) {
  const session: TestServerSession = await onlineServer(clients);
  const player: TestPlayerSession = await onlinePlayer(clients, session);
  await defineCharts(clients, [301, 302]);
  let time = Date.now() - 3_600_000;
  const acknowledged: number[] = [];
  const upload = async (acc = 90 + Math.random() * 10): Promise<HttpResponse> => {
    const at = (time += 1_000);
    const response = await clients.http.post(
      '/player/upload',
      {
        server: { serverID: session.serverID, serverName: 'disk', country: 'DE' },
        player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: at },
        payload: gameplayPayload(at % 2 === 0 ? 301 : 302, at, { acc: Math.round(acc * 100) / 100 }),
      },
      { token: session.accessToken },
    );
    if (response.status === 200) acknowledged.push(at);
    return response;
  };
  return { player, upload, acknowledged };
}

/** The player's stored records are exactly the acknowledged uploads (nothing of a refused one), and the rank index agrees with SQL. */
async function expectEveryAcknowledgedStored(app: TestApp, uid: number, acknowledged: number[]): Promise<void> {
  const stored = await app.sql<{ time_ms: string }>(
    'SELECT time_ms::text AS time_ms FROM play_record WHERE uid = $1 ORDER BY time_ms',
    [uid],
  );
  expect(stored.map((row) => Number(row.time_ms))).toEqual(acknowledged);
  // The index may still be repairing the changes of a write that failed after staging them (one
  // repair at a time, ranks from SQL meanwhile): wait for it, then compare.
  await eventually(
    async () => {
      const { index, sql } = await indexAgainstSql(app);
      return JSON.stringify(index) === JSON.stringify(sql);
    },
    'the rank index agreeing with SQL',
    30_000,
  ).catch(() => undefined);
  const { index, sql } = await indexAgainstSql(app);
  expect(index).toEqual(sql);
}

const answerOf = (response: HttpResponse) => ({
  status: response.status,
  body: response.body as unknown,
  retryAfter: response.headers.get('retry-after'),
});

/**
 * With the disk full, updates the rows of a table that leaves room in its pages (HOT updates: the
 * WAL grows, the data files do not) until the database fails, and returns that error: the PANIC of
 * a WAL segment that cannot be created.
 */
async function fillTheWal(disk: Tmpfs, run: (sql: string) => Promise<unknown>): Promise<unknown> {
  await run('CREATE TABLE fault_wal (id int PRIMARY KEY, v text) WITH (fillfactor = 10)');
  await run(`INSERT INTO fault_wal SELECT i, repeat('x', 1500) FROM generate_series(1, 200) AS i`);
  disk.fill();
  for (let i = 0; i < 1_000; i++) {
    const failure = await run('UPDATE fault_wal SET v = v').then(
      () => null,
      (error: unknown) => error,
    );
    if (failure !== null) {
      // What the failed segment had taken is free again: the disk stays full until the test frees it.
      disk.fill();
      return failure;
    }
  }
  return null;
}

describeWithTmpfs(
  skipped === null
    ? 'A full disk under the embedded database (a real tmpfs): 503 with Retry-After, readiness failing, recovery without a restart'
    : `A full disk under the embedded database (skipped: ${skipped})`,
  () => {
    /** What the test that runs opened, for the clean-up. */
    let openDisk: Tmpfs | null = null;
    let openApp: TestApp | null = null;
    /** The service in this process on a copy of the database on a 96 MiB tmpfs, with five uploads acknowledged. */
    async function startOnTmpfs() {
      const disk = (openDisk = diskWithDatabase(96));
      const logs = new LogCapture();
      const app = (openApp = await startTestApp({
        env: { DATABASE_URL: '', DATA_DIR: disk.dir, LOG_LEVEL: 'info' },
        redis: false,
        logDestination: logs,
      }));
      const uploads = await world(app);
      for (let i = 0; i < 5; i++) expect((await uploads.upload()).status).toBe(200);
      return { disk, app, logs, ...uploads };
    }

    afterEach(async () => {
      openDisk?.free();
      await openApp?.close().catch(() => undefined);
      openApp = null;
      openDisk?.unmount();
      openDisk = null;
    });

    it('answers 503 UNAVAILABLE with Retry-After (never 500) while data files cannot grow, fails readiness, keeps the rank index, and works again once space is back, snapshots included', async () => {
      const { disk, app, logs, player, upload, acknowledged } = await startOnTmpfs();
      // A fresh WAL segment (made while there is room): what fills up below is the data files.
      await app.sql('SELECT pg_switch_wal()');
      expect((await upload()).status).toBe(200);
      const index = app.get(RankIndex as unknown as Type<RankIndex>) as MemoryRankIndex;
      expect(index.kind).toBe('memory');

      disk.fill();
      const during = [];
      for (let i = 0; i < 60; i++) during.push(answerOf(await upload()));
      // What the pages of the tables had left takes a few dozen uploads; from then on every one is refused.
      const refused = during.filter((answer) => answer.status !== 200);
      expect(new Set(refused.map((answer) => JSON.stringify(answer)))).toEqual(new Set([JSON.stringify(OUT_OF_SPACE)]));
      expect(during.slice(-10)).toEqual(Array(10).fill(OUT_OF_SPACE));
      const ready = await app.http.get('/health/ready');
      expect({ status: ready.status, body: ready.body }).toEqual(NOT_READY);
      // Refused statements rolled back: the index was not touched, so it stays ready (no rebuild).
      expect((await index.stats()).ready).toBe(true);
      // A snapshot cannot be written now (the file system, or the room it leaves for the database, is full).
      await expect(index.saveSnapshot()).rejects.toMatchObject({ code: 'ENOSPC' });

      disk.free();
      const freed = Date.now();
      const first = answerOf(await upload(99));
      expect(first.status).toBe(200);
      reportFaultTiming('data files full: from the space back to the first acknowledged upload', Date.now() - freed);
      reportFaultTiming(`data files full: ${refused.length} of ${during.length} uploads refused`, 0);
      await eventually(async () => (await app.http.get('/health/ready')).status === 200, 'ready again', 30_000);
      reportFaultTiming('data files full: from the space back to ready', Date.now() - freed);
      // Snapshots were not switched off by the failure.
      const before = Date.now();
      await index.saveSnapshot();
      expect(statSync(join(disk.dir, SNAPSHOT_FILE)).mtimeMs).toBeGreaterThanOrEqual(before - 1_000);
      expect(logs.lines.some((line) => line.includes('Rank index snapshots are written again'))).toBe(true);

      await expectEveryAcknowledgedStored(app, player.uid, acknowledged);
    }, 180_000);

    it('starts the embedded database again in the process after a PANIC (no WAL segment could be created), once space is back', async () => {
      const { disk, app, logs, player, upload, acknowledged } = await startOnTmpfs();
      const panic = await fillTheWal(disk, (sql) => app.sql(sql));
      expect(panic).toMatchObject({ severity: 'PANIC', code: '53100' });
      expect(String((panic as Error).message)).toMatch(
        /could not write to file "pg_wal\/xlogtemp\.\d+": No space left on device/,
      );

      // The database is being started again, which cannot succeed while the disk is full.
      const during = answerOf(await upload());
      expect({
        status: during.status,
        error: (during.body as { error: string }).error,
        retryAfter: during.retryAfter,
      }).toEqual({
        status: 503,
        error: 'UNAVAILABLE',
        retryAfter: '5',
      });
      const ready = await app.http.get('/health/ready');
      expect({ status: ready.status, body: ready.body }).toEqual(NOT_READY);

      disk.free();
      const freed = Date.now();
      await eventually(async () => (await upload(99)).status === 200, 'an upload acknowledged again', 60_000);
      reportFaultTiming('WAL full (PANIC): from the space back to the first acknowledged upload', Date.now() - freed);
      await eventually(async () => (await app.http.get('/health/ready')).status === 200, 'ready again', 30_000);
      reportFaultTiming('WAL full (PANIC): from the space back to ready', Date.now() - freed);
      const lines = logs.lines.join('\n');
      expect(lines).toMatch(/The embedded database stopped \(PANIC 53100: could not write to file/);
      expect(lines).toMatch(/Embedded database started again in \d+ ms/);

      await expectEveryAcknowledgedStored(app, player.uid, acknowledged);
    }, 180_000);

    it('starts no database on the data dir once stopped while it waited for space to start again', async () => {
      const { disk, app, logs } = await startOnTmpfs();
      const panic = await fillTheWal(disk, (sql) => app.sql(sql));
      expect(panic).toMatchObject({ severity: 'PANIC', code: '53100' });
      await eventually(
        () => logs.lines.some((line) => line.includes('The embedded database waits for free space to start again')),
        'the restart waiting for space',
      );
      const started = jest.spyOn(workerThreads, 'Worker');
      try {
        await app.close();
        openApp = null;
        // The lock is let go; with room again, nothing of the stopped service may open the files.
        expect(existsSync(join(disk.dir, 'pglite.lock'))).toBe(false);
        disk.free();
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        expect(started).not.toHaveBeenCalled();
        expect(logs.lines.join('\n')).not.toMatch(/Embedded database started again/);
      } finally {
        started.mockRestore();
      }
    }, 180_000);

    it('exits with status 1 when the database cannot be started again within EMBEDDED_RECOVERY_SECONDS, and the next start finds every acknowledged write', async () => {
      const disk = (openDisk = diskWithDatabase(96));
      const env = { ...testServiceEnv(null), DATABASE_URL: '', DATA_DIR: disk.dir };
      const child = await startServiceChild({ ...env, EMBEDDED_RECOVERY_SECONDS: '3' });
      const baseUrl = `http://127.0.0.1:${child.port}`;
      const clients = { http: new HttpClient(baseUrl), admin: new HttpClient(baseUrl, ADMIN_TOKEN) };
      const { player, upload, acknowledged } = await world(clients);
      for (let i = 0; i < 5; i++) expect((await upload()).status).toBe(200);

      const sql = new Client({ connectionString: child.databaseUrl });
      sql.on('error', () => undefined);
      await sql.connect();
      const panic = await fillTheWal(disk, (text) => sql.query(text));
      await sql.end().catch(() => undefined);
      expect(panic).toMatchObject({ severity: 'PANIC', code: '53100' });
      const panicked = Date.now();
      expect(await child.exited).toBe(1);
      reportFaultTiming(
        'WAL full (PANIC), EMBEDDED_RECOVERY_SECONDS=3: from the PANIC to the exit',
        Date.now() - panicked,
      );

      // What an orchestrator does next: start it again (here once the disk has room). Its database
      // opens (crash recovery) with every acknowledged write.
      disk.free();
      expect(existsSync(join(disk.dir, 'pglite.lock'))).toBe(false);
      const freed = Date.now();
      const reopened = await EmbeddedDatabase.start(disk.dir);
      reportFaultTiming('after the exit: from the space back to the embedded database open again', Date.now() - freed);
      const check = new Client({ connectionString: reopened.url });
      try {
        await check.connect();
        const stored = await check.query<{ time_ms: string }>(
          'SELECT time_ms::text AS time_ms FROM play_record WHERE uid = $1 ORDER BY time_ms',
          [player.uid],
        );
        expect(stored.rows.map((row) => Number(row.time_ms))).toEqual(acknowledged);
      } finally {
        await check.end();
        await reopened.stop();
      }
    }, 180_000);
  },
);
