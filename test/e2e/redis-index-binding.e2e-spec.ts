import type { Type } from '@nestjs/common';
import Redis from 'ioredis';
import { execFileSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { RankIndex } from '../../src/ranking/rank-index/rank-index';
import { onlinePlayer, TestPlayerSession } from '../factories/player.factory';
import { onlineServer, TestServerSession } from '../factories/server.factory';
import { defineCharts, gameplayPayload } from '../factories/upload.factory';
import { Client } from 'pg';
import { RUN_ID_VAR, TEST_TMP_ROOT, testDatabaseServerUrl } from '../setup/test-env';
import { LogCapture } from '../support/log-capture';
import { indexAgainstSql, rankIndexMismatches } from '../support/rank-index-check';
import { RedisServer } from '../support/redis-server';
import { startTestApp, TestApp } from '../support/test-app';
import { eventually } from '../support/wait';

/**
 * The Redis rank index bound to its database (docs/decisions.md "A Redis index bound to its
 * database"): a service pointed at a Redis that holds an index built from other data (another
 * database, a restored copy, another deployment on the same prefix) must answer this database's
 * ranks. A private redis-server per file, so the test runs with and without REDIS_URL.
 */
const rankIndexOf = (app: TestApp) => app.get(RankIndex as unknown as Type<RankIndex>);

let clock = Date.now() - 3_600_000;

async function upload(
  app: TestApp,
  server: TestServerSession,
  player: TestPlayerSession,
  levelID: number,
  acc: number,
): Promise<{ siteRank: unknown; trackRank: unknown; personalBest: unknown }> {
  const time = (clock += 1_000);
  const response = await app.http.post(
    '/player/upload',
    {
      server: { serverID: server.serverID, serverName: 'binding', country: 'DE' },
      player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: time },
      payload: gameplayPayload(levelID, time, { acc }),
    },
    { token: server.accessToken },
  );
  if (response.status !== 200) throw new Error(`upload: ${response.status} ${response.text}`);
  const { siteRank, trackRank, personalBest } = response.body as Record<string, unknown>;
  return { siteRank, trackRank, personalBest };
}

/** This database's identity as the index records it: database_identity's id and the database's oid. */
async function identityOf(app: TestApp): Promise<string> {
  const [row] = await app.sql<{ id: string }>(
    `SELECT (SELECT id::text FROM database_identity) || '/' ||
            (SELECT oid::text FROM pg_database WHERE datname = current_database()) AS id`,
  );
  return row.id;
}

/** The Redis index itself (not the SQL fallback) answers every player's positions as SQL counts them. */
async function expectIndexAsSql(app: TestApp): Promise<void> {
  await eventually(async () => (await rankIndexOf(app).stats()).ready, 'the rank index answers from Redis');
  const { index, sql } = await indexAgainstSql(app);
  expect(index).toEqual(sql);
}

const messages = (logs: LogCapture, pattern: RegExp) =>
  logs
    .records()
    .map((record) => record.msg as unknown)
    .filter((msg): msg is string => typeof msg === 'string' && pattern.test(msg));

