import type { Type } from '@nestjs/common';
import { onlineServer, TestServerSession } from '../factories/server.factory';
import { loginPlayer, onlinePlayer, TestPlayerSession } from '../factories/player.factory';
import { gameplayPayload } from '../factories/upload.factory';
import { multiInstanceAvailable, startTestApp, TestApp } from '../support/test-app';
import { testRedisUrl } from '../setup/test-env';
import { LeaderboardRepository } from '../../src/ranking/leaderboard.repository';
import { RankIndex } from '../../src/ranking/rank-index/rank-index';
import { badLines } from '../support/bad-request';

/** The app's rank index (an abstract class is its DI token). */
const rankIndexOf = (app: TestApp) => app.get(RankIndex as unknown as Type<RankIndex>);

let clock = Date.now() - 3_600_000;
/** Increasing payload.time, uploads one after the other: the time a best was first reached orders as the uploads do. */
const nextTime = () => (clock += 1_000);

async function putCharts(
  app: TestApp,
  charts: Array<[levelId: number, constant: number, active?: boolean]>,
): Promise<void> {
  const response = await app.admin.put(
    '/admin/charts',
    charts.map(([levelId, difficultyConstant, active]) => ({
      levelId,
      name: `Chart ${levelId}`,
      difficultyConstant,
      version: '1.0',
      active: active ?? true,
    })),
  );
  if (response.status !== 200) throw new Error(`putCharts: ${response.status} ${response.text}`);
}

/** Uploads one play; answers the upload's body (its siteRank and trackRank are what the boards must show). */
async function play(
  app: TestApp,
  server: TestServerSession,
  player: TestPlayerSession,
  levelID: number,
  overrides: Record<string, unknown> = {},
) {
  const payload = gameplayPayload(levelID, nextTime(), overrides);
  const response = await app.http.post(
    '/player/upload',
    {
      player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: payload.time + 250 },
      server: { serverID: server.serverID, serverName: server.body.serverName as string, country: 'DE' },
      payload,
    },
    { token: server.accessToken },
  );
  if (response.status !== 200) throw new Error(`upload: ${response.status} ${response.text}`);
  return response.body as { atp: number; siteRank: number | null; trackRank: number | null };
}

/** A play that changes nothing (pass: false): its answer shows the player's current ranks. */
const look = (app: TestApp, server: TestServerSession, player: TestPlayerSession, levelID: number) =>
  play(app, server, player, levelID, { pass: false, acc: 10 });

const board = (app: TestApp, server: TestServerSession, path: string, query: Record<string, string | number> = {}) =>
  app.http.get(`/server/leaderboards/${path}`, { token: server.accessToken, query });

