import { Client } from 'pg';
import { randomBytes } from 'node:crypto';
import { onlineServer, TestServerSession } from '../factories/server.factory';
import { onlinePlayer, TestPlayerSession } from '../factories/player.factory';
import { defineCharts, gameplayPayload } from '../factories/upload.factory';
import { freshDatabase, multiInstanceAvailable, startTestApp, TestApp } from '../support/test-app';
import {
  assertTestDatabaseName,
  RUN_ID_VAR,
  testDatabaseServerUrl,
  testPgBouncer,
  withAdminClient,
  withAddress,
  withDatabase,
} from '../setup/test-env';
import { RANK_INDEX_LOCK_KEY } from '../../src/ranking/rank-index/writer-lock';

/**
 * The service behind PgBouncer's transaction pooling (docs/operations.md "PgBouncer"): .ci/run
 * starts Debian's pgbouncer (1.18: no prepared statements in transaction mode) and names it in
 * RHYTHMC_TEST_PGBOUNCER; it then also runs the plugin-flow e2e files through it.
 */
const pgBouncer = testPgBouncer();
const serverUrl = testDatabaseServerUrl();
const describeWithPgBouncer = pgBouncer && serverUrl ? describe : describe.skip;

/** The pooler's statistics of one database: transactions it passed on (SHOW STATS, its admin console). */
async function pooledTransactions(database: string): Promise<number> {
  const admin = new Client({ connectionString: withAddress(withDatabase(serverUrl!, 'pgbouncer'), pgBouncer!) });
  await admin.connect();
  try {
    // The admin console speaks the simple protocol only.
    const { rows } = await admin.query<{ database: string; total_xact_count: string }>('SHOW STATS');
    return Number(rows.find((row) => row.database === database)?.total_xact_count ?? 0);
  } finally {
    await admin.end();
  }
}

const databaseOf = (url: string) => new URL(url).pathname.slice(1);

async function uploadOnce(app: TestApp, server: TestServerSession, player: TestPlayerSession, levelID: number) {
  const payload = gameplayPayload(levelID, Date.now() - 60_000);
  return app.http.post(
    '/player/upload',
    {
      player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: payload.time + 250 },
      server: { serverID: server.serverID, serverName: server.body.serverName as string, country: 'DE' },
      payload,
    },
    { token: server.accessToken },
  );
}

/** The backends holding the rank index's writer lock on `database`, and what they are doing. */
const writerLockHolders = (app: TestApp, database: string) =>
  app.sql<{ mode: string; state: string }>(
    `SELECT l.mode, a.state FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted AND l.objid = $1
        AND l.database = (SELECT oid FROM pg_database WHERE datname = $2)`,
    [RANK_INDEX_LOCK_KEY, database],
  );

