import type { Type } from '@nestjs/common';
import { RankIndex } from '../../src/ranking/rank-index/rank-index';
import { onlinePlayer, TestPlayerSession } from '../factories/player.factory';
import { onlineServer, TestServerSession } from '../factories/server.factory';
import { defineCharts, gameplayPayload } from '../factories/upload.factory';
import { testDatabaseServerUrl } from '../setup/test-env';
import { reportFaultTiming } from '../support/fault-timing';
import { LogCapture } from '../support/log-capture';
import { PrivatePostgres } from '../support/private-postgres';
import { indexAgainstSql } from '../support/rank-index-check';
import { startTestApp, TestApp } from '../support/test-app';
import { eventually, sleep } from '../support/wait';

/**
 * A PostgreSQL stopped for real (pg_ctl stop -m fast, then start) under upload and balance load,
 * on a private cluster of this test (its own port and data dir; the shared server is untouched).
 * One instance without Redis: the in-process rank index, whose writes failed during the stop.
 * Runs in the pass with DATABASE_URL (the PostgreSQL pass); needs Debian's initdb and pg_ctl.
 */
const skipped = !testDatabaseServerUrl()
  ? 'a PostgreSQL of its own: runs in the pass with DATABASE_URL'
  : PrivatePostgres.unavailable();
const describeWithPostgres = skipped === null ? describe : describe.skip;

const STOPPED_MS = 5_000;
const WORKERS = 4;

interface Answer {
  kind: 'upload' | 'economy';
  at: number;
  status: number;
  body: unknown;
  retryAfter: string | null;
}