describe('Leaderboards', () => {
  let app: TestApp;
  let server: Awaited<ReturnType<typeof onlineServer>>;
  /** P0..P5, uids ascending. */
  let p: TestPlayerSession[];
  const atp = (i: number, rank: number, value: number) => ({
    rank,
    uid: p[i].uid,
    username: p[i].username,
    displayName: i === 5 ? 'Fifth' : p[i].username,
    atp: value,
  });
  const chart = (i: number, rank: number, acc: number, rating: number) => ({
    rank,
    uid: p[i].uid,
    username: p[i].username,
    displayName: i === 5 ? 'Fifth' : p[i].username,
    acc,
    rating,
  });

  beforeAll(async () => {
    app = await startTestApp();
    server = await onlineServer(app);
    await putCharts(app, [
      [501, 10],
      [502, 10],
      [503, 4, false],
    ]);
    p = [];
    for (let i = 0; i < 6; i++) p.push(await onlinePlayer(app, server, i === 5 ? { displayName: 'Fifth' } : {}));
    // Site: P3 0.7 (10 + 11) > P0 = P2 = P5 0.4 (12; uid order) > P1 0.3833 (11.5). P4 never passed.
    // Chart 501: P0 100 % (first), P2 100 % (later), P1 99 %, P3 95 %. Chart 502: P5 100 %, P3 98 %.
    await play(app, server, p[0], 501, { acc: 100 });
    await play(app, server, p[1], 501, { acc: 99 });
    await play(app, server, p[2], 501, { acc: 100 });
    await play(app, server, p[3], 502, { acc: 98 });
    await play(app, server, p[3], 501, { acc: 95 });
    await play(app, server, p[4], 501, { acc: 100, pass: false });
    await play(app, server, p[5], 502, { acc: 100 });
  });
  afterAll(async () => {
    await app.close();
  });

  describe('top N', () => {
    it('answers the ATP board: ATP descending, then uid ascending; players without a counted play are not on it', async () => {
      const response = await board(app, server, 'atp');
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        board: 'atp',
        entries: [atp(3, 1, 0.7), atp(0, 2, 0.4), atp(2, 3, 0.4), atp(5, 4, 0.4), atp(1, 5, 0.3833)],
      });
      expect((await board(app, server, 'atp', { limit: 2 })).body).toEqual({
        board: 'atp',
        entries: [atp(3, 1, 0.7), atp(0, 2, 0.4)],
      });
      expect((await board(app, server, 'atp', { limit: 100 })).body.entries).toHaveLength(5);
    });

    it("answers a chart's board: acc descending, then first reached ascending, then uid ascending", async () => {
      expect((await board(app, server, 'charts/501')).body).toEqual({
        board: 'chart',
        levelId: 501,
        entries: [chart(0, 1, 100, 12), chart(2, 2, 100, 12), chart(1, 3, 99, 11.5), chart(3, 4, 95, 10)],
      });
      expect((await board(app, server, 'charts/502', { limit: 1 })).body).toEqual({
        board: 'chart',
        levelId: 502,
        entries: [chart(5, 1, 100, 12)],
      });
      // A chart of the catalog nobody played (inactive here): an empty board.
      expect((await board(app, server, 'charts/503')).body).toEqual({ board: 'chart', levelId: 503, entries: [] });
    });

    it('shows every player at the rank the upload answered', async () => {
      const site = (await board(app, server, 'atp')).body.entries as Array<{ uid: number; rank: number }>;
      const track = (await board(app, server, 'charts/501')).body.entries as Array<{ uid: number; rank: number }>;
      for (const player of p) {
        const answer = await look(app, server, player, 501);
        expect({
          uid: player.uid,
          site: site.find((entry) => entry.uid === player.uid)?.rank ?? null,
          track: track.find((entry) => entry.uid === player.uid)?.rank ?? null,
        }).toEqual({
          uid: player.uid,
          site: answer.siteRank,
          track: answer.trackRank,
        });
      }
    });
  });

  describe('around a player', () => {
    it('answers the rank and k neighbours on each side, fewer at the ends of the board', async () => {
      // Rank 1: nothing ahead.
      expect((await board(app, server, 'atp', { around: p[3].uid, k: 2 })).body).toEqual({
        board: 'atp',
        rank: 1,
        entries: [atp(3, 1, 0.7), atp(0, 2, 0.4), atp(2, 3, 0.4)],
      });
      // The last rank: nothing behind.
      expect((await board(app, server, 'atp', { around: p[1].uid, k: 2 })).body).toEqual({
        board: 'atp',
        rank: 5,
        entries: [atp(2, 3, 0.4), atp(5, 4, 0.4), atp(1, 5, 0.3833)],
      });
      // Inside ties (same ATP, the uid decides), k = 5 by default: the whole board.
      expect((await board(app, server, 'atp', { around: p[2].uid })).body).toEqual({
        board: 'atp',
        rank: 3,
        entries: [atp(3, 1, 0.7), atp(0, 2, 0.4), atp(2, 3, 0.4), atp(5, 4, 0.4), atp(1, 5, 0.3833)],
      });
      expect((await board(app, server, 'atp', { around: p[5].uid, k: 0 })).body).toEqual({
        board: 'atp',
        rank: 4,
        entries: [atp(5, 4, 0.4)],
      });
      expect((await board(app, server, 'charts/501', { around: p[2].uid, k: 1 })).body).toEqual({
        board: 'chart',
        levelId: 501,
        rank: 2,
        entries: [chart(0, 1, 100, 12), chart(2, 2, 100, 12), chart(1, 3, 99, 11.5)],
      });
      expect((await board(app, server, 'charts/501', { around: p[3].uid, k: 25 })).body).toEqual({
        board: 'chart',
        levelId: 501,
        rank: 4,
        entries: [chart(0, 1, 100, 12), chart(2, 2, 100, 12), chart(1, 3, 99, 11.5), chart(3, 4, 95, 10)],
      });
    });

    it('answers rank null and no entries for a player without a rank on the board', async () => {
      // P4 has only a failed play: no counted play anywhere.
      expect((await board(app, server, 'atp', { around: p[4].uid })).body).toEqual({
        board: 'atp',
        rank: null,
        entries: [],
      });
      expect((await board(app, server, 'charts/501', { around: p[4].uid })).body).toEqual({
        board: 'chart',
        levelId: 501,
        rank: null,
        entries: [],
      });
      // P1 is ranked on the site but has no best on 502.
      expect((await board(app, server, 'charts/502', { around: p[1].uid, k: 3 })).body).toEqual({
        board: 'chart',
        levelId: 502,
        rank: null,
        entries: [],
      });
    });

    it('skips a banned neighbour, gives the banned player no rank, and counts them again after the unban', async () => {
      expect((await app.admin.post(`/admin/players/${p[2].uid}/ban`, { reason: 'test' })).status).toBe(200);
      try {
        expect((await board(app, server, 'atp', { around: p[5].uid, k: 1 })).body).toEqual({
          board: 'atp',
          rank: 3,
          entries: [atp(0, 2, 0.4), atp(5, 3, 0.4), atp(1, 4, 0.3833)],
        });
        expect((await board(app, server, 'atp', { around: p[2].uid })).body).toEqual({
          board: 'atp',
          rank: null,
          entries: [],
        });
        expect((await board(app, server, 'atp')).body).toEqual({
          board: 'atp',
          entries: [atp(3, 1, 0.7), atp(0, 2, 0.4), atp(5, 3, 0.4), atp(1, 4, 0.3833)],
        });
        expect((await board(app, server, 'charts/501', { around: p[0].uid, k: 1 })).body).toEqual({
          board: 'chart',
          levelId: 501,
          rank: 1,
          entries: [chart(0, 1, 100, 12), chart(1, 2, 99, 11.5)],
        });
        expect((await board(app, server, 'charts/501', { limit: 3 })).body.entries).toEqual([
          chart(0, 1, 100, 12),
          chart(1, 2, 99, 11.5),
          chart(3, 3, 95, 10),
        ]);
        // The upload agrees.
        expect(await look(app, server, p[5], 501)).toMatchObject({ siteRank: 3, trackRank: null });
        expect(await look(app, server, p[1], 501)).toMatchObject({ siteRank: 4, trackRank: 2 });
      } finally {
        expect((await app.admin.delete(`/admin/players/${p[2].uid}/ban`)).status).toBe(204);
        p[2] = await loginPlayer(app, server, p[2]); // the ban ended its session
      }
      expect((await board(app, server, 'atp', { around: p[5].uid, k: 1 })).body).toEqual({
        board: 'atp',
        rank: 4,
        entries: [atp(2, 3, 0.4), atp(5, 4, 0.4), atp(1, 5, 0.3833)],
      });
      expect((await board(app, server, 'charts/501', { around: p[2].uid, k: 0 })).body).toEqual({
        board: 'chart',
        levelId: 501,
        rank: 2,
        entries: [chart(2, 2, 100, 12)],
      });
    });

    it('answers the same window from SQL when the rank index cannot answer', async () => {
      const expected = (await board(app, server, 'charts/501', { around: p[1].uid, k: 1 })).body;
      expect(expected).toEqual({
        board: 'chart',
        levelId: 501,
        rank: 3,
        entries: [chart(2, 2, 100, 12), chart(1, 3, 99, 11.5), chart(3, 4, 95, 10)],
      });
      const positions = jest.spyOn(rankIndexOf(app), 'positions').mockResolvedValue(null);
      try {
        expect((await board(app, server, 'charts/501', { around: p[1].uid, k: 1 })).body).toEqual(expected);
        expect((await board(app, server, 'atp', { around: p[1].uid, k: 1 })).body).toEqual({
          board: 'atp',
          rank: 5,
          entries: [atp(5, 4, 0.4), atp(1, 5, 0.3833)],
        });
      } finally {
        positions.mockRestore();
      }
    });
  });

  describe('errors', () => {
    it('answers 404 for a level without a chart and for a uid without a player', async () => {
      for (const query of [{}, { around: p[0].uid }] as Array<Record<string, number>>) {
        const response = await board(app, server, 'charts/777', query);
        expect(response.status).toBe(404);
        expect(response.body).toEqual({ error: 'NOT_FOUND', message: 'No chart with levelId 777' });
      }
      for (const path of ['atp', 'charts/501']) {
        const response = await board(app, server, path, { around: 999_999_999 });
        expect(response.status).toBe(404);
        expect(response.body).toEqual({ error: 'NOT_FOUND', message: 'No player with uid 999999999' });
      }
    });

    it.each([
      ['atp?limit=0', 'limit must be an integer from 1 to 100'],
      ['atp?limit=101', 'limit must be an integer from 1 to 100'],
      ['atp?limit=1.5', 'limit must be an integer from 1 to 100'],
      ['atp?limit=1e1', 'limit must be an integer from 1 to 100'],
      ['atp?limit=', 'limit must be an integer from 1 to 100'],
      ['atp?limit=abc', 'limit must be an integer from 1 to 100'],
      ['atp?limit=5&limit=6', 'limit must be an integer from 1 to 100'],
      ['atp?limit=5&around=1', 'limit cannot be combined with around: give limit (top N) or around (a window)'],
      ['charts/501?around=1&limit=5', 'limit cannot be combined with around: give limit (top N) or around (a window)'],
      ['atp?around=0', 'around must be a positive integer'],
      ['atp?around=-3', 'around must be a positive integer'],
      ['atp?around=abc', 'around must be a positive integer'],
      ['atp?around=1&k=26', 'k must be an integer from 0 to 25'],
      ['atp?around=1&k=-1', 'k must be an integer from 0 to 25'],
      ['charts/501?around=1&k=x', 'k must be an integer from 0 to 25'],
      ['atp?k=3', 'k needs around'],
      ['atp?top=3', 'top: property top should not exist'],
      ['atp?valueOf=3', 'valueOf: property valueOf should not exist'],
      ['charts/abc', 'levelId must be an integer from 0 to 2147483647'],
      ['charts/-1', 'levelId must be an integer from 0 to 2147483647'],
      ['charts/1.0', 'levelId must be an integer from 0 to 2147483647'],
      ['charts/2147483648', 'levelId must be an integer from 0 to 2147483647'],
    ])('answers 400 naming the field: %s', async (path, message) => {
      const response = await app.http.get(`/server/leaderboards/${path}`, { token: server.accessToken });
      expect(response.status).toBe(400);
      expect(response.body).toEqual(badLines(message));
    });

    it('answers 404 for a placeholder chart, and leaves flagged plays off the boards', async () => {
      await play(app, server, p[4], 909_909, { acc: 100 }); // an unknown level: a placeholder, unranked
      const placeholder = await board(app, server, 'charts/909909');
      expect(placeholder.status).toBe(404);
      expect(placeholder.body).toEqual({ error: 'NOT_FOUND', message: 'No chart with levelId 909909' });
      const before = (await board(app, server, 'charts/502')).body;
      await play(app, server, p[4], 502, { acc: 100, maxCombo: 99_999 }); // fails the maxCombo check
      expect((await board(app, server, 'charts/502')).body).toEqual(before);
    });

    it('answers the same boards to the admin API (admin token) under /admin/boards', async () => {
      for (const [path, query] of [
        ['atp', {}],
        ['atp', { around: p[0].uid, k: 1 }],
        ['charts/501', { limit: 3 }],
      ] as Array<[string, Record<string, number>]>) {
        const search = new URLSearchParams(
          Object.entries(query).map(([key, value]): [string, string] => [key, String(value)]),
        ).toString();
        const admin = await app.admin.get(`/admin/boards/${path}${search ? `?${search}` : ''}`);
        expect(admin.status).toBe(200);
        expect(admin.body).toEqual((await board(app, server, path, query)).body);
      }
      expect((await app.admin.get('/admin/boards/atp?limit=0')).body).toEqual(
        badLines('limit must be an integer from 1 to 100'),
      );
      expect((await app.http.get('/admin/boards/atp', { token: server.accessToken })).status).toBe(401);
    });

    it('needs a server access token', async () => {
      for (const path of ['atp', 'charts/501']) {
        const response = await app.http.get(`/server/leaderboards/${path}`, { token: null });
        expect(response.status).toBe(401);
        expect(response.body).toEqual({ error: 'UNAUTHORIZED', message: 'Missing bearer server access token' });
      }
    });
  });
});

