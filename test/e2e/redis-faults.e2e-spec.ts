import type { Type } from '@nestjs/common';
import Redis from 'ioredis';
import { randomBytes } from 'node:crypto';
import { RankIndex } from '../../src/ranking/rank-index/rank-index';
import { onlinePlayer, TestPlayerSession } from '../factories/player.factory';
import { onlineServer, TestServerSession } from '../factories/server.factory';
import { defineCharts, gameplayPayload } from '../factories/upload.factory';
import { testDatabaseServerUrl } from '../setup/test-env';
import { reportFaultTiming } from '../support/fault-timing';
import { indexAgainstSql, rankIndexMismatches } from '../support/rank-index-check';
import { RedisServer } from '../support/redis-server';
import { TcpProxy } from '../support/tcp-proxy';
import { startTestApp, TestApp } from '../support/test-app';
import { REDIS } from '../../src/common/redis/redis.module';
import { eventually, sleep } from '../support/wait';
import { WsClient } from '../support/ws-client';

/**
 * Redis killed for real (SIGKILL of a private redis-server) and started again on the same port:
 * uploads keep their exact ranks meanwhile, the rank index is trusted again only when it is this
 * database's and complete, and kicks of bans made during the outage reach the game server on the
 * other instance once Redis is back (docs/decisions.md "Realtime", "Redis down"). The private
 * server runs in both test runs; the two-instance cases need PostgreSQL.
 */
const rankIndexOf = (app: TestApp) => app.get(RankIndex as unknown as Type<RankIndex>);
const twoInstances = testDatabaseServerUrl() !== null;
/** How long Redis stays dead (RHYTHMC_FAULT_OUTAGE_MS, for measuring: ioredis waits longer between attempts as an outage goes on). */
const OUTAGE_MS = Number(process.env.RHYTHMC_FAULT_OUTAGE_MS ?? 0);

let clock = Date.now() - 3_600_000;

async function upload(
  app: TestApp,
  server: TestServerSession,
  player: TestPlayerSession,
  levelID: number,
  acc: number,
): Promise<{ status: number; siteRank: unknown; trackRank: unknown }> {
  const time = (clock += 1_000);
  const response = await app.http.post(
    '/player/upload',
    {
      server: { serverID: server.serverID, serverName: 'faults', country: 'DE' },
      player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: time },
      payload: gameplayPayload(levelID, time, { acc }),
    },
    { token: server.accessToken },
  );
  return { status: response.status, siteRank: response.body?.siteRank, trackRank: response.body?.trackRank };
}

/** The Redis index itself (not the SQL fallback) answers every player's positions as SQL counts them. */
async function expectIndexAsSql(app: TestApp): Promise<void> {
  await eventually(async () => (await rankIndexOf(app).stats()).ready, 'the rank index answers from Redis');
  const { index, sql } = await indexAgainstSql(app);
  expect(index).toEqual(sql);
}

/** Waits until the rank index answers from Redis again; answers how long that took. */
async function indexBack(app: TestApp): Promise<number> {
  const started = Date.now();
  await eventually(async () => (await rankIndexOf(app).stats()).ready, 'the rank index answers from Redis again');
  return Date.now() - started;
}

