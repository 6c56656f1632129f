import { Client } from 'pg';
import { onlinePlayer, TestPlayerSession } from '../factories/player.factory';
import { onlineServer, TestServerSession } from '../factories/server.factory';
import { defineCharts, gameplayPayload } from '../factories/upload.factory';
import { testDatabaseServerUrl } from '../setup/test-env';
import { LogCapture } from '../support/log-capture';
import { PrivatePostgres } from '../support/private-postgres';
import { startTestApp, TestApp } from '../support/test-app';
import { eventually, sleep } from '../support/wait';
import { WsClient } from '../support/ws-client';

/**
 * DATABASE_READ_URL on a real streaming replica (docs/decisions.md "Read replica"): a private
 * primary of this test (its own port and data dir; the shared server's pg_hba has no replication
 * entry) and a hot standby made from it with pg_basebackup -R. Runs in the pass with DATABASE_URL
 * (the PostgreSQL pass): the embedded database has no replica.
 */
const skipped = !testDatabaseServerUrl()
  ? 'a streaming replica of a PostgreSQL: runs in the pass with DATABASE_URL (the embedded database has none)'
  : PrivatePostgres.unavailable();
const describeWithReplica = skipped === null ? describe : describe.skip;

/**
 * The lag bound of the test: checks every second (a quarter of it, at most 1 s). Wide enough that
 * the reads "under the bound" finish within it on a loaded machine.
 */
const MAX_LAG_SECONDS = 8;
const LEVEL = 501;