describe('Leaderboards across rank indexes and instances', () => {
  /** A deterministic scenario with ties and a ban; answers every board read it makes. */
  async function scenario(app: TestApp, other: TestApp = app): Promise<unknown[]> {
    const server = await onlineServer(app);
    const otherServer = other === app ? server : await onlineServer(other);
    await putCharts(app, [
      [601, 10],
      [602, 11],
    ]);
    const players: TestPlayerSession[] = [];
    for (let i = 0; i < 8; i++) players.push(await onlinePlayer(app, server));
    const accs = [100, 100, 99.5, 98, 95, 90];
    const base = Date.now() - 1_800_000;
    const answers: unknown[] = [];
    /** uids differ between apps: entries are compared by player index. */
    const byIndex = (body: { entries?: Array<{ uid: number }> }) =>
      JSON.stringify(body)
        .replace(
          /"uid":(\d+)/g,
          (_match, uid: string) => `"uid":"P${players.findIndex((player) => player.uid === Number(uid))}"`,
        )
        .replace(/bench_\w+|p_[0-9a-f]+/g, 'name');
    const read = async (path: string, query: Record<string, string | number>) => {
      const [here, there] = await Promise.all([
        board(app, server, path, query),
        board(other, otherServer, path, query),
      ]);
      expect(there.body).toEqual(here.body);
      answers.push([here.status, byIndex(here.body)]);
    };
    for (let step = 0; step < 24; step++) {
      const who = (step * 5) % players.length;
      // Uploads alternate between the instances (one database: the server token is valid on both); P3 is banned from step 12 on.
      const via = step % 2 === 0 ? app : other;
      if (!(step > 12 && who === 3)) {
        await play(via, server, players[who], 601 + (step % 2), {
          acc: accs[(step * 7) % accs.length],
          time: base + (step % 3) * 1_000 + step * 10_000,
        });
      }
      if (step === 12) expect((await app.admin.post(`/admin/players/${players[3].uid}/ban`, {})).status).toBe(200);
      if (step % 4 === 3) {
        await read('atp', { limit: 8 });
        await read('charts/601', {});
        for (const i of [0, 3, 5]) {
          await read('atp', { around: players[i].uid, k: 2 });
          await read('charts/602', { around: players[i].uid, k: 1 });
        }
      }
    }
    return answers;
  }

  it('answers the same boards with the in-process index and with Redis (when REDIS_URL is set)', async () => {
    const memoryApp = await startTestApp({ redis: false });
    let memory: unknown[];
    try {
      expect(rankIndexOf(memoryApp).kind).toBe('memory');
      memory = await scenario(memoryApp);
    } finally {
      await memoryApp.close();
    }
    const defaultApp = await startTestApp();
    try {
      expect(rankIndexOf(defaultApp).kind).toBe(testRedisUrl() ? 'redis' : 'memory');
      expect(await scenario(defaultApp)).toEqual(memory);
    } finally {
      await defaultApp.close();
    }
  });

  // Two instances on one database need PostgreSQL and Redis (the shared rank index).
  (multiInstanceAvailable() ? it : it.skip)(
    'answers the same boards from two instances sharing the database and Redis',
    async () => {
      const a = await startTestApp();
      let b: TestApp | null = null;
      try {
        b = await startTestApp({ shareWith: a });
        const answers = await scenario(a, b);
        expect(answers.length).toBeGreaterThan(0);
      } finally {
        await b?.close();
        await a.close();
      }
    },
  );
});