describe('Redis killed and started again', () => {
  let redisServer: RedisServer;
  let redis: Redis;

  beforeAll(async () => {
    redisServer = await RedisServer.start();
    redis = new Redis(redisServer.url, { lazyConnect: true, maxRetriesPerRequest: 1, disconnectTimeout: 100 });
  });
  afterAll(async () => {
    // ioredis arms a timer on disconnect until the stream closes (2 s by default): with the
    // server killed it never closes, a handle that kept the Jest worker alive (disconnectTimeout).
    redis?.disconnect();
    await redisServer?.stop();
  });

  const start = (env: Record<string, string> = {}) =>
    startTestApp({
      env: { REDIS_URL: redisServer.url, REDIS_KEY_PREFIX: `faults-${randomBytes(4).toString('hex')}:`, ...env },
    });

  it('keeps exact ranks while Redis is dead, and builds the index again once it is back empty', async () => {
    const app = await start();
    try {
      await defineCharts(app, [801]);
      const server = await onlineServer(app);
      const players: TestPlayerSession[] = [];
      for (let i = 0; i < 4; i++) players.push(await onlinePlayer(app, server));
      expect(await upload(app, server, players[0], 801, 99)).toMatchObject({ status: 200, trackRank: 1 });
      expect(await upload(app, server, players[1], 801, 97)).toMatchObject({ status: 200, trackRank: 2 });

      await redisServer.kill();
      expect(await upload(app, server, players[2], 801, 98)).toEqual({ status: 200, siteRank: 2, trackRank: 2 });
      expect(await rankIndexOf(app).stats()).toMatchObject({ ready: false });

      await sleep(OUTAGE_MS);
      await redisServer.restart();
      const restarted = Date.now();
      reportFaultTiming('Redis restarted empty, until the index answers again', await indexBack(app));
      const first = Date.now();
      expect(await upload(app, server, players[3], 801, 96)).toEqual({ status: 200, siteRank: 4, trackRank: 4 });
      reportFaultTiming('Redis restarted empty, until the first upload after it is answered', Date.now() - first);
      reportFaultTiming('Redis restarted empty, index rebuilt in', first - restarted);
      await expectIndexAsSql(app);
      // An empty Redis is not a mismatch: the index is simply built.
      expect(await rankIndexMismatches(app)).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('does not trust an index that a restarted Redis loaded from an older save', async () => {
    const app = await start();
    try {
      await defineCharts(app, [802]);
      const server = await onlineServer(app);
      const players: TestPlayerSession[] = [];
      for (let i = 0; i < 3; i++) players.push(await onlinePlayer(app, server));
      expect(await upload(app, server, players[0], 802, 99)).toMatchObject({ status: 200, trackRank: 1 });
      expect(await upload(app, server, players[1], 802, 97)).toMatchObject({ status: 200, trackRank: 2 });
      await redis.connect();
      await redis.save();
      // After the save: the index holds p2 at 100, the save does not.
      expect(await upload(app, server, players[1], 802, 100)).toMatchObject({ status: 200, trackRank: 1 });

      await redisServer.restart();
      redis.disconnect();
      await eventually(
        async () => (await rankIndexMismatches(app)).includes('redis_restarted 1'),
        'the restart is noticed',
      );
      await indexBack(app);
      expect(await upload(app, server, players[2], 802, 98)).toEqual({ status: 200, siteRank: 3, trackRank: 3 });
      await expectIndexAsSql(app);
      expect(await rankIndexMismatches(app)).toEqual(['redis_restarted 1']);
    } finally {
      await app.close();
    }
  });

  (twoInstances ? describe : describe.skip)('kicks across two instances (PostgreSQL)', () => {
    let a: TestApp;
    let b: TestApp;
    let proxy: TcpProxy;
    const clients: WsClient[] = [];

    beforeAll(async () => {
      // Instance A reaches Redis through a proxy (to cut A alone), B directly.
      proxy = await TcpProxy.start({ host: '127.0.0.1', port: redisServer.port });
      a = await start({ REDIS_URL: proxy.rewrite(redisServer.url).replace(/\/$/, '') });
      b = await startTestApp({ shareWith: a, env: { REDIS_URL: redisServer.url } });
    });
    afterEach(() => {
      for (const client of clients.splice(0)) client.socket.terminate();
    });
    afterAll(async () => {
      await b?.close();
      await a?.close();
      await proxy?.close();
    });

    const kicksOf = (client: WsClient, uid: number) =>
      client.frames.filter((frame) => frame.event === 'kick_player' && frame.data.uid === uid);
    const kick = (uid: number) => ({
      event: 'kick_player',
      data: { uid, message: 'You are banned: outage', reason: 'outage', until: '' },
    });
    const outbox = (serverID: number) =>
      a.sql<{ uid: number; delivered: boolean }>(
        `SELECT (frame->'data'->>'uid')::int AS uid, delivered_at IS NOT NULL AS delivered FROM realtime_outbox
          WHERE server_session_id IN (SELECT id FROM server_session WHERE server_id = $1) ORDER BY created_at`,
        [serverID],
      );
    const ban = async (uid: number) =>
      expect((await a.admin.post(`/admin/players/${uid}/ban`, { reason: 'outage' })).status).toBe(200);

    it('a ban made while Redis is dead kicks the player on the other instance once Redis is back, once', async () => {
      const server = await onlineServer(a);
      const players: TestPlayerSession[] = [];
      for (let i = 0; i < 5; i++) players.push(await onlinePlayer(a, server));
      const [before, p1, p2, p3, after] = players.map((player) => Number(player.uid));
      const onB = await WsClient.connect(b.baseUrl, server.accessToken);
      clients.push(onB);

      await ban(before);
      expect(await onB.next((frame) => frame.event === 'kick_player' && frame.data.uid === before)).toEqual(
        kick(before),
      );

      await redisServer.kill();
      for (const uid of [p1, p2, p3]) await ban(uid);
      // A kept them for the session; B, whose socket the session holds, never heard of them.
      await eventually(async () => (await outbox(server.serverID)).length === 4, 'the kicks are kept');
      expect(await outbox(server.serverID)).toEqual([
        { uid: before, delivered: true },
        { uid: p1, delivered: false },
        { uid: p2, delivered: false },
        { uid: p3, delivered: false },
      ]);
      expect([p1, p2, p3].flatMap((uid) => kicksOf(onB, uid))).toEqual([]);

      await sleep(OUTAGE_MS);
      await redisServer.restart();
      const back = Date.now();
      for (const uid of [p1, p2, p3])
        expect(await onB.next((frame) => frame.event === 'kick_player' && frame.data.uid === uid, 15_000)).toEqual(
          kick(uid),
        );
      reportFaultTiming(
        'Redis killed, bans during the outage: all kicks on the other instance after Redis is back',
        Date.now() - back,
      );
      await eventually(
        async () => (await outbox(server.serverID)).every((row) => row.delivered),
        'every kept kick marked delivered',
      );
      await sleep(500);
      expect([before, p1, p2, p3].map((uid) => kicksOf(onB, uid).length)).toEqual([1, 1, 1, 1]);

      // Events travel through Redis again.
      const sent = Date.now();
      await ban(after);
      expect(await onB.next((frame) => frame.event === 'kick_player' && frame.data.uid === after)).toEqual(kick(after));
      reportFaultTiming('a ban after the outage, until its kick', Date.now() - sent);
      expect(onB.socket.readyState).toBe(onB.socket.OPEN);
    }, 120_000);

    it('a ban made on an instance cut off from Redis kicks on the other instance once it reconnects', async () => {
      const server = await onlineServer(a);
      const player = await onlinePlayer(a, server);
      const uid = Number(player.uid);
      const onB = await WsClient.connect(b.baseUrl, server.accessToken);
      clients.push(onB);

      // Only A loses Redis: B's subscription never drops, so only A can say that events were missed.
      await proxy.cut();
      await ban(uid);
      await eventually(async () => (await outbox(server.serverID)).length === 1, 'the kick is kept');
      expect(await outbox(server.serverID)).toEqual([{ uid, delivered: false }]);
      expect(kicksOf(onB, uid)).toEqual([]);

      await sleep(OUTAGE_MS);
      await proxy.restore();
      const back = Date.now();
      expect(await onB.next((frame) => frame.event === 'kick_player' && frame.data.uid === uid, 15_000)).toEqual(
        kick(uid),
      );
      reportFaultTiming('instance A cut off from Redis, ban on A: kick on B after A reconnects', Date.now() - back);
      await sleep(500);
      expect(kicksOf(onB, uid)).toHaveLength(1);
      expect(await outbox(server.serverID)).toEqual([{ uid, delivered: true }]);
    }, 60_000);
  });
});

describe('A Redis failover that leaves the old connections open', () => {
  let primary: RedisServer;
  let next: RedisServer;
  let proxy: TcpProxy;
  let app: TestApp | null = null;

  beforeAll(async () => {
    primary = await RedisServer.start();
    next = await RedisServer.start();
    proxy = await TcpProxy.start({ host: '127.0.0.1', port: primary.port });
  });
  afterAll(async () => {
    await app?.close();
    await proxy?.close();
    await primary?.stop();
    await next?.stop();
  });

  it('connects again when its node was made a replica (READONLY), reaching the new primary', async () => {
    app = await startTestApp({
      env: { REDIS_URL: proxy.rewrite(primary.url), REDIS_KEY_PREFIX: `failover-${randomBytes(4).toString('hex')}:` },
    });
    const client = app.get<Redis>(REDIS);
    expect(await client.set('probe', 'before')).toBe('OK');

    // The address moves to `next`, and the node the open connection still reaches becomes its replica.
    proxy.retarget({ host: '127.0.0.1', port: next.port });
    const admin = new Redis(primary.url, { maxRetriesPerRequest: 1, disconnectTimeout: 100 });
    try {
      await admin.replicaof('127.0.0.1', next.port);
    } finally {
      admin.disconnect();
    }
    await expect(client.set('probe', 'during')).rejects.toThrow(/^READONLY/);
    const written = async () => (await client.set('probe', 'after').catch(() => null)) === 'OK';
    await eventually(written, 'a write through the new primary', 10_000);
    const direct = new Redis(next.url, { maxRetriesPerRequest: 1, disconnectTimeout: 100 });
    try {
      expect(await direct.keys('failover-*:probe')).toHaveLength(1);
    } finally {
      direct.disconnect();
    }
  });
});
