import type { Type } from '@nestjs/common';
import Redis from 'ioredis';
import { RankIndex } from '../../src/ranking/rank-index/rank-index';
import { RankSourceRepository } from '../../src/ranking/rank-source.repository';
import type { PlayerRankState, StoredBest } from '../../src/ranking';
import { onlinePlayer } from '../factories/player.factory';
import { onlineServer } from '../factories/server.factory';
import { defineCharts, gameplayPayload, uploadPlay } from '../factories/upload.factory';
import { testRedisUrl } from '../setup/test-env';
import { redisIndexHoldsBest } from '../support/redis-order-tree';
import { startTestApp, TestApp } from '../support/test-app';
import { eventually } from '../support/wait';

const redisUrl = testRedisUrl();
/** The chart of the erasure test (its own app, its own database). */
const LEVEL_ERASED = 9_201;
const describeWithRedis = redisUrl ? describe : describe.skip;

const LEVEL = 9_001;
const T0 = Date.UTC(2026, 10, 1);

/** A state as an upload answers it: ATP in ten-thousandths and the best on LEVEL (null: none). */
const state = (
  uid: number,
  version: number,
  atpE4: number | null,
  best: { acc: number; at: number; version?: number } | null,
): PlayerRankState => ({
  uid: String(uid),
  version,
  atpE4,
  levelId: LEVEL,
  best:
    best === null
      ? null
      : { acc: best.acc, firstTimeMs: T0 + best.at, recordId: '1', version: best.version ?? version },
});