describe('the Redis rank index is bound to its database', () => {
  let redisServer: RedisServer;
  let redis: Redis;
  const apps: TestApp[] = [];

  /** A service on a database of its own; `recreated`: not a copy of the others' (see TestAppOptions). */
  const start = async (prefix: string, { logs, recreated = true }: { logs?: LogCapture; recreated?: boolean } = {}) => {
    const app = await startTestApp({
      env: { REDIS_URL: redisServer.url, REDIS_KEY_PREFIX: prefix, ...(logs ? { LOG_LEVEL: 'info' } : {}) },
      logDestination: logs,
      recreated,
    });
    apps.push(app);
    expect(rankIndexOf(app).kind).toBe('redis');
    return app;
  };
  const close = async (app: TestApp) => {
    apps.splice(apps.indexOf(app), 1);
    await app.close();
  };

  beforeAll(async () => {
    redisServer = await RedisServer.start();
    redis = new Redis(redisServer.url);
  });
  afterAll(async () => {
    for (const app of apps.splice(0)) await app.close();
    await redis?.quit();
    await redisServer?.stop();
  });

  it('is rebuilt for a fresh database started against an index built from another one', async () => {
    const prefix = `binding-${randomBytes(4).toString('hex')}:`;
    const first = await start(prefix);
    const firstId = await identityOf(first);
    await defineCharts(first, [701]);
    const s1 = await onlineServer(first);
    const [p1, p2] = [await onlinePlayer(first, s1), await onlinePlayer(first, s1)];
    expect(await upload(first, s1, p1, 701, 99)).toMatchObject({ siteRank: 1, trackRank: 1 });
    expect(await upload(first, s1, p2, 701, 97)).toMatchObject({ siteRank: 2, trackRank: 2 });
    await close(first);

    // Another database (a fresh clone: same uids, different data), the same Redis and prefix.
    const logs = new LogCapture();
    const second = await start(prefix, { logs });
    const secondId = await identityOf(second);
    expect(secondId).not.toBe(firstId);
    await defineCharts(second, [701]);
    const s2 = await onlineServer(second);
    const [q1, q2] = [await onlinePlayer(second, s2), await onlinePlayer(second, s2)];
    expect([q1.uid, q2.uid]).toEqual([p1.uid, p2.uid]);
    // Here uid 2 out-scores uid 1: the old index (uid 1 at 99, reached earlier) must not count.
    expect(await upload(second, s2, q2, 701, 99)).toEqual({ siteRank: 1, trackRank: 1, personalBest: true });
    expect(await upload(second, s2, q1, 701, 97)).toEqual({ siteRank: 2, trackRank: 2, personalBest: true });
    await expectIndexAsSql(second);

    expect(await rankIndexMismatches(second)).toEqual(['other_database 1']);
    expect(messages(logs, /does not match this database/)).toEqual([
      `The Redis rank index does not match this database (the index was built from database ${firstId}, this one is ${secondId}); generation 0 is replaced by 1, built from the tables (ranks from SQL meanwhile)`,
    ]);
    expect(await redis.get(`${prefix}rank3:gen`)).toBe('1');
    expect(await redis.hget(`${prefix}rank3:g1:db`, 'db')).toBe(secondId);
    // The other database's generation is deleted once the new one is built.
    await eventually(async () => (await redis.keys(`${prefix}rank3:s*`)).length === 0, 'generation 0 deleted');
    await close(second);
  });

  it('is rebuilt for a database restored from a backup older than the index', async () => {
    const prefix = `binding-${randomBytes(4).toString('hex')}:`;
    const logs = new LogCapture();
    const app = await start(prefix, { logs });
    const embedded = app.env.DATABASE_URL === '';
    const backup = join(TEST_TMP_ROOT, process.env[RUN_ID_VAR] as string, `backup-${randomBytes(4).toString('hex')}`);
    // The embedded database: its data dir copied while the service is stopped (docs/operations.md
    // "Backups"). PostgreSQL: pg_dump, and pg_restore --clean into the same database (same oid).
    const takeBackup = () => {
      if (embedded) cpSync(app.env.DATA_DIR, backup, { recursive: true });
      else execFileSync('pg_dump', ['--format=custom', `--file=${backup}`, `--dbname=${app.env.DATABASE_URL}`]);
    };
    const restoreBackup = () => {
      if (embedded) {
        rmSync(app.env.DATA_DIR, { recursive: true, force: true });
        cpSync(backup, app.env.DATA_DIR, { recursive: true });
      } else {
        execFileSync('pg_restore', [
          '--clean',
          '--if-exists',
          '--single-transaction',
          '--no-owner',
          `--dbname=${app.env.DATABASE_URL}`,
          backup,
        ]);
      }
    };
    try {
      await defineCharts(app, [702]);
      const server = await onlineServer(app);
      const [p1, p2] = [await onlinePlayer(app, server), await onlinePlayer(app, server)];
      expect(await upload(app, server, p1, 702, 97)).toMatchObject({ trackRank: 1 });
      expect(await upload(app, server, p2, 702, 95)).toMatchObject({ trackRank: 2 });
      await app.restart(takeBackup);
      // A plain restart finds its own index.
      expect(await rankIndexMismatches(app)).toEqual([]);

      // After the backup: p2 goes first. The index holds it; the backup does not.
      expect(await upload(app, server, p2, 702, 99)).toMatchObject({ siteRank: 1, trackRank: 1 });
      await app.restart(restoreBackup);

      expect(await rankIndexMismatches(app)).toEqual(['database_behind 1']);
      expect(messages(logs, /does not match this database/)).toEqual([
        expect.stringMatching(
          /^The Redis rank index does not match this database \(the index holds (version \d+, this database has drawn versions up to \d+|player \d+'s entry at version \d+, this database has version \d+ for that player) \(restored from a backup\?\)\); generation 0 is replaced by 1, built from the tables \(ranks from SQL meanwhile\)$/,
        ),
      ]);
      // The restored state: p1 97, p2 95.
      expect(await upload(app, server, p1, 702, 96)).toEqual({ siteRank: 1, trackRank: 1, personalBest: false });
      const p3 = await onlinePlayer(app, server);
      expect(await upload(app, server, p3, 702, 98)).toEqual({ siteRank: 1, trackRank: 1, personalBest: true });
      expect(await upload(app, server, p2, 702, 96)).toEqual({ siteRank: 3, trackRank: 3, personalBest: true });
      await expectIndexAsSql(app);
    } finally {
      rmSync(backup, { recursive: true, force: true });
      await close(app);
    }
  });

  // PostgreSQL only: the build is held by a lock another session takes (the embedded database has one session).
  (testDatabaseServerUrl() ? it : it.skip)(
    'is built while the service serves when it is missing at the start (a flushed Redis): the start does not wait for it',
    async () => {
      const prefix = `binding-${randomBytes(4).toString('hex')}:`;
      const logs = new LogCapture();
      const app = await startTestApp({
        env: { REDIS_URL: redisServer.url, REDIS_KEY_PREFIX: prefix, LOG_LEVEL: 'info' },
        logDestination: logs,
        rankIndexBuilt: false,
      });
      apps.push(app);
      await eventually(async () => (await rankIndexOf(app).stats()).ready, 'the first index is built');
      await defineCharts(app, [721]);
      const server = await onlineServer(app);
      const [p1, p2] = [await onlinePlayer(app, server), await onlinePlayer(app, server)];
      expect(await upload(app, server, p1, 721, 99)).toMatchObject({ siteRank: 1, trackRank: 1 });
      expect(await upload(app, server, p2, 721, 97)).toMatchObject({ siteRank: 2, trackRank: 2 });

      const blocker = new Client({ connectionString: app.env.DATABASE_URL });
      await blocker.connect();
      try {
        await app.restart(async () => {
          // Redis flushed while the service was down…
          const keys = await redis.keys(`${prefix}*`);
          expect(keys.length).toBeGreaterThan(0);
          await redis.del(...keys);
          // …and a build from the tables that cannot end yet: its read of the bests waits for this lock.
          await blocker.query('BEGIN');
          await blocker.query('LOCK TABLE player_chart_best IN ACCESS EXCLUSIVE MODE');
        });
        // The start returned with the build still waiting (not given up on: it used to be awaited
        // here, and the start came back only once the read timed out).
        expect(messages(logs, /rank index/i).slice(-1)).toEqual([
          'No Redis rank index yet; ranks are counted in SQL while the index is rebuilt',
        ]);
        await eventually(
          async () =>
            (
              await app.sql(
                `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%player_chart_best%' AND pid <> $1`,
                [(blocker as unknown as { processID: number }).processID],
              )
            ).length === 1,
          'the build waits for the bests',
        );
        expect(await rankIndexOf(app).stats()).toMatchObject({ ready: false });
        const ping = await app.http.get('/server/ping');
        expect([ping.status, ping.text]).toEqual([200, 'true']);
        expect(await redis.exists(`${prefix}rank3:ready`)).toBe(0);
      } finally {
        await blocker.query('ROLLBACK').catch(() => undefined);
        await blocker.end();
      }
      await eventually(
        async () => (await rankIndexOf(app).stats()).ready,
        'the index is built once the tables can be read',
      );
      expect(await upload(app, server, p2, 721, 99.5)).toEqual({ siteRank: 1, trackRank: 1, personalBest: true });
      await expectIndexAsSql(app);
      await close(app);
    },
  );

  it('is left alone by a running instance that finds another deployment took the prefix over', async () => {
    const prefix = `binding-${randomBytes(4).toString('hex')}:`;
    const mine = await start(prefix);
    await defineCharts(mine, [711]);
    const s1 = await onlineServer(mine);
    const [p1, p2, p3] = [await onlinePlayer(mine, s1), await onlinePlayer(mine, s1), await onlinePlayer(mine, s1)];
    expect(await upload(mine, s1, p1, 711, 99)).toMatchObject({ trackRank: 1 });
    expect(await upload(mine, s1, p2, 711, 97)).toMatchObject({ trackRank: 2 });

    // Another deployment (its own database) starts on the same prefix: it builds its own index.
    // Nest's Logger is one per process: from here on both services write to the last one's logs.
    const logs = new LogCapture();
    const other = await start(prefix, { logs });
    await defineCharts(other, [711]);
    const s2 = await onlineServer(other);
    const theirs: TestPlayerSession[] = [];
    for (let i = 0; i < 5; i++) theirs.push(await onlinePlayer(other, s2));
    expect(await upload(other, s2, theirs[3], 711, 100)).toMatchObject({ trackRank: 1 });
    expect(await upload(other, s2, theirs[4], 711, 100)).toMatchObject({ trackRank: 2 });
    await eventually(async () => (await redis.exists(`${prefix}rank3:ready`)) === 0, 'generation 0 replaced');

    // The running instance answers its own database's ranks (from SQL) and stays out of the other index.
    expect(await upload(mine, s1, p3, 711, 98)).toEqual({ siteRank: 2, trackRank: 2, personalBest: true });
    await eventually(async () => (await rankIndexMismatches(mine)).includes('conflict 1'), 'the conflict is counted');
    expect(await rankIndexOf(mine).stats()).toMatchObject({ ready: false });
    expect(await upload(mine, s1, p2, 711, 98.5)).toEqual({ siteRank: 2, trackRank: 2, personalBest: true });
    expect(await rankIndexMismatches(mine)).toEqual(['conflict 1']);
    expect(messages(logs, /another deployment shares the prefix/)).toHaveLength(1);
    // The other deployment's index is intact and still its own.
    expect(await redis.hget(`${prefix}rank3:g1:db`, 'db')).toBe(await identityOf(other));
    expect(await upload(other, s2, theirs[2], 711, 99)).toEqual({ siteRank: 3, trackRank: 3, personalBest: true });
    await expectIndexAsSql(other);
    await close(other);
    await close(mine);
  });
});