describe('Leaderboard windows answered from the rank index', () => {
  const KS = [0, 1, 5, 25];
  type Body = { rank: number | null; entries: Array<{ uid: number; rank: number }> };

  /**
   * 31 players: 30 on chart 701 in acc groups (P0–P2 100 %, P3–P5 99 %, P6–P17 98 %, P18–P23 97 %,
   * P24–P29 96 %), uploaded from P29 down to P0, so that first reached (track ties) runs against the
   * uid order (site ties); P0, P3, P20 and P25 also play 702, P30 plays only 702. P6–P17 are banned:
   * twelve banned neighbours in a row, more than the first read's margin.
   * Reads every window (both boards, every player, k 0/1/5/25) from the index, then the same with the
   * index unable to answer (the SQL statement and SQL rank counts), and compares them.
   */
  async function compareWindows(app: TestApp): Promise<void> {
    const server = await onlineServer(app);
    await putCharts(app, [
      [701, 10],
      [702, 12],
    ]);
    const players: TestPlayerSession[] = [];
    for (let i = 0; i < 31; i++) players.push(await onlinePlayer(app, server));
    const acc = (i: number) => (i < 3 ? 100 : i < 6 ? 99 : i < 18 ? 98 : i < 24 ? 97 : 96);
    for (let i = 29; i >= 0; i--) await play(app, server, players[i], 701, { acc: acc(i) });
    for (const i of [0, 3, 20, 25, 30]) await play(app, server, players[i], 702, { acc: i === 30 ? 100 : 95 });
    for (let i = 6; i < 18; i++)
      expect((await app.admin.post(`/admin/players/${players[i].uid}/ban`, { reason: 'test' })).status).toBe(200);

    const index = rankIndexOf(app);
    const boards = app.get(LeaderboardRepository);
    const readAll = async () => {
      const answers: Array<[string, number, number, Body]> = [];
      for (const [i, player] of players.entries()) {
        for (const path of ['atp', 'charts/701']) {
          for (const k of KS) {
            const response = await board(app, server, path, { around: player.uid, k });
            expect(response.status).toBe(200);
            answers.push([path, i, k, response.body as Body]);
          }
        }
      }
      return answers;
    };

    const windows = jest.spyOn(index, 'window');
    const siteSql = jest.spyOn(boards, 'siteWindow');
    const trackSql = jest.spyOn(boards, 'trackWindow');
    let indexed: Array<[string, number, number, Body]>;
    try {
      indexed = await readAll();
      // Every window came from the index (none from the window statement), one of them after a second read.
      expect({ siteSql: siteSql.mock.calls.length, trackSql: trackSql.mock.calls.length }).toEqual({
        siteSql: 0,
        trackSql: 0,
      });
      expect(windows.mock.calls.some(([read]) => read.ahead === 2 * (5 + 8))).toBe(true);
    } finally {
      windows.mockRestore();
      siteSql.mockRestore();
      trackSql.mockRestore();
    }

    const entry = (i: number, rank: number): unknown => expect.objectContaining({ uid: players[i].uid, rank });
    const find = (path: string, i: number, k: number) =>
      indexed.find(([p, j, kk]) => p === path && j === i && kk === k)?.[3];
    // Rank 1 (first reached decides between P2, P1 and P0) and the last rank (P24: 30 bests, 12 banned).
    expect(find('charts/701', 2, 1)).toEqual({
      board: 'chart',
      levelId: 701,
      rank: 1,
      entries: [entry(2, 1), entry(1, 2)],
    });
    expect(find('charts/701', 24, 1)).toEqual({
      board: 'chart',
      levelId: 701,
      rank: 18,
      entries: [entry(25, 17), entry(24, 18)],
    });
    // Across the banned run: P3 (the last of 99 %) is followed by P23 (the first of 97 %).
    expect(find('charts/701', 3, 1)).toEqual({
      board: 'chart',
      levelId: 701,
      rank: 6,
      entries: [entry(4, 5), entry(3, 6), entry(23, 7)],
    });
    // Site: P0, P3, P20, P25, P30 (two charts), then ties where the uid decides (P1 = P2, P4 = P5 across the banned run to P18 = P19).
    expect(find('atp', 1, 1)).toEqual({ board: 'atp', rank: 6, entries: [entry(30, 5), entry(1, 6), entry(2, 7)] });
    expect(find('atp', 5, 1)).toEqual({ board: 'atp', rank: 9, entries: [entry(4, 8), entry(5, 9), entry(18, 10)] });
    // A banned player, and a player without a best on 701.
    expect(find('atp', 7, 5)).toEqual({ board: 'atp', rank: null, entries: [] });
    expect(find('charts/701', 30, 5)).toEqual({ board: 'chart', levelId: 701, rank: null, entries: [] });

    const noWindow = jest.spyOn(index, 'window').mockResolvedValue(null);
    const noPositions = jest.spyOn(index, 'positions').mockResolvedValue(null);
    try {
      expect(await readAll()).toEqual(indexed);
    } finally {
      noWindow.mockRestore();
      noPositions.mockRestore();
    }
  }

  it('answers every window exactly as the SQL statement does, with the in-process index', async () => {
    const app = await startTestApp({ redis: false });
    try {
      expect(rankIndexOf(app).kind).toBe('memory');
      await compareWindows(app);
    } finally {
      await app.close();
    }
  });

  (testRedisUrl() ? it : it.skip)(
    'answers every window exactly as the SQL statement does, with the index in Redis',
    async () => {
      const app = await startTestApp();
      try {
        expect(rankIndexOf(app).kind).toBe('redis');
        await compareWindows(app);
      } finally {
        await app.close();
      }
    },
  );
});