describeWithRedis(
  redisUrl
    ? 'Redis rank index: versioned entries, answers for older states, removals and windows'
    : 'Redis rank index (skipped: needs REDIS_URL)',
  () => {
    let app: TestApp;
    let index: RankIndex;

    beforeAll(async () => {
      app = await startTestApp();
      index = app.get(RankIndex as unknown as Type<RankIndex>);
      expect(index.kind).toBe('redis');
      expect((await index.stats()).ready).toBe(true);
      // uids 11, 12 and 13 share a player store (uid div 8); 40 has its own.
      await index.syncEntries({
        sites: [
          { uid: '11', version: 3, atpE4: 150_000 },
          { uid: '12', version: 3, atpE4: 150_000 },
          { uid: '13', version: 3, atpE4: 120_000 },
          { uid: '40', version: 3, atpE4: 170_000 },
        ],
        tracks: [
          { uid: '11', levelId: LEVEL, version: 3, acc: 99.5, firstTimeMs: T0 + 5 },
          { uid: '12', levelId: LEVEL, version: 3, acc: 99.5, firstTimeMs: T0 + 1 },
          { uid: '13', levelId: LEVEL, version: 3, acc: 97, firstTimeMs: T0 },
          { uid: '40', levelId: LEVEL, version: 3, acc: 100, firstTimeMs: T0 + 9 },
        ],
      });
    });

    afterAll(async () => {
      await app?.close();
    });

    it('answers the entries ahead in both orders, ties broken by uid and by first reached', async () => {
      expect(await index.positions(state(11, 3, 150_000, { acc: 99.5, at: 5 }), null)).toEqual({
        siteAhead: 1,
        trackAhead: 2,
      });
      expect(await index.positions(state(12, 3, 150_000, { acc: 99.5, at: 1 }), null)).toEqual({
        siteAhead: 2,
        trackAhead: 1,
      });
      expect(await index.positions(state(13, 3, 120_000, { acc: 97, at: 0 }), null)).toEqual({
        siteAhead: 3,
        trackAhead: 3,
      });
      expect((await index.stats()).rankedPlayers).toBe(4);
    });

    it('moves a player forward, answers an older state without counting his newer entry, and never moves back', async () => {
      // Player 13 improves (version 5) past everyone.
      expect(await index.positions(state(13, 5, 180_000, { acc: 100, at: 20 }), null)).toEqual({
        siteAhead: 0,
        trackAhead: 1,
      });
      // An upload of version 4 finishing late: its own position among the others, 13's newer entry left out.
      expect(await index.positions(state(13, 4, 160_000, { acc: 99.6, at: 10 }), null)).toEqual({
        siteAhead: 1,
        trackAhead: 1,
      });
      // The stored entries stayed at version 5: the chart tree holds 13's version-5 best, not the late one.
      const prefix = app.env.REDIS_KEY_PREFIX;
      const redis = new Redis(redisUrl as string);
      try {
        expect(await redisIndexHoldsBest(redis, prefix, LEVEL, { acc: 100, firstTimeMs: T0 + 20, uid: '13' })).toBe(
          true,
        );
        expect(await redisIndexHoldsBest(redis, prefix, LEVEL, { acc: 99.6, firstTimeMs: T0 + 10, uid: '13' })).toBe(
          false,
        );
      } finally {
        redis.disconnect();
      }
      // 11 still has 13 and 40 ahead.
      expect(await index.positions(state(11, 3, 150_000, { acc: 99.5, at: 5 }), null)).toEqual({
        siteAhead: 2,
        trackAhead: 3,
      });
      const window = await index.window({ levelId: null, key: [-180_000, 0, 13], ahead: 5, behind: 5 });
      expect(window).toEqual({
        position: 0,
        ahead: [],
        behind: [
          [-170_000, 0, 40],
          [-150_000, 0, 11],
          [-150_000, 0, 12],
        ],
      });
      // The version-4 key is not in the index: a window around it cannot be answered from it.
      expect(await index.window({ levelId: null, key: [-160_000, 0, 13], ahead: 5, behind: 5 })).toBeNull();
    });

    it('removes entries by version, and an older write cannot bring them back', async () => {
      await index.syncEntries({
        sites: [],
        tracks: [],
        removedSites: [{ uid: '40', version: 7 }],
        removedTracks: [{ uid: '40', levelId: LEVEL, version: 7 }],
      });
      expect((await index.stats()).rankedPlayers).toBe(3);
      // A late write of version 6 is ignored, and its answer does not count 40's (removed) entry either.
      expect(await index.positions(state(40, 6, 170_000, { acc: 100, at: 9 }), null)).toEqual({
        siteAhead: 1,
        trackAhead: 0,
      });
      expect((await index.stats()).rankedPlayers).toBe(3);
      const chart = await index.window({ levelId: LEVEL, key: [-99.5, T0 + 1, 12], ahead: 5, behind: 5 });
      expect(chart).toEqual({
        position: 1,
        ahead: [[-100, T0 + 20, 13]],
        behind: [[-99.5, T0 + 5, 11]],
      });
      // A newer state brings 40 back.
      expect(await index.positions(state(40, 8, 170_000, { acc: 100, at: 9 }), null)).toEqual({
        siteAhead: 1,
        trackAhead: 0,
      });
      expect((await index.stats()).rankedPlayers).toBe(4);
    });

    it('answers several bests of one player in one call, bringing each entry forward, an older one without his newer entry', async () => {
      const LEVEL2 = LEVEL + 1;
      await index.syncEntries({
        sites: [],
        tracks: [
          { uid: '12', levelId: LEVEL2, version: 3, acc: 98, firstTimeMs: T0 },
          { uid: '13', levelId: LEVEL2, version: 5, acc: 99, firstTimeMs: T0 },
        ],
      });
      const read = (levelId: number, acc: number, at: number, version: number) => ({
        levelId,
        best: { acc, firstTimeMs: T0 + at, recordId: '1', version },
      });
      // On LEVEL 40, 13 and 12 are ahead of 11; on LEVEL2 (11's entry not in Redis yet) 13 is.
      expect(await index.trackPositions('11', [read(LEVEL, 99.5, 5, 3), read(LEVEL2, 98.5, 2, 4)])).toEqual([3, 1]);
      const prefix = app.env.REDIS_KEY_PREFIX;
      const redis = new Redis(redisUrl as string);
      try {
        expect(await redisIndexHoldsBest(redis, prefix, LEVEL2, { acc: 98.5, firstTimeMs: T0 + 2, uid: '11' })).toBe(
          true,
        );
        // A late read of an older best (version 3): its own position, 11's newer entry left out and kept.
        expect(await index.trackPositions('11', [read(LEVEL2, 97, 0, 3)])).toEqual([2]);
        expect(await redisIndexHoldsBest(redis, prefix, LEVEL2, { acc: 97, firstTimeMs: T0, uid: '11' })).toBe(false);
      } finally {
        redis.disconnect();
      }
      // The same numbers as one positions() call a best; 12 now has 11 ahead on LEVEL2.
      const one = (uid: number, r: ReturnType<typeof read>) =>
        index.positions({ uid: String(uid), version: r.best.version, atpE4: null, ...r }, null);
      expect(await one(11, read(LEVEL, 99.5, 5, 3))).toEqual({ siteAhead: null, trackAhead: 3 });
      expect(await one(12, read(LEVEL2, 98, 0, 3))).toEqual({ siteAhead: null, trackAhead: 2 });
      expect(await index.trackPositions('11', [])).toEqual([]);
    });

    it('moves to a new key generation built from the tables when a tree is damaged, and deletes the damaged one', async () => {
      const prefix = app.env.REDIS_KEY_PREFIX;
      // 300 more ranked players: a site tree of two levels.
      await index.syncEntries({
        sites: Array.from({ length: 300 }, (_, i) => ({ uid: String(1_000 + i), version: 1, atpE4: i })),
        tracks: [],
      });
      const redis = new Redis(redisUrl as string);
      try {
        expect(await redis.hget(`${prefix}rank3:s`, 'h')).toBe('2');
        // A node lost (evicted, deleted by hand): the root of the site tree.
        const root = await redis.hget(`${prefix}rank3:s`, 'r');
        expect(await redis.del(`${prefix}rank3:s:${root}`)).toBe(1);
        // The upload that finds it is answered from SQL (null here) and generation 1 is built.
        expect(await index.positions(state(11, 10, 150_000, null), null)).toBeNull();
        await eventually(async () => (await index.stats()).ready, 'generation 1 is built');
        expect(await redis.get(`${prefix}rank3:gen`)).toBe('1');
        expect(await redis.exists(`${prefix}rank3:g1:ready`)).toBe(1);
        // Generation 0 goes entirely; generation 1 holds what the tables hold (nothing in this database).
        await eventually(
          async () => (await redis.keys(`${prefix}rank3:*`)).every((key) => /rank3:(gen|g1:.*)$/.test(key)),
          'generation 0 is deleted',
        );
        expect(await index.stats()).toEqual({ ready: true, rankedPlayers: 0, chartEntries: null });
        expect(await index.positions(state(11, 11, 150_000, { acc: 99.5, at: 5 }), null)).toEqual({
          siteAhead: 0,
          trackAhead: 0,
        });
        const best = { acc: 99.5, firstTimeMs: T0 + 5, uid: '11' };
        expect(await redisIndexHoldsBest(redis, prefix, LEVEL, best, 1)).toBe(true);
      } finally {
        redis.disconnect();
      }
    });

    it('is built again from the tables after its keys are deleted (a flushed Redis)', async () => {
      const redis = new Redis(redisUrl as string);
      try {
        const keys = await redis.keys(`${app.env.REDIS_KEY_PREFIX}rank3:*`);
        expect(keys.length).toBeGreaterThan(0);
        await redis.del(...keys);
      } finally {
        redis.disconnect();
      }
      await index.rebuild();
      expect(await index.stats()).toEqual({ ready: true, rankedPlayers: 0, chartEntries: null });
      expect(await index.positions(state(11, 9, 150_000, { acc: 99.5, at: 5 }), null)).toEqual({
        siteAhead: 0,
        trackAhead: 0,
      });
    });
  },
);