describeWithReplica(
  skipped === null
    ? 'Read replica (DATABASE_READ_URL): lagged reads from a streaming standby within the bound, the primary otherwise'
    : `Read replica (skipped: ${skipped})`,
  () => {
    let primary: PrivatePostgres;
    let standby: PrivatePostgres;
    let app: TestApp;
    let server: TestServerSession;
    let players: TestPlayerSession[];
    const logs = new LogCapture();
    let time = Date.now() - 3_600_000;

    const standbySql = async <T extends Record<string, unknown>>(text: string): Promise<T[]> => {
      const client = new Client({ connectionString: standby.url() });
      await client.connect();
      try {
        return (await client.query<T>(text)).rows;
      } finally {
        await client.end();
      }
    };
    const upload = async (player: TestPlayerSession, acc: number) => {
      const at = (time += 1_000);
      const response = await app.http.post(
        '/player/upload',
        {
          server: { serverID: server.serverID, serverName: 'replica', country: 'DE' },
          player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: at },
          payload: gameplayPayload(LEVEL, at, { acc }),
        },
        { token: server.accessToken },
      );
      expect(response.status).toBe(200);
      return response.body as { trackRank: number | null; siteRank: number | null };
    };
    const board = async (): Promise<number[]> => {
      const response = await app.http.get(`/server/leaderboards/charts/${LEVEL}?limit=10`, {
        token: server.accessToken,
      });
      expect(response.status).toBe(200);
      return (response.body as { entries: Array<{ uid: number }> }).entries.map((entry) => entry.uid);
    };
    const metric = async (line: string): Promise<number> => {
      const text = (await app.http.get('/metrics', { token: null })).text;
      const found = text.split('\n').find((each) => each.startsWith(`${line} `));
      return found === undefined ? NaN : Number(found.slice(line.length + 1));
    };
    const inUse = () => metric('rhythmc_db_read_replica_in_use');
    const replicaReads = () => metric('rhythmc_db_lagged_reads_total{target="replica"}');
    const primaryReads = () => metric('rhythmc_db_lagged_reads_total{target="primary"}');
    const logged = (text: string) => logs.records().some((record) => String(record.msg).includes(text));

    const start = (env: Record<string, string> = {}) =>
      startTestApp({
        env: {
          DATABASE_URL: primary.url(),
          DATABASE_READ_URL: standby.url(),
          DATABASE_READ_MAX_LAG_SECONDS: String(MAX_LAG_SECONDS),
          DATABASE_READ_POOL_SIZE: '3',
          LOG_LEVEL: 'info',
          ...env,
        },
        redis: false,
        logDestination: logs,
      });

    beforeAll(async () => {
      primary = await PrivatePostgres.create({ settings: { fsync: 'off' } });
      standby = await PrivatePostgres.standbyOf(primary, { settings: { fsync: 'off' } });
      app = await start();
      server = await onlineServer(app);
      players = [await onlinePlayer(app, server), await onlinePlayer(app, server), await onlinePlayer(app, server)];
      await defineCharts(app, [LEVEL]);
    }, 180_000);
    // A test that failed with replay paused does not leave the next one a paused replica.
    afterEach(async () => {
      await standbySql('SELECT pg_wal_replay_resume()').catch(() => undefined);
    });
    afterAll(async () => {
      await app?.close();
      await standby?.destroy();
      await primary?.destroy();
    });

    it('reads boards from the standby: it is one, and replays the primary', async () => {
      await eventually(async () => (await inUse()) === 1, 'reads go to the replica');
      await eventually(() => logged('Reads go to the replica ('), 'the first check logged', 5_000);
      const [{ standby: isStandby }] = await standbySql<{ standby: boolean }>('SELECT pg_is_in_recovery() AS standby');
      expect(isStandby).toBe(true);

      await upload(players[0], 90);
      await eventually(async () => (await board()).includes(players[0].uid), 'the first best on the board');
      const before = await replicaReads();
      expect(await board()).toEqual([players[0].uid]);
      expect(await replicaReads()).toBe(before + 1);
      // An idle primary writes no WAL: the replica stays within the bound however long nothing happens.
      await sleep(MAX_LAG_SECONDS * 1_000 + 1_500);
      expect(await inUse()).toBe(1);
      expect(await metric('rhythmc_db_read_replica_lag_seconds')).toBeLessThan(MAX_LAG_SECONDS);
      expect(await board()).toEqual([players[0].uid]);
    }, 60_000);

    it('with replay paused: the replica answers its older board while under the bound, the primary once over it; back to the replica when it catches up', async () => {
      await eventually(async () => (await inUse()) === 1, 'reads go to the replica');
      const listening = await WsClient.connect(app.baseUrl, server.accessToken);
      expect(await listening.request('board_updates', { enabled: true })).toEqual({
        event: 'board_updates',
        data: { enabled: true },
      });
      const hints = () => listening.frames.filter((frame) => frame.event === 'board_update');
      await standbySql('SELECT pg_wal_replay_pause()');
      const paused = Date.now();

      // The upload answers from the primary and the rank index: its own rank is the new one.
      const answer = await upload(players[1], 99);
      expect(answer.trackRank).toBe(1);
      const [{ count }] = await app.sql<{ count: string }>(
        'SELECT count(*) FROM player_chart_best WHERE level_id = $1',
        [LEVEL],
      );
      expect(count).toBe('2');
      const [{ count: onStandby }] = await standbySql<{ count: string }>(
        `SELECT count(*) FROM player_chart_best WHERE level_id = ${LEVEL}`,
      );
      expect(onStandby).toBe('1');

      // Under the bound the board is the replica's: without the new best (the primary has it).
      const replicaBefore = await replicaReads();
      expect(await board()).toEqual([players[0].uid]);
      expect(Date.now() - paused).toBeLessThan(MAX_LAG_SECONDS * 1_000);
      expect(await replicaReads()).toBe(replicaBefore + 1);
      // The board hint waits until a read would see the new best: not while the replica lacks it.
      await sleep(500);
      expect(hints()).toEqual([]);
      expect(Date.now() - paused).toBeLessThan(MAX_LAG_SECONDS * 1_000);
      // A window around a player reads the primary (the rank index's state): the new best is there.
      const around = await app.http.get(`/server/leaderboards/charts/${LEVEL}?around=${players[1].uid}&k=1`, {
        token: server.accessToken,
      });
      expect(around.status).toBe(200);
      expect(around.body).toMatchObject({ rank: 1, entries: [{ uid: players[1].uid }, { uid: players[0].uid }] });

      // Over the bound: the primary answers, the switch is logged and the metric says so.
      await eventually(async () => (await inUse()) === 0, 'reads leave the replica over the bound', 20_000);
      expect(Date.now() - paused).toBeGreaterThanOrEqual(MAX_LAG_SECONDS * 1_000 - 1_000);
      // The lag grows with the clock between checks (the metric reads it so); the next check logs the switch.
      await eventually(
        () => logged(`over DATABASE_READ_MAX_LAG_SECONDS=${MAX_LAG_SECONDS}`),
        'the switch to the primary logged',
        5_000,
      );
      const primaryBefore = await primaryReads();
      expect(await board()).toEqual([players[1].uid, players[0].uid]);
      expect(await primaryReads()).toBe(primaryBefore + 1);
      expect(await metric('rhythmc_db_read_replica_lag_seconds')).toBeGreaterThan(MAX_LAG_SECONDS);
      // The hint went out once reads left the replica: a game server that reads on it sees the best.
      await listening.next((frame) => frame.event === 'board_update', 5_000);
      expect(hints()).toEqual([{ event: 'board_update', data: { atp: true, levelIds: [LEVEL], top: 10 } }]);
      listening.socket.close();

      await standbySql('SELECT pg_wal_replay_resume()');
      await eventually(async () => (await inUse()) === 1, 'reads return to the replica once it caught up', 20_000);
      await eventually(() => logged('Reads go to the replica again'), 'the return logged', 5_000);
      const replicaAfter = await replicaReads();
      expect(await board()).toEqual([players[1].uid, players[0].uid]);
      expect(await replicaReads()).toBe(replicaAfter + 1);
    }, 90_000);

    it('with the replica stopped, reads are answered by the primary at once; started again, it is read again', async () => {
      await eventually(async () => (await inUse()) === 1, 'reads go to the replica');
      await standby.stop('fast');
      try {
        await upload(players[2], 95);
        // The first read finds the replica gone and runs again on the primary: no error, the current board.
        expect(await board()).toEqual([players[1].uid, players[2].uid, players[0].uid]);
        await eventually(async () => (await inUse()) === 0, 'the replica left');
        await eventually(
          () => logged('Reads go to the primary: the replica is unreachable'),
          'the switch to the primary logged',
          5_000,
        );
        const primaryBefore = await primaryReads();
        expect(await board()).toEqual([players[1].uid, players[2].uid, players[0].uid]);
        expect(await primaryReads()).toBe(primaryBefore + 1);
        // Readiness is the primary's: a replica alone does not fail it.
        expect((await app.http.get('/health/ready', { token: null })).status).toBe(200);
      } finally {
        await standby.start();
      }
      await eventually(async () => (await inUse()) === 1, 'reads return to the started replica', 30_000);
      const replicaBefore = await replicaReads();
      expect(await board()).toEqual([players[1].uid, players[2].uid, players[0].uid]);
      expect(await replicaReads()).toBe(replicaBefore + 1);
    }, 90_000);

    it('with DATABASE_POOL_MODE=transaction (no named statements, as behind PgBouncer) reads the replica the same way', async () => {
      await app.close();
      app = await start({ DATABASE_POOL_MODE: 'transaction' });
      await eventually(async () => (await inUse()) === 1, 'reads go to the replica');
      const before = await replicaReads();
      expect(await board()).toEqual([players[1].uid, players[2].uid, players[0].uid]);
      expect(await replicaReads()).toBe(before + 1);
      const [{ connections }] = await standbySql<{ connections: string }>(
        "SELECT count(*) AS connections FROM pg_stat_activity WHERE application_name = 'rhythmc-backend-read'",
      );
      // The replica's own pool, named apart from the primary's.
      expect(Number(connections)).toBeGreaterThan(0);
    }, 90_000);
  },
);
