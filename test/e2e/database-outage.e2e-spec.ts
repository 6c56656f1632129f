import { Client, Pool } from 'pg';
import { SERVER_SESSION_CACHE_MS } from '../../src/auth/server-session.cache';
import { createPlayer, loginPlayer, onlinePlayer, TestPlayerSession } from '../factories/player.factory';
import { onlineServer, TestServer, TestServerSession } from '../factories/server.factory';
import { HttpResponse } from '../support/http';
import { reportFaultTiming } from '../support/fault-timing';
import { TcpProxy } from '../support/tcp-proxy';
import { startTestApp, TestApp } from '../support/test-app';
import { WsClient } from '../support/ws-client';
import { testDatabaseServerUrl } from '../setup/test-env';
import { eventually, sleep } from '../support/wait';
import { defineCharts, gameplayPayload } from '../factories/upload.factory';
import { PgDeliveryStore } from '../../src/webhooks/webhook-delivery-store';

const UNAVAILABLE = { error: 'UNAVAILABLE', message: 'The database cannot be reached' };
const READ_ONLY = { error: 'UNAVAILABLE', message: 'The database refuses writes (read-only)' };
/**
 * Uploads after a read-only database takes writes again must be accepted within this: well under
 * the pool's 10 s idle timeout, so a connection kept busy is not replaced by the pool for idling.
 */
const RECOVERY_MS = 5_000;
/**
 * A request against an unreachable database must fail, not wait: a refused connection fails at
 * once and a silent one after the 2 s connect timeout. This bound only separates "answers" from
 * "hangs until the 15 s query timeout or forever"; it is not a performance figure.
 */
const NO_HANG_MS = 10_000;

const postgres = testDatabaseServerUrl();
const describeOnPostgres = postgres ? describe : describe.skip;