describeWithPgBouncer(
  pgBouncer && serverUrl
    ? `Through PgBouncer in transaction mode (${pgBouncer})`
    : 'Through PgBouncer (skipped: needs DATABASE_URL and RHYTHMC_TEST_PGBOUNCER, which .ci/run sets)',
  () => {
    it('breaks a named prepared statement when its client lands on another server connection (why DATABASE_POOL_MODE=transaction turns them off)', async () => {
      const database = await freshDatabase();
      const pooled = withAddress(database.env.DATABASE_URL, pgBouncer!);
      const a = new Client({ connectionString: pooled });
      const b = new Client({ connectionString: pooled });
      await a.connect();
      await b.connect();
      try {
        // A new database: its pool has no server connection yet. a's statement is prepared on the first one…
        expect((await a.query({ name: 'probe', text: 'SELECT $1::int AS n', values: [1] })).rows).toEqual([{ n: 1 }]);
        // …which b's open transaction then holds, so a's next statement runs on a second one.
        await b.query('BEGIN');
        await b.query('SELECT 1');
        await expect(a.query({ name: 'probe', text: 'SELECT $1::int AS n', values: [2] })).rejects.toMatchObject({
          code: '26000',
          message: 'prepared statement "probe" does not exist',
        });
        await b.query('ROLLBACK');
      } finally {
        await a.end();
        await b.end();
        await database.drop();
      }
    });

    it('runs the plugin flow through the pooler, with the rank index lock held by an open transaction, released at stop', async () => {
      const app = await startTestApp({ redis: false });
      try {
        expect(app.config.databasePoolMode).toBe('transaction');
        expect(new URL(app.config.databaseUrl!).host).toBe(pgBouncer);
        const database = databaseOf(app.env.DATABASE_URL);
        const before = await pooledTransactions(database);

        await defineCharts(app, [11, 12]);
        const server = await onlineServer(app);
        const players = [await onlinePlayer(app, server), await onlinePlayer(app, server)];
        for (const player of players) {
          // Two calls at once go in one batched statement (the batcher's `_batch` statements, unnamed here).
          const sent = await Promise.all([11, 12].map((levelID) => uploadOnce(app, server, player, levelID)));
          expect(sent.map((response) => response.status)).toEqual([200, 200]);
        }
        const uids = players.map((player) => Number(player.uid)).sort((a, b) => a - b);
        expect(
          await app.sql<{ uid: number; plays: number }>(
            'SELECT uid::int AS uid, count(*)::int AS plays FROM play_record GROUP BY uid ORDER BY uid',
          ),
        ).toEqual(uids.map((uid) => ({ uid, plays: 2 })));
        const top = await app.http.get('/server/leaderboards/atp', { token: server.accessToken });
        expect(top.status).toBe(200);
        expect((top.body.entries as Array<{ uid: number }>).map((entry) => entry.uid).sort((a, b) => a - b)).toEqual(
          uids,
        );
        expect(await pooledTransactions(database)).toBeGreaterThan(before);

        // One backend holds the lock: a transaction's, kept open through the pooler; none while stopped.
        expect(await writerLockHolders(app, database)).toEqual([
          { mode: 'ExclusiveLock', state: 'idle in transaction' },
        ]);
        await app.restart(async () => expect(await writerLockHolders(app, database)).toEqual([]));
        expect(await writerLockHolders(app, database)).toEqual([
          { mode: 'ExclusiveLock', state: 'idle in transaction' },
        ]);
      } finally {
        await app.close();
      }
    });

    it('migrates a new database through the pooler without MIGRATION_DATABASE_URL, instances starting together taking turns', async () => {
      const runId = process.env[RUN_ID_VAR] as string;
      const name = `rhythmc_test_${runId}_pgb_${randomBytes(3).toString('hex')}`.toLowerCase();
      assertTestDatabaseName(name);
      await withAdminClient(serverUrl!, (admin) => admin.query(`CREATE DATABASE "${name}"`));
      const direct = withDatabase(serverUrl!, name);
      // Two instances need Redis (each takes the writer lock shared); without it, one.
      const count = multiInstanceAvailable() ? 2 : 1;
      const prefix = `rhythmc-test:${randomBytes(6).toString('hex')}:`;
      const apps: TestApp[] = [];
      try {
        const started = await Promise.allSettled(
          Array.from({ length: count }, () =>
            startTestApp({
              env: { DATABASE_URL: direct, MIGRATION_DATABASE_URL: '', REDIS_KEY_PREFIX: prefix },
              redis: count === 2,
            }),
          ),
        );
        for (const result of started) if (result.status === 'fulfilled') apps.push(result.value);
        expect(started.map((result) => result.status)).toEqual(Array(count).fill('fulfilled'));
        expect(apps[0].config.migrationDatabaseUrl).toBeNull();
        const template = await freshDatabase();
        const expected = await withAdminClient(template.env.DATABASE_URL, (client) =>
          client.query<{ name: string }>('SELECT name FROM migrations ORDER BY id'),
        ).finally(() => template.drop());
        const applied = await apps[0].sql<{ name: string }>('SELECT name FROM migrations ORDER BY id');
        expect(applied).toEqual(expected.rows);
        for (const app of apps) {
          const server = await onlineServer(app);
          expect(typeof (await onlinePlayer(app, server)).accessToken).toBe('string');
        }
      } finally {
        for (const app of apps) await app.close();
        await withAdminClient(serverUrl!, (admin) => admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
      }
    });
  },
);