describe('Redis rank index load: ratings and bests paged in each order, ties across page ends', () => {
  let app: TestApp;
  let repository: RankSourceRepository;

  beforeAll(async () => {
    app = await startTestApp({ redis: false });
    repository = app.get(RankSourceRepository);
    const server = await onlineServer(app);
    await defineCharts(app, [501, 502]);
    let time = Date.now() - 600_000;
    for (let i = 0; i < 6; i++) {
      const player = await onlinePlayer(app, server);
      for (const levelID of i % 2 === 0 ? [501, 502] : [501]) {
        const payload = gameplayPayload(levelID, (time += 1_000), { acc: 95 + i / 2 });
        const response = await app.http.post(
          '/player/upload',
          {
            player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: payload.time },
            server: { serverID: server.serverID, serverName: 'load', country: 'DE' },
            payload,
          },
          { token: server.accessToken },
        );
        expect(response.status).toBe(200);
      }
    }
    // Ties: four players at one ATP, four bests on chart 501 at one acc and first-reached time.
    await app.sql(
      `UPDATE player_rating SET atp = 7.5 WHERE uid IN (SELECT uid FROM player_rating ORDER BY uid LIMIT 4)`,
    );
    await app.sql(
      `UPDATE player_chart_best SET acc = 97, first_time_ms = 1000
        WHERE level_id = 501 AND uid IN (SELECT uid FROM player_chart_best WHERE level_id = 501 ORDER BY uid DESC LIMIT 4)`,
    );
  });

  afterAll(async () => {
    await app?.close();
  });

  it('reads every rating once, in site order, whatever the page size', async () => {
    const expected = await app.sql<{ uid: string; atp: string; version: string }>(
      'SELECT uid::text, atp::text, version::text FROM player_rating ORDER BY atp DESC, uid',
    );
    expect(expected).toHaveLength(6);
    for (const limit of [1, 2, 3, 4, 10]) {
      const read: Array<{ uid: string; atp: string; version: number }> = [];
      for (let after: { atp: string; uid: string } | null = null; ;) {
        const page = await repository.pageRatingsInSiteOrder(after, limit);
        read.push(...page);
        if (page.length < limit) break;
        after = page[page.length - 1];
      }
      expect([limit, read]).toEqual([
        limit,
        expected.map((row) => ({ uid: row.uid, atp: row.atp, version: Number(row.version) })),
      ]);
    }
  });

  it('reads every best once, chart by chart in track order, whatever the page size', async () => {
    const expected = await app.sql<{ uid: string; level_id: number; acc: number; first: string }>(
      'SELECT uid::text, level_id, acc, first_time_ms::text AS first FROM player_chart_best ORDER BY level_id, acc DESC, first_time_ms, uid',
    );
    expect(expected).toHaveLength(9);
    for (const limit of [1, 2, 3, 4, 20]) {
      const read: StoredBest[] = [];
      for (let after: StoredBest | null = null; ;) {
        const page = await repository.pageBestsInTrackOrder(after, limit);
        read.push(...page);
        if (page.length < limit) break;
        after = page[page.length - 1];
      }
      expect([limit, read.map((best) => [best.uid, best.levelId, best.acc, best.firstTimeMs])]).toEqual([
        limit,
        expected.map((row) => [row.uid, row.level_id, row.acc, Number(row.first)]),
      ]);
    }
  });
});

