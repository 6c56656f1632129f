import type { Type } from '@nestjs/common';
import Redis from 'ioredis';
import { RankIndex } from '../../src/ranking/rank-index/rank-index';
import { onlinePlayer, TestPlayerSession } from '../factories/player.factory';
import { onlineServer, TestServerSession } from '../factories/server.factory';
import { HttpResponse } from '../support/http';
import { TcpProxy } from '../support/tcp-proxy';
import { multiInstanceAvailable, startTestApp, TestApp } from '../support/test-app';
import { WsClient } from '../support/ws-client';
import { testRedisUrl } from '../setup/test-env';
import { redisIndexHoldsBest } from '../support/redis-order-tree';
import { eventually, sleep } from '../support/wait';
import { defineCharts, gameplayPayload } from '../factories/upload.factory';

/** Separates "answers" from "waits on a Redis that is not there"; not a performance figure. */
const NO_HANG_MS = 10_000;

const redisUrl = testRedisUrl();
const describeWithRedis = redisUrl ? describe : describe.skip;

describeWithRedis(
  redisUrl
    ? 'Redis outage: the instance keeps serving (events local, limits in memory, ranks from SQL) and reconnects'
    : 'Redis outage (skipped: needs REDIS_URL; without Redis nothing depends on it)',
  () => {
    let proxy: TcpProxy;
    let a: TestApp;
    /** A second instance on Redis directly (PostgreSQL only): events must cross again after the outage. */
    let b: TestApp | null = null;
    let redis: Redis;
    const clients: WsClient[] = [];
    let clock = Date.now() - 3_600_000;

    const upload = (
      app: TestApp,
      session: TestServerSession,
      player: TestPlayerSession,
      levelID: number,
      acc: number,
    ) => {
      const time = (clock += 1_000);
      return app.http.post(
        '/player/upload',
        {
          server: { serverID: session.serverID, serverName: 'redis-outage', country: 'DE' },
          player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: time },
          payload: gameplayPayload(levelID, time, { acc }),
        },
        { token: session.accessToken },
      );
    };
    const timed = async (send: () => Promise<HttpResponse>) => {
      const started = Date.now();
      const response = await send();
      expect(Date.now() - started).toBeLessThan(NO_HANG_MS);
      return response;
    };
    const chatFrames = (client: WsClient, message: string) =>
      client.frames.filter((frame) => frame.event === 'chat' && frame.data.message === message);

    beforeAll(async () => {
      const target = new URL(redisUrl as string);
      proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 6379) });
      a = await startTestApp({
        env: { REDIS_URL: proxy.rewrite(redisUrl as string).replace(/\/$/, ''), THROTTLE_PLAYER_LOGIN_LIMIT: '5' },
      });
      await defineCharts(a, [301, 302]);
      if (multiInstanceAvailable()) b = await startTestApp({ shareWith: a });
      redis = new Redis(redisUrl as string);
    });
    afterEach(() => {
      for (const client of clients.splice(0)) client.socket.terminate();
    });
    afterAll(async () => {
      await proxy?.restore();
      await b?.close();
      await a?.close();
      await proxy?.close();
      await redis?.quit();
    });

    it('serves through the outage with local events, in-memory login limits and exact ranks, then works through Redis again', async () => {
      const s1 = await onlineServer(a);
      const s2 = await onlineServer(a);
      const [p1, p2, p3] = [await onlinePlayer(a, s1), await onlinePlayer(a, s1), await onlinePlayer(a, s1)];
      const onA = await WsClient.connect(a.baseUrl, s1.accessToken);
      clients.push(onA);
      const onB = b ? await WsClient.connect(b.baseUrl, s2.accessToken) : null;
      if (onB) clients.push(onB);
      expect((await upload(a, s1, p1, 301, 99)).body).toMatchObject({ trackRank: 1 });
      expect((await upload(a, s1, p2, 301, 98)).body).toMatchObject({ trackRank: 2 });
      expect((await upload(a, s1, p2, 302, 99.5)).body).toMatchObject({ trackRank: 1 });

      await proxy.cut();

      // Events: delivered on this instance (the sender's own game server gets its chat line).
      onA.send('chat', { uid: p1.uid, message: 'during the outage' });
      expect(
        (await onA.next((frame) => frame.event === 'chat' && frame.data.message === 'during the outage')).data,
      ).toMatchObject({ uid: p1.uid, serverID: s1.serverID });

      // Ranks: counted in SQL, the same figures.
      const during = await timed(() => upload(a, s1, p3, 301, 98.5));
      expect({
        status: during.status,
        trackRank: during.body.trackRank,
        personalBest: during.body.personalBest,
      }).toEqual({ status: 200, trackRank: 2, personalBest: true });
      // A profile's ranks too (RankAnswerService.trackRanks: the index cannot answer, one SQL statement counts them).
      const second = await timed(() => upload(a, s1, p3, 302, 99.7));
      expect({ status: second.status, trackRank: second.body.trackRank }).toEqual({ status: 200, trackRank: 1 });
      const profileRanks = async () => {
        const profile = await timed(() => a.admin.get(`/admin/players/${p3.uid}`));
        const body = profile.body as { siteRank: number; bests: Array<{ levelId: number; trackRank: number }> };
        return {
          status: profile.status,
          siteRank: body.siteRank,
          bests: body.bests.map((b) => [b.levelId, b.trackRank]).sort((x, y) => x[0] - y[0]),
        };
      };
      const p3Ranks = {
        status: 200,
        siteRank: second.body.siteRank,
        bests: [
          [301, 2],
          [302, 1],
        ],
      };
      expect(await profileRanks()).toEqual(p3Ranks);

      // Player login limit of s1's session: counted in memory (a fresh count on this instance), never lifted, never blocking.
      const attempt = () =>
        timed(() =>
          a.http.post('/player/login', { mode: 'TOKEN', version: 1, authToken: 'wrong' }, { token: s1.accessToken }),
        );
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await attempt()).status);
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);

      // Economy and the rest need no Redis.
      expect(
        (
          await timed(() =>
            a.http.post(
              '/player/economy',
              { uid: p1.uid, accessToken: p1.accessToken, wattHour: 5 },
              { token: s1.accessToken },
            ),
          )
        ).status,
      ).toBe(200);

      await proxy.restore();

      // The rank index is rebuilt in Redis and holds the play uploaded during the outage.
      const p3Best = await a.sql<{ first: string }>(
        'SELECT first_time_ms::text AS first FROM player_chart_best WHERE uid = $1 AND level_id = 301',
        [p3.uid],
      );
      const best = { acc: 98.5, firstTimeMs: Number(p3Best[0].first), uid: String(p3.uid) };
      await eventually(
        () => redisIndexHoldsBest(redis, a.env.REDIS_KEY_PREFIX, 301, best),
        'the Redis rank index holds the outage upload',
      );

      // A's subscription is back: an event published on Redis reaches A's game server.
      const channel = `${a.env.REDIS_KEY_PREFIX}events`;
      await eventually(async () => {
        await redis.publish(
          channel,
          JSON.stringify({
            type: 'chat',
            data: {
              uid: p2.uid,
              username: 'x',
              displayName: 'x',
              message: 'through redis',
              serverID: s2.serverID,
              serverName: 'x',
              prefix: null,
              suffix: null,
            },
          }),
        );
        await sleep(100);
        return chatFrames(onA, 'through redis').length > 0;
      }, 'A receives events from Redis again');

      // A publishes through Redis again: its own game server gets the line once (not locally and again through Redis),
      // and a game server on the other instance gets it too.
      onA.send('chat', { uid: p1.uid, message: 'after the outage' });
      await onA.next((frame) => frame.event === 'chat' && frame.data.message === 'after the outage');
      if (onB) await onB.next((frame) => frame.event === 'chat' && frame.data.message === 'after the outage');
      await sleep(300);
      expect(chatFrames(onA, 'after the outage')).toHaveLength(1);
      if (onB) expect(chatFrames(onB, 'after the outage')).toHaveLength(1);

      // Ranks from the rebuilt index, on both instances: p1 99, p3 98.5, p2 98.
      const index = a.get(RankIndex as unknown as Type<RankIndex>);
      await eventually(async () => (await index.stats()).ready, 'the rank index answers again');
      expect(await profileRanks()).toEqual(p3Ranks);
      expect((await upload(a, s1, p2, 301, 97)).body).toMatchObject({ trackRank: 3, personalBest: false });
      if (b) expect((await upload(b, s1, p2, 301, 96)).body).toMatchObject({ trackRank: 3, personalBest: false });
    }, 120_000);

    it('starts while Redis is down, serves, and takes Redis up when it comes back', async () => {
      const target = new URL(redisUrl as string);
      const down = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 6379) });
      await down.cut();
      const app = await startTestApp({ env: { REDIS_URL: down.rewrite(redisUrl as string).replace(/\/$/, '') } });
      try {
        const session = await onlineServer(app);
        await defineCharts(app, [401]);
        const [first, second] = [await onlinePlayer(app, session), await onlinePlayer(app, session)];
        const socket = await WsClient.connect(app.baseUrl, session.accessToken);
        clients.push(socket);
        expect((await timed(() => upload(app, session, first, 401, 97))).body).toMatchObject({ trackRank: 1 });
        socket.send('chat', { uid: first.uid, message: 'no redis yet' });
        await socket.next((frame) => frame.event === 'chat' && frame.data.message === 'no redis yet');

        await down.restore();
        // The index is built in Redis (this deployment's prefix had none) and the subscription is made.
        await eventually(
          async () => (await redis.exists(`${app.env.REDIS_KEY_PREFIX}rank3:ready`)) === 1,
          'the Redis rank index is built',
        );
        await eventually(async () => {
          await redis.publish(
            `${app.env.REDIS_KEY_PREFIX}events`,
            JSON.stringify({
              type: 'chat',
              data: {
                uid: second.uid,
                username: 'x',
                displayName: 'x',
                message: 'redis is here',
                serverID: session.serverID,
                serverName: 'x',
                prefix: null,
                suffix: null,
              },
            }),
          );
          await sleep(100);
          return chatFrames(socket, 'redis is here').length > 0;
        }, 'the instance receives events from Redis');
        expect((await upload(app, session, second, 401, 98)).body).toMatchObject({ trackRank: 1 });
        expect((await upload(app, session, first, 401, 96)).body).toMatchObject({ trackRank: 2, personalBest: false });
      } finally {
        await app.close();
        await down.close();
      }
    }, 120_000);
  },
);