describeWithPostgres(
  skipped === null
    ? 'PostgreSQL stopped and started under load (a private cluster): 503 with Retry-After, readiness failing, one rank-index repair, nothing acknowledged lost'
    : `PostgreSQL stopped and started under load (skipped: ${skipped})`,
  () => {
    let cluster: PrivatePostgres;
    let app: TestApp;
    const logs = new LogCapture();
    let session: TestServerSession;
    let players: TestPlayerSession[];

    beforeAll(async () => {
      cluster = await PrivatePostgres.create({ settings: { fsync: 'off' } });
      app = await startTestApp({
        env: { DATABASE_URL: cluster.url(), LOG_LEVEL: 'info' },
        redis: false,
        logDestination: logs,
      });
      session = await onlineServer(app);
      players = [];
      for (let i = 0; i < WORKERS * 2; i++) players.push(await onlinePlayer(app, session));
      await defineCharts(app, [401, 402, 403]);
    }, 120_000);
    afterAll(async () => {
      await cluster?.start().catch(() => undefined);
      await app?.close();
      await cluster?.destroy();
    });

    it('answers 503 UNAVAILABLE with Retry-After while it is down, needs no restart, repairs the rank index without a full load, and loses no acknowledged write', async () => {
      const answers: Answer[] = [];
      const acknowledgedUploads = new Map<string, number[]>();
      const acknowledgedBalances = new Map<string, number>();
      let running = true;
      let time = Date.now() - 3_600_000;
      const worker = async (player: TestPlayerSession) => {
        for (let n = 0; running; n++) {
          const at = (time += 1_000);
          if (n % 3 === 2) {
            const wattHour = n;
            const response = await app.http.post(
              '/player/economy',
              { uid: player.uid, accessToken: player.accessToken, wattHour },
              { token: session.accessToken },
            );
            answers.push({
              kind: 'economy',
              at: Date.now(),
              status: response.status,
              body: response.body,
              retryAfter: response.headers.get('retry-after'),
            });
            if (response.status === 200) acknowledgedBalances.set(String(player.uid), wattHour);
          } else {
            const response = await app.http.post(
              '/player/upload',
              {
                server: { serverID: session.serverID, serverName: 'pg-stop', country: 'DE' },
                player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: at },
                payload: gameplayPayload(401 + (n % 3), at, { acc: 80 + ((n * 7) % 20) }),
              },
              { token: session.accessToken },
            );
            answers.push({
              kind: 'upload',
              at: Date.now(),
              status: response.status,
              body: response.body,
              retryAfter: response.headers.get('retry-after'),
            });
            if (response.status === 200)
              acknowledgedUploads.set(String(player.uid), [...(acknowledgedUploads.get(String(player.uid)) ?? []), at]);
          }
          await sleep(20);
        }
      };
      const load = players.slice(0, WORKERS).map((player) => worker(player));
      const loadedFrom = logs.lines.length;

      await sleep(1_500);
      await cluster.stop('fast');
      const stoppedAt = Date.now();
      await sleep(1_000);
      const readyWhileDown = await app.http.get('/health/ready');
      await sleep(STOPPED_MS - 1_000);
      // The fault ends when the start begins (the server accepts connections before pg_ctl sees it).
      const startedAt = Date.now();
      await cluster.start();
      await eventually(
        () => Promise.resolve(answers.some((answer) => answer.at > startedAt && answer.status === 200)),
        'a write acknowledged after the start',
        30_000,
      );
      const firstAfter = Math.min(
        ...answers.filter((answer) => answer.at > startedAt && answer.status === 200).map((answer) => answer.at),
      );
      reportFaultTiming('PostgreSQL stopped: from the start to the first acknowledged write', firstAfter - startedAt);
      await sleep(2_000);
      running = false;
      await Promise.all(load);
      reportFaultTiming(
        `PostgreSQL stopped: ${answers.filter((answer) => answer.status !== 200).length} of ${answers.length} calls answered 503`,
        0,
      );

      // What the plugin saw: 200, or 503 UNAVAILABLE with Retry-After; never a 500 or a 401.
      const failed = answers.filter((answer) => answer.status !== 200);
      expect(failed.length).toBeGreaterThan(0);
      for (const answer of failed) {
        expect({
          status: answer.status,
          error: (answer.body as { error?: string }).error,
          retryAfter: answer.retryAfter,
        }).toEqual({
          status: 503,
          error: 'UNAVAILABLE',
          retryAfter: '5',
        });
      }
      expect(
        answers.filter((answer) => answer.at > stoppedAt && answer.at < startedAt && answer.status === 200),
      ).toEqual([]);
      expect({ status: readyWhileDown.status, body: readyWhileDown.body }).toEqual({
        status: 503,
        body: { error: 'UNAVAILABLE', message: 'Service unavailable' },
      });
      await eventually(async () => (await app.http.get('/health/ready')).status === 200, 'ready again', 30_000);

      // Nothing acknowledged was lost: every upload and the last acknowledged balance of each player.
      for (const [uid, times] of acknowledgedUploads) {
        const stored = await app.sql<{ time_ms: string }>(
          'SELECT time_ms::text AS time_ms FROM play_record WHERE uid = $1 ORDER BY time_ms',
          [uid],
        );
        expect({ uid, missing: times.filter((at) => !stored.some((row) => Number(row.time_ms) === at)) }).toEqual({
          uid,
          missing: [],
        });
      }
      for (const [uid, wattHour] of acknowledgedBalances) {
        const balance = await app.sql<{ watt_hour: number }>(
          'SELECT watt_hour::int AS watt_hour FROM player_balance WHERE uid = $1',
          [uid],
        );
        expect({ uid, balance: balance[0]?.watt_hour }).toEqual({ uid, balance: wattHour });
      }

      // The rank index was repaired (re-reading the players changed meanwhile), never loaded whole,
      // and answers as SQL counts.
      const rankIndex = app.get(RankIndex as unknown as Type<RankIndex>);
      await eventually(async () => (await rankIndex.stats()).ready, 'the rank index answers again', 30_000);
      reportFaultTiming('PostgreSQL stopped: from the start to the rank index answering again', Date.now() - startedAt);
      const since = logs.lines.slice(loadedFrom);
      expect(since.filter((line) => line.includes('Rank index loaded from the tables'))).toEqual([]);
      const repairs = since.filter((line) => line.includes('Rank index repaired'));
      expect(repairs.length).toBeGreaterThanOrEqual(1);
      expect(repairs.length).toBeLessThanOrEqual(3);
      const { index, sql } = await indexAgainstSql(app);
      expect(index).toEqual(sql);
    }, 120_000);
  },
);