describeWithRedis('Redis rank index: a write after a commit that fails', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('does not fail the erasure, and the removal reaches the index with its rebuild: ranks below move up', async () => {
    const index = app.get(RankIndex as unknown as Type<RankIndex>);
    expect(index.kind).toBe('redis');
    await eventually(async () => (await index.stats()).ready, 'the index is built');
    const server = await onlineServer(app);
    await defineCharts(app, [LEVEL_ERASED]);
    const [gone, stays] = [await onlinePlayer(app, server), await onlinePlayer(app, server)];
    let at = Date.now() - 600_000;
    const play = async (player: typeof gone, acc: number) =>
      uploadPlay(app, server, player, gameplayPayload(LEVEL_ERASED, (at += 1_000), { acc }));
    await play(gone, 100);
    expect(await play(stays, 99)).toMatchObject({ trackRank: 2 });

    // The erasure commits; the index write after it fails (one pipeline's answer lost).
    const redis = (index as unknown as { redis: Redis }).redis;
    const pipeline = redis.pipeline.bind(redis);
    /** The next pipeline's answer is lost (a dropped connection). */
    const loseNextPipeline = () =>
      jest.spyOn(redis, 'pipeline').mockImplementationOnce(() => {
        const failing = pipeline();
        failing.exec = () => Promise.reject(new Error('Connection is closed.'));
        return failing;
      });
    const refused = loseNextPipeline();
    try {
      const erased = await app.admin.post(`/admin/players/${gone.uid}/erase`, { confirm: gone.username });
      expect(erased.status).toBe(200);
      expect(refused).toHaveBeenCalled();
    } finally {
      refused.mockRestore();
    }
    // Rebuilt in place with the kept removal: the erased player's entries are gone from the trees.
    await eventually(async () => (await index.stats()).ready, 'the index is rebuilt');
    expect(await play(stays, 98)).toMatchObject({ trackRank: 1, siteRank: 1 });

    // A kept entry whose version this database never drew (another timeline: a restore, a failover
    // to a replica behind) is not written into the rebuilt index.
    const ranked = (await index.stats()).rankedPlayers;
    const refusedAgain = loseNextPipeline();
    try {
      await index.syncEntries({ sites: [{ uid: '987654', version: 1_000_000_000_000, atpE4: 5 }], tracks: [] });
    } finally {
      refusedAgain.mockRestore();
    }
    await eventually(async () => (await index.stats()).ready, 'the index is rebuilt again');
    expect((await index.stats()).rankedPlayers).toBe(ranked);
  });
});