describeOnPostgres(
  postgres
    ? 'PostgreSQL outage: 503 UNAVAILABLE at once, readiness failing, recovery without a restart'
    : 'PostgreSQL outage (skipped: needs DATABASE_URL; the embedded database runs inside the process and cannot become unreachable)',
  () => {
    let proxy: TcpProxy;
    let app: TestApp;
    let session: TestServerSession & { server: TestServer };
    let player: TestPlayerSession;

    /** payload.time of the plays: an hour ago (the `time` check flags older than 24 h). */
    const T0 = Date.now() - 3_600_000;

    /** Sends the request and records how long the answer took. */
    const timed = async (send: () => Promise<HttpResponse>) => {
      const started = Date.now();
      const response = await send();
      return { status: response.status, body: response.body as unknown, ms: Date.now() - started };
    };
    const economy = (wattHour: number) =>
      app.http.post(
        '/player/economy',
        { uid: player.uid, accessToken: player.accessToken, wattHour },
        { token: session.accessToken },
      );
    const upload = (levelID: number, acc: number, time: number, who: TestPlayerSession = player) =>
      app.http.post(
        '/player/upload',
        {
          server: { serverID: session.serverID, serverName: 'outage', country: 'DE' },
          player: { playerUID: who.uid, accessToken: who.accessToken, timestamp: time },
          payload: gameplayPayload(levelID, time, { acc }),
        },
        { token: session.accessToken },
      );

    beforeAll(async () => {
      const target = new URL(postgres as string);
      proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 5432) });
      app = await startTestApp({ databaseUrl: (url) => proxy.rewrite(url) });
      session = await onlineServer(app);
      player = await onlinePlayer(app, session);
      await defineCharts(app, [101, 102, 201]);
    });
    afterAll(async () => {
      await proxy?.restore();
      await app?.close();
      await proxy?.close();
    });

    it('answers 503 UNAVAILABLE without waiting while the database refuses connections, and recovers when it is back', async () => {
      expect((await economy(100)).status).toBe(200);
      expect((await upload(101, 95.5, T0)).status).toBe(200);
      await proxy.cut();

      // Token checks need the database: 503, never a 401 that would make the plugin log in again.
      const answers = {
        economy: await timed(() => economy(200)),
        baltop: await timed(() => app.http.get('/server/baltop', { token: session.accessToken })),
        upload: await timed(() => upload(102, 90, Date.now() - 60_000)),
        serverLogin: await timed(() =>
          app.http.post(
            '/server/login',
            { pluginVersion: 10, pluginSHA: 'sha-test' },
            { token: session.server.bootstrapToken },
          ),
        ),
        adminPlayer: await timed(() => app.admin.post('/admin/players', { username: 'during_outage' })),
      };
      for (const [name, answer] of Object.entries(answers)) {
        expect({ name, status: answer.status, body: answer.body }).toEqual({ name, status: 503, body: UNAVAILABLE });
        expect(answer.ms).toBeLessThan(NO_HANG_MS);
      }
      const ready = await timed(() => app.http.get('/health/ready'));
      expect({ status: ready.status, body: ready.body }).toEqual({
        status: 503,
        body: { error: 'UNAVAILABLE', message: 'Service unavailable' },
      });
      expect(ready.ms).toBeLessThan(NO_HANG_MS);
      // Liveness stays up: restarting the process would not bring the database back.
      expect((await app.http.get('/health')).status).toBe(200);
      // The WebSocket upgrade checks the token in the database too, once this instance's one-second
      // memo of the session (ServerSessionCache) has run out; within it the upgrade is accepted.
      await sleep(SERVER_SESSION_CACHE_MS + 500);
      expect(await WsClient.refused(app.baseUrl, session.accessToken)).toEqual({ status: 503, body: UNAVAILABLE });

      await proxy.restore();
      await eventually(
        async () => (await app.http.get('/health/ready')).status === 200,
        '/health/ready answers 200 again',
        60_000,
      );

      // Same process, same tokens: everything works again and is stored.
      expect((await economy(300)).body).toEqual({ uid: player.uid, wattHour: 300 });
      expect(
        await app.sql('SELECT watt_hour::int AS "wattHour" FROM player_balance WHERE uid = $1', [player.uid]),
      ).toEqual([{ wattHour: 300 }]);
      expect((await app.admin.post('/admin/players', { username: 'after_outage' })).status).toBe(201);
      const socket = await WsClient.connect(app.baseUrl, session.accessToken);
      socket.socket.terminate();
      // Nothing of the failed requests was written.
      expect(
        await app.sql('SELECT count(*)::int AS n FROM balance_history WHERE uid = $1 AND watt_hour = 200', [
          player.uid,
        ]),
      ).toEqual([{ n: 0 }]);
      expect(await app.sql(`SELECT count(*)::int AS n FROM player WHERE username = 'during_outage'`)).toEqual([
        { n: 0 },
      ]);
    });

    it('ranks stay exact through the outage, and the rank index takes its writer lock again without a restart', async () => {
      const other = await onlinePlayer(app, session);
      expect((await upload(201, 99, T0 + 10_000, other)).body).toMatchObject({ trackRank: 1 });
      await proxy.cut();
      expect((await upload(201, 50, T0 + 11_000)).status).toBe(503);
      await proxy.restore();
      await eventually(
        async () => (await app.http.get('/health/ready')).status === 200,
        '/health/ready answers 200 again',
        60_000,
      );

      // The rank index lost its writer lock (exclusive without Redis, shared with it) with the connection; it takes it again.
      await eventually(
        async () =>
          (
            await app.sql(
              `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = 727005 AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
            )
          )[0].n === 1,
        'the rank index writer lock is held again',
        60_000,
      );
      // A worse play on the chart ranks second, a better one first: the same figures as before the outage.
      expect((await upload(201, 50, T0 + 12_000)).body).toMatchObject({ trackRank: 2 });
      expect((await upload(201, 99.5, T0 + 13_000)).body).toMatchObject({ trackRank: 1, personalBest: true });
    });

    it('replaces pooled connections whose answers never come (their packets dropped), without a restart', async () => {
      // As many calls at once as the pool has connections (10), each a query of its own (no batching).
      const servers = () =>
        Promise.all(Array.from({ length: 12 }, () => timed(() => app.admin.get('/admin/servers?limit=1'))));
      expect((await servers()).map((answer) => answer.status)).toEqual(Array(12).fill(200));
      proxy.blackHoleOpen();
      // The calls that get one of the open connections wait out the 15 s query timeout; that
      // connection is then closed, not handed out again to wait behind an answer that never comes.
      const during = await servers();
      expect(during.filter((answer) => answer.status !== 200).length).toBeGreaterThan(0);
      for (const answer of during.filter((one) => one.status !== 200))
        expect({ status: answer.status, body: answer.body }).toEqual({ status: 503, body: UNAVAILABLE });
      // Every later call gets a working connection.
      expect((await servers()).map((answer) => answer.status)).toEqual(Array(12).fill(200));
      expect((await app.http.get('/health/ready')).status).toBe(200);
    }, 90_000);

    it('answers 503 after the connect timeout when the database does not answer at all (black-holed network)', async () => {
      const fresh = await createPlayer(app);
      await proxy.stall();
      // Let the pool notice that its open connections are gone: the request must open a new one.
      await sleep(500);
      try {
        const answer = await timed(() =>
          app.http.post(
            '/player/login',
            { mode: 'TOKEN', version: 1, authToken: fresh.netToken },
            { token: session.accessToken },
          ),
        );
        expect({ status: answer.status, body: answer.body }).toEqual({ status: 503, body: UNAVAILABLE });
        expect(answer.ms).toBeLessThan(NO_HANG_MS);
        const ready = await app.http.get('/health/ready');
        expect(ready.status).toBe(503);
      } finally {
        await proxy.restore();
      }
      await eventually(
        async () => (await app.http.get('/health/ready')).status === 200,
        '/health/ready answers 200 again',
        60_000,
      );
      expect((await loginPlayer(app, session, fresh)).uid).toBe(fresh.uid);
    });

    it('fails readiness and answers uploads 503 with Retry-After while the database refuses writes, and recovers by itself', async () => {
      const database = (await app.sql<{ name: string }>('SELECT current_database() AS name'))[0].name;
      // Set and reset from the server's maintenance database: a session opened while the database is
      // read-only could not reset it (ALTER DATABASE is refused in a read-only transaction).
      const onServer = async (text: string) => {
        const admin = new Client({ connectionString: postgres as string });
        await admin.connect();
        try {
          await admin.query(text);
        } finally {
          await admin.end();
        }
      };
      const readOnly = (on: boolean) =>
        onServer(
          on
            ? `ALTER DATABASE "${database}" SET default_transaction_read_only = on`
            : `ALTER DATABASE "${database}" RESET default_transaction_read_only`,
        );
      // Every session of the service ends; the ones its pool opens next start read-only.
      const endServiceSessions = () =>
        app.sql(
          'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
          [database],
        );
      const played = (levelID: number) =>
        app.sql('SELECT count(*)::int AS n FROM play_record WHERE uid = $1 AND level_id = $2', [player.uid, levelID]);
      await defineCharts(app, [301]);
      expect((await app.http.get('/health/ready')).status).toBe(200);

      await readOnly(true);
      try {
        await endServiceSessions();
        // The pool drops the connections that ended as they report it; its next ones start read-only.
        await sleep(500);
        const ready = await app.http.get('/health/ready');
        expect({ status: ready.status, body: ready.body }).toEqual({
          status: 503,
          body: { error: 'UNAVAILABLE', message: 'Service unavailable' },
        });
        const refused = await upload(301, 97, T0 + 20_000);
        expect({
          status: refused.status,
          body: refused.body,
          retryAfter: refused.headers.get('retry-after'),
        }).toEqual({ status: 503, body: READ_ONLY, retryAfter: '5' });
        const adminWrite = await app.admin.post('/admin/players', { username: 'during_read_only' });
        expect({ status: adminWrite.status, body: adminWrite.body }).toEqual({ status: 503, body: READ_ONLY });
        // Reads still answer (a read-only database is no outage for them); liveness stays up.
        expect((await app.admin.get('/admin/servers?limit=1')).status).toBe(200);
        expect((await app.http.get('/health')).status).toBe(200);
        expect(await played(301)).toEqual([{ n: 0 }]);
      } finally {
        await readOnly(false);
      }

      // Undone as ALTER DATABASE undoes it: the sessions opened meanwhile stay read-only, nothing
      // ends them. Writes one after another (no connection idles long enough for the pool to close
      // it): the service closes a connection that refused a write as read-only, so the next ones are
      // new sessions that take writes. No restart, no help from outside. First an admin write
      // (TypeORM's transaction), then an upload (the hot statements).
      const untilAccepted = async (what: string, send: () => Promise<HttpResponse>, accepted: number) => {
        const undone = Date.now();
        let answer = await send();
        const meanwhile: unknown[] = [];
        while (answer.status !== accepted && Date.now() - undone < RECOVERY_MS) {
          meanwhile.push({ status: answer.status, body: answer.body });
          await sleep(100);
          answer = await send();
        }
        for (const refusal of meanwhile) expect(refusal).toEqual({ status: 503, body: READ_ONLY });
        reportFaultTiming(
          `read-only undone: first ${what} accepted after ${meanwhile.length} refusals`,
          Date.now() - undone,
        );
        return answer;
      };
      const created = await untilAccepted(
        'admin write',
        () => app.admin.post('/admin/players', { username: 'after_read_only' }),
        201,
      );
      expect(created.status).toBe(201);
      const accepted = await untilAccepted('upload', () => upload(301, 97, T0 + 21_000), 200);
      expect({ status: accepted.status, body: accepted.body }).toMatchObject({
        status: 200,
        body: { trackRank: 1, personalBest: true },
      });
      const reset = Date.now();
      await eventually(
        async () => (await app.http.get('/health/ready')).status === 200,
        '/health/ready answers 200 again',
        60_000,
      );
      reportFaultTiming('read-only undone: /health/ready 200 again after the writes', Date.now() - reset);
      expect(await played(301)).toEqual([{ n: 1 }]);
      expect(await app.sql(`SELECT count(*)::int AS n FROM player WHERE username = 'during_read_only'`)).toEqual([
        { n: 0 },
      ]);
    });

    it("the webhook delivery thread's store closes a connection refused as read-only, so it claims again once writes are back", async () => {
      const database = (await app.sql<{ name: string }>('SELECT current_database() AS name'))[0].name;
      const onServer = async (text: string) => {
        const admin = new Client({ connectionString: postgres as string });
        await admin.connect();
        try {
          await admin.query(text);
        } finally {
          await admin.end();
        }
      };
      const url = new URL(postgres as string);
      url.pathname = `/${database}`;
      // One connection, as a busy pool keeps its idle ones: without the rule it would be reused.
      const pool = new Pool({ connectionString: url.toString(), max: 1, idleTimeoutMillis: 60_000 });
      const store = new PgDeliveryStore(pool);
      try {
        await onServer(`ALTER DATABASE "${database}" SET default_transaction_read_only = on`);
        try {
          await expect(store.claimDue(5, 30_000)).rejects.toMatchObject({ code: '25006' });
        } finally {
          await onServer(`ALTER DATABASE "${database}" RESET default_transaction_read_only`);
        }
        expect(await store.claimDue(5, 30_000)).toEqual([]);
        expect(pool.totalCount).toBe(1);
      } finally {
        await pool.end();
      }
    });
  },
);
