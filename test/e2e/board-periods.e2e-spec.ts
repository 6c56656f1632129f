import { onlineServer, TestServerSession } from '../factories/server.factory';
import { loginPlayer, onlinePlayer, TestPlayerSession } from '../factories/player.factory';
import { gameplayPayload, uploadPlay } from '../factories/upload.factory';
import { Client } from 'pg';
import { testDatabaseServerUrl } from '../setup/test-env';
import { multiInstanceAvailable, startTestApp, TestApp } from '../support/test-app';
import { sleep } from '../support/wait';
import { LeaderboardService } from '../../src/ranking/leaderboard.service';
import { Clock } from '../../src/common/clock';
import { PeriodJobService } from '../../src/ranking/periods/period-job.service';
import { PLAYER_DATA } from '../../src/privacy/player-data.map';

let playTime = Date.now() - 3_600_000;

async function putCharts(app: TestApp, levelIds: number[]): Promise<void> {
  const response = await app.admin.put(
    '/admin/charts',
    levelIds.map((levelId) => ({
      levelId,
      name: `Chart ${levelId}`,
      difficultyConstant: 10,
      version: '1.0',
      active: true,
    })),
  );
  if (response.status !== 200) throw new Error(`putCharts: ${response.status} ${response.text}`);
}

async function play(
  app: TestApp,
  server: TestServerSession,
  player: TestPlayerSession,
  levelID: number,
  overrides: Record<string, unknown>,
) {
  return (await uploadPlay(
    app,
    server,
    player,
    gameplayPayload(levelID, (playTime += 1_000), overrides),
  )) as unknown as { siteRank: number | null; trackRank: number | null };
}

const board = (app: TestApp, server: TestServerSession, path: string, query: Record<string, string | number> = {}) =>
  app.http.get(`/server/leaderboards/${path}`, { token: server.accessToken, query });

interface PeriodRow extends Record<string, unknown> {
  id: string;
  kind: string;
  starts_at: Date;
  ends_at: Date;
  closed_at: Date | null;
  archived_at: Date | null;
}

const periods = (app: TestApp) =>
  app.sql<PeriodRow>('SELECT id, kind, starts_at, ends_at, closed_at, archived_at FROM board_period ORDER BY id');

/** The wire form of a period's times (a local date-time in the service's zone, UTC in tests). */
const local = (date: Date) => date.toISOString().slice(0, 19);

describe('Board periods: day, week, month and seasons (issue #44)', () => {
  let app: TestApp;
  let server: TestServerSession;
  let p: TestPlayerSession[];
  let clock: jest.SpyInstance<Date, []>;
  const entry = (i: number, rank: number, extra: Record<string, number>) => ({
    rank,
    uid: p[i].uid,
    username: p[i].username,
    displayName: p[i].username,
    ...extra,
  });

  beforeAll(async () => {
    app = await startTestApp();
    clock = jest.spyOn(app.get(Clock), 'now');
    await app.get(PeriodJobService).runOnce();
    server = await onlineServer(app);
    await putCharts(app, [801, 802]);
    p = [];
    for (let i = 0; i < 4; i++) p.push(await onlinePlayer(app, server));
  });
  afterAll(async () => {
    clock.mockRestore();
    await app.close();
  });

  it('creates the day, week (from Monday) and month containing now, once, in UTC by default', async () => {
    await app.get(PeriodJobService).runOnce();
    const rows = await periods(app);
    const now = new Date();
    const day = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
    const monday = new Date(day.getTime() - ((day.getUTCDay() + 6) % 7) * 86_400_000);
    const month = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    const current = rows.filter((row) => row.starts_at.getTime() <= now.getTime() && row.ends_at > now);
    expect(current.map((row) => [row.kind, row.starts_at.toISOString(), row.ends_at.toISOString()])).toEqual([
      ['day', day.toISOString(), new Date(day.getTime() + 86_400_000).toISOString()],
      ['week', monday.toISOString(), new Date(monday.getTime() + 7 * 86_400_000).toISOString()],
      ['month', month.toISOString(), new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString()],
    ]);
    expect(new Set(rows.map((row) => `${row.kind} ${row.starts_at.toISOString()}`)).size).toBe(rows.length);
    // Runs that find their periods made take no id: the sequence stands at the last period's id.
    await app.get(PeriodJobService).runOnce();
    const [sequence] = await app.sql<{ last: string; max: string }>(
      'SELECT (SELECT last_value FROM board_period_id_seq)::text AS last, (SELECT max(id) FROM board_period)::text AS max',
    );
    expect(sequence.last).toBe(sequence.max);
  });

  it('counts a play for the all-time board and every open period at once (day, week, month and a season)', async () => {
    const [season] = await app.sql<{ id: string }>(
      `INSERT INTO board_period (kind, slug, name, starts_at, ends_at) VALUES ('season', 'test-season', 'Test season', now() - interval '1 day', now() + interval '30 days') RETURNING id`,
    );
    await play(app, server, p[0], 801, { acc: 99 });
    await play(app, server, p[1], 801, { acc: 100 });
    await play(app, server, p[2], 801, { acc: 97 });
    await play(app, server, p[0], 801, { acc: 98 }); // below P0's best: changes nothing
    await play(app, server, p[3], 801, { acc: 100, pass: false }); // not counted
    await play(app, server, p[2], 802, { acc: 100 });

    const stored = await app.sql<{ kind: string; uid: string; level_id: number; acc: number }>(
      `SELECT p.kind, b.uid::text AS uid, b.level_id, b.acc FROM period_chart_best b JOIN board_period p ON p.id = b.period_id
        ORDER BY p.kind, b.level_id, b.uid`,
    );
    const expected = (kind: string) => [
      { kind, uid: p[0].uid, level_id: 801, acc: 99 },
      { kind, uid: p[1].uid, level_id: 801, acc: 100 },
      { kind, uid: p[2].uid, level_id: 801, acc: 97 },
      { kind, uid: p[2].uid, level_id: 802, acc: 100 },
    ];
    expect(stored.map((row) => ({ ...row, uid: Number(row.uid) }))).toEqual(
      ['day', 'month', 'season', 'week'].flatMap(expected),
    );

    const allTime = (await board(app, server, 'charts/801')).body as { entries: unknown[] };
    expect(allTime).toEqual({
      board: 'chart',
      levelId: 801,
      entries: [
        entry(1, 1, { acc: 100, rating: 12 }),
        entry(0, 2, { acc: 99, rating: 11.5 }),
        entry(2, 3, { acc: 97, rating: 10.6667 }),
      ],
    });
    // `all` is the board as it always was: no period in the answer.
    expect((await board(app, server, 'charts/801', { period: 'all' })).body).toEqual(allTime);
    const atpAll = (await board(app, server, 'atp')).body as { entries: unknown[] };
    for (const period of ['day', 'week', 'month', 'season:test-season', `season:${season.id}`]) {
      const chartBody = (await board(app, server, 'charts/801', { period })).body as Record<string, unknown>;
      expect(chartBody).toMatchObject({ board: 'chart', levelId: 801, entries: allTime.entries });
      expect(chartBody.period).toMatchObject({ kind: period.startsWith('season') ? 'season' : period, closed: false });
      const atpBody = (await board(app, server, 'atp', { period })).body as Record<string, unknown>;
      expect(atpBody).toEqual({ board: 'atp', period: chartBody.period, entries: atpAll.entries });
    }
    const seasonBody = (await board(app, server, 'atp', { period: 'season:test-season' })).body as {
      period: Record<string, unknown>;
    };
    const [row] = await app.sql<PeriodRow>('SELECT * FROM board_period WHERE id = $1', [season.id]);
    expect(seasonBody.period).toEqual({
      id: Number(season.id),
      kind: 'season',
      slug: 'test-season',
      name: 'Test season',
      startsAt: local(row.starts_at),
      endsAt: local(row.ends_at),
      closed: false,
    });
  });

  it('answers a window with exact ranks, and leaves banned players out as the all-time boards do', async () => {
    const window = await board(app, server, 'charts/801', { period: 'week', around: p[0].uid, k: 1 });
    expect(window.status).toBe(200);
    expect(window.body).toMatchObject({
      rank: 2,
      entries: [
        entry(1, 1, { acc: 100, rating: 12 }),
        entry(0, 2, { acc: 99, rating: 11.5 }),
        entry(2, 3, { acc: 97, rating: 10.6667 }),
      ],
    });
    expect((await board(app, server, 'charts/801', { period: 'week', around: p[3].uid })).body).toMatchObject({
      rank: null,
      entries: [],
    });
    expect((await app.admin.post(`/admin/players/${p[1].uid}/ban`, { reason: 'test' })).status).toBe(200);
    try {
      for (const period of ['all', 'week']) {
        const top = (await board(app, server, 'charts/801', { period })).body as {
          entries: Array<{ uid: number; rank: number }>;
        };
        expect(top.entries.map((e) => [e.uid, e.rank])).toEqual([
          [p[0].uid, 1],
          [p[2].uid, 2],
        ]);
        expect((await board(app, server, 'charts/801', { period, around: p[1].uid })).body).toMatchObject({
          rank: null,
          entries: [],
        });
        expect((await board(app, server, 'charts/801', { period, around: p[2].uid, k: 0 })).body).toMatchObject({
          rank: 2,
        });
      }
    } finally {
      expect((await app.admin.delete(`/admin/players/${p[1].uid}/ban`)).status).toBe(204);
      p[1] = await loginPlayer(app, server, p[1]);
    }
  });

  it('answers the same period boards on the public API and the admin API (one service, one query)', async () => {
    const created = await app.admin.post('/admin/api-keys', { name: 'periods', scopes: ['read:boards'] });
    expect(created.status).toBe(201);
    const key = (created.body as { key: string }).key;
    for (const [path, query] of [
      ['atp', { period: 'week' }],
      ['charts/801', { period: 'month', around: p[0].uid, k: 1 }],
      ['charts/801', { period: 'season:test-season', limit: 2 }],
    ] as const) {
      const game = await board(app, server, path, query);
      expect(game.status).toBe(200);
      const pub = await app.http.get(`/public/v1/boards/${path}`, { token: key, query });
      expect({ path, status: pub.status, body: pub.body as unknown }).toEqual({ path, status: 200, body: game.body });
      const staff = await app.admin.get(`/admin/boards/${path}`, { query });
      expect({ path, status: staff.status, body: staff.body as unknown }).toEqual({
        path,
        status: 200,
        body: game.body,
      });
    }
    expect((await app.http.get('/public/v1/boards/atp', { token: key, query: { period: 'season:<b>' } })).status).toBe(
      400,
    );
  });

  it('refuses a malformed period (400) and answers 404 for a period, player or chart that does not exist', async () => {
    for (const period of ['year', 'season:', 'season:Bad', '0', 'day ', 'season:-x']) {
      const response = await board(app, server, 'atp', { period });
      expect({ period, status: response.status }).toEqual({ period, status: 400 });
    }
    expect((await board(app, server, 'atp', { period: '999999' })).status).toBe(404);
    expect((await board(app, server, 'atp', { period: 'season:nope' })).body).toMatchObject({
      message: 'No period season:nope',
    });
    expect((await board(app, server, 'atp', { period: 'week', around: '999999' })).status).toBe(404);
    expect((await board(app, server, 'charts/899', { period: 'week' })).status).toBe(404);
  });

  it('crosses a day boundary (injected clock): closes the day, archives it as last read, and counts new plays in the next day', async () => {
    const [day] = await app.sql<PeriodRow>(
      `SELECT id, ends_at FROM board_period WHERE kind = 'day' AND starts_at <= now() AND ends_at > now()`,
    );
    const reads = async () => ({
      atp: (await board(app, server, 'atp', { period: day.id })).body as Record<string, unknown>,
      chart: (await board(app, server, 'charts/801', { period: day.id })).body as Record<string, unknown>,
      window: (await board(app, server, 'charts/801', { period: day.id, around: p[2].uid, k: 1 })).body as Record<
        string,
        unknown
      >,
    });
    const lastLive = await reads();
    expect(lastLive.chart.entries).toHaveLength(3);

    clock.mockReturnValue(new Date(day.ends_at.getTime() + 1_000));
    await app.get(PeriodJobService).runOnce();
    const [closed] = await app.sql<PeriodRow>('SELECT closed_at, archived_at FROM board_period WHERE id = $1', [
      day.id,
    ]);
    expect(closed.closed_at).not.toBeNull();
    expect(closed.archived_at).not.toBeNull();
    const archivedRanks = () =>
      app.sql(
        `SELECT a.rank, a.uid::int AS uid FROM period_chart_rank_block b CROSS JOIN LATERAL unnest(b.ranks, b.uids) AS a(rank, uid)
          WHERE b.period_id = $1 AND b.level_id = 801 ORDER BY a.rank`,
        [day.id],
      );
    expect(await archivedRanks()).toEqual([
      { rank: 1, uid: p[1].uid },
      { rank: 2, uid: p[0].uid },
      { rank: 3, uid: p[2].uid },
    ]);

    // A play after the boundary counts in the new day, never in the closed one.
    await play(app, server, p[3], 801, { acc: 100 });
    const archived = await reads();
    const closedPeriod = { ...(lastLive.atp.period as object), closed: true };
    expect(archived).toEqual({
      atp: { ...lastLive.atp, period: closedPeriod },
      chart: { ...lastLive.chart, period: closedPeriod },
      window: { ...lastLive.window, period: closedPeriod },
    });
    const today = (await board(app, server, 'charts/801', { period: 'day' })).body as {
      period: { id: number; startsAt: string };
      entries: unknown[];
    };
    expect(today.period.id).not.toBe(Number(day.id));
    expect(today.period.startsAt).toBe(local(day.ends_at));
    expect(today.entries).toEqual([entry(3, 1, { acc: 100, rating: 12 })]);
    // A second run of the job changes nothing.
    const blockRows = `SELECT (SELECT count(*) FROM period_chart_rank_block)::int AS ranks,
                              (SELECT count(*) FROM period_chart_uid_block)::int AS uids`;
    const before = await app.sql(blockRows);
    expect(before[0]).toMatchObject({ ranks: expect.any(Number) as number });
    await app.get(PeriodJobService).runOnce();
    expect(await app.sql(blockRows)).toEqual(before);

    // An erasure (the erasure's own statements for the chart archive) leaves a gap in the archived
    // ranks: a window holds the ranks within k of the player's, never the next rows beyond the gap;
    // a top N holds the ranks up to N.
    for (const entry of PLAYER_DATA.filter((e) => e.table.startsWith('period_chart_') && e.table.endsWith('_block')))
      if ('set' in entry.erase)
        await app.sql(`UPDATE "${entry.table}" SET ${entry.erase.set} WHERE ${entry.where}`, [String(p[0].uid)]);
    expect(await archivedRanks()).toEqual([
      { rank: 1, uid: p[1].uid },
      { rank: 3, uid: p[2].uid },
    ]);
    const top2 = (await board(app, server, 'charts/801', { period: day.id, limit: 2 })).body as {
      entries: Array<{ rank: number; uid: number }>;
    };
    expect(top2.entries.map((e) => [e.rank, e.uid])).toEqual([[1, p[1].uid]]);
    expect(
      ((await board(app, server, 'charts/801', { period: day.id, around: p[0].uid, k: 1 })).body as { rank: unknown })
        .rank,
    ).toBeNull();
    const ranksAround = async (uid: number, k: number) =>
      (
        (await board(app, server, 'charts/801', { period: day.id, around: uid, k })).body as {
          entries: Array<{ rank: number; uid: number }>;
        }
      ).entries.map((e) => [e.rank, e.uid]);
    expect(await ranksAround(p[1].uid, 1)).toEqual([[1, p[1].uid]]);
    expect(await ranksAround(p[2].uid, 1)).toEqual([[3, p[2].uid]]);
    expect(await ranksAround(p[1].uid, 2)).toEqual([
      [1, p[1].uid],
      [3, p[2].uid],
    ]);

    // A ban after the close: the game's archived read stays frozen; the public API leaves the
    // player out (the rank a gap) and answers a window around them as an unknown uid, as on a live
    // board. Lifted, the player is back on the public archive.
    const created = await app.admin.post('/admin/api-keys', { name: 'archive-bans', scopes: ['read:boards'] });
    expect(created.status).toBe(201);
    const key = (created.body as { key: string }).key;
    const publicBoard = (query: Record<string, string | number>) =>
      app.http.get('/public/v1/boards/charts/801', { token: key, query });
    expect((await app.admin.post(`/admin/players/${p[2].uid}/ban`, { reason: 'after the close' })).status).toBe(200);
    try {
      const game = (await board(app, server, 'charts/801', { period: day.id })).body as {
        entries: Array<{ uid: number }>;
      };
      expect(game.entries.map((e) => e.uid)).toEqual([p[1].uid, p[2].uid]);
      const pub = await publicBoard({ period: day.id });
      expect({ status: pub.status, body: pub.body as unknown }).toEqual({
        status: 200,
        body: { ...game, entries: game.entries.filter((e) => e.uid !== p[2].uid) },
      });
      for (const k of [0, 2]) {
        const around = await publicBoard({ period: day.id, around: p[2].uid, k });
        expect({ k, status: around.status, body: around.body as unknown }).toEqual({
          k,
          status: 404,
          body: { error: 'NOT_FOUND', message: `No player with uid ${p[2].uid}` },
        });
      }
      const aroundOther = (await publicBoard({ period: day.id, around: p[1].uid, k: 2 })).body as {
        rank: number;
        entries: Array<{ rank: number; uid: number }>;
      };
      expect({ rank: aroundOther.rank, entries: aroundOther.entries.map((e) => [e.rank, e.uid]) }).toEqual({
        rank: 1,
        entries: [[1, p[1].uid]],
      });
    } finally {
      expect((await app.admin.delete(`/admin/players/${p[2].uid}/ban`)).status).toBe(204);
      p[2] = await loginPlayer(app, server, p[2]);
    }
    expect(
      ((await publicBoard({ period: day.id })).body as { entries: Array<{ uid: number }> }).entries.map((e) => e.uid),
    ).toEqual([p[1].uid, p[2].uid]);
    clock.mockReset();
  });
});

describe('Live period windows: every rank equal to a count over the stored rows (issue #44)', () => {
  it('with bans in force, lifted and run out, ties on ATP, accuracy and time, on the ATP board and a chart', async () => {
    const app = await startTestApp();
    try {
      await app.get(PeriodJobService).runOnce();
      await putCharts(app, [861, 862]);
      const server = await onlineServer(app);
      const accs = [100, 100, 99, 99, 99, 98, 97, 97, 96, 95, 100, 99];
      const players: TestPlayerSession[] = [];
      for (const acc of accs) {
        const player = await onlinePlayer(app, server);
        await play(app, server, player, 861, { acc });
        players.push(player);
      }
      for (const i of [4, 2, 0]) await play(app, server, players[i], 862, { acc: 98 });
      // Two reached 98 on 862 in the same millisecond (first_time_ms is the service's receipt time,
      // so set here): only the uid decides between them.
      await app.sql(
        `UPDATE period_chart_best SET first_time_ms = (SELECT min(first_time_ms) FROM period_chart_best WHERE level_id = 862)
          WHERE level_id = 862 AND uid = ANY($1::bigint[])`,
        [[players[4].uid, players[2].uid]],
      );
      const banned = [players[1], players[5]];
      for (const player of [...banned, players[3], players[7]])
        expect((await app.admin.post(`/admin/players/${player.uid}/ban`, { reason: 'test' })).status).toBe(200);
      expect((await app.admin.delete(`/admin/players/${players[3].uid}/ban`)).status).toBe(204);
      await app.sql(`UPDATE player_ban SET until = now() - interval '1 minute' WHERE uid = $1 AND lifted_at IS NULL`, [
        players[7].uid,
      ]);
      const bannedUids = new Set(banned.map((player) => String(player.uid)));
      const [week] = await app.sql<{ id: string }>(
        `SELECT id FROM board_period WHERE kind = 'week' AND starts_at <= now() AND ends_at > now()`,
      );

      // The boards as a brute force reads them: every stored row, banned players left out, sorted in TS.
      const atpRows = (
        await app.sql<{ uid: string; atp: string }>(
          'SELECT uid::text AS uid, atp::text AS atp FROM period_rating WHERE period_id = $1',
          [week.id],
        )
      )
        .filter((row) => !bannedUids.has(row.uid))
        .sort((a, b) => Number(b.atp) - Number(a.atp) || Number(a.uid) - Number(b.uid));
      const chartRows = async (levelId: number) =>
        (
          await app.sql<{ uid: string; acc: number; first_time_ms: string }>(
            `SELECT uid::text AS uid, acc, first_time_ms::text AS first_time_ms FROM period_chart_best
              WHERE period_id = $1 AND level_id = $2`,
            [week.id, levelId],
          )
        )
          .filter((row) => !bannedUids.has(row.uid))
          .sort(
            (a, b) =>
              b.acc - a.acc || Number(a.first_time_ms) - Number(b.first_time_ms) || Number(a.uid) - Number(b.uid),
          );
      const boards: Array<[string, Array<{ uid: string }>]> = [
        ['atp', atpRows],
        ['charts/861', await chartRows(861)],
        ['charts/862', await chartRows(862)],
      ];
      // Ties the boards must break: equal ATPs, equal accuracies, and on 862 an equal time.
      expect(new Set(atpRows.map((row) => (row as { atp: string }).atp)).size).toBeLessThan(atpRows.length);
      expect(boards[2][1].map((row) => row.uid)).toEqual(
        [players[2], players[4], players[0]].map((x) => String(x.uid)),
      );

      let checks = 0;
      for (const [path, rows] of boards) {
        for (const player of players) {
          const answer = await board(app, server, path, { period: 'week', around: player.uid, k: 2 });
          expect(answer.status).toBe(200);
          const at = rows.findIndex((row) => row.uid === String(player.uid));
          const body = answer.body as { rank: number | null; entries: Array<{ rank: number; uid: number }> };
          const expected =
            at < 0
              ? { rank: null, entries: [] }
              : {
                  rank: at + 1,
                  entries: rows
                    .slice(Math.max(0, at - 2), at + 3)
                    .map((row, i) => ({ rank: Math.max(0, at - 2) + i + 1, uid: Number(row.uid) })),
                };
          expect({
            path,
            uid: player.uid,
            rank: body.rank,
            entries: body.entries.map((e) => ({ rank: e.rank, uid: e.uid })),
          }).toEqual({ path, uid: player.uid, ...expected });
          checks++;
        }
      }
      expect(checks).toBe(36);
    } finally {
      await app.close();
    }
  }, 60_000);
});

// Two instances on one database need PostgreSQL and Redis.
(multiInstanceAvailable() ? describe : describe.skip)('Board periods on two instances', () => {
  it('agree on the period boards, and close and archive a period once when both run the job', async () => {
    const a = await startTestApp();
    let b: TestApp | null = null;
    try {
      b = await startTestApp({ shareWith: a });
      await Promise.all([a.get(PeriodJobService).runOnce(), b.get(PeriodJobService).runOnce()]);
      const server = await onlineServer(a);
      await putCharts(a, [811]);
      const players: TestPlayerSession[] = [];
      for (let i = 0; i < 3; i++) players.push(await onlinePlayer(a, server));
      await play(a, server, players[0], 811, { acc: 97 });
      await play(b, server, players[1], 811, { acc: 99 });
      await play(a, server, players[2], 811, { acc: 98 });
      const read = async (app: TestApp, period: string): Promise<unknown> =>
        (await board(app, server, 'charts/811', { period })).body as unknown;
      const fromA = await read(a, 'day');
      expect(await read(b, 'day')).toEqual(fromA);
      expect((fromA as { entries: Array<{ uid: number }> }).entries.map((e) => e.uid)).toEqual([
        players[1].uid,
        players[2].uid,
        players[0].uid,
      ]);
      const [day] = await a.sql<PeriodRow>(
        `SELECT id, ends_at FROM board_period WHERE kind = 'day' AND starts_at <= now() AND ends_at > now()`,
      );
      const after = new Date(day.ends_at.getTime() + 1_000);
      jest.spyOn(a.get(Clock), 'now').mockReturnValue(after);
      jest.spyOn(b.get(Clock), 'now').mockReturnValue(after);
      await Promise.all([a.get(PeriodJobService).runOnce(), b.get(PeriodJobService).runOnce()]);
      expect(
        await a.sql(
          `SELECT sum(cardinality(b.ranks))::int AS n, count(*)::int AS blocks FROM period_chart_rank_block b WHERE b.period_id = $1`,
          [day.id],
        ),
      ).toEqual([{ n: 3, blocks: 1 }]);
      const archivedA = await read(a, day.id);
      expect(await read(b, day.id)).toEqual(archivedA);
      expect(archivedA).toEqual({
        ...(fromA as object),
        period: { ...(fromA as { period: object }).period, closed: true },
      });
      const dayRows = await a.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM board_period WHERE kind = 'day' AND starts_at = $1`,
        [day.ends_at],
      );
      expect(dayRows).toEqual([{ n: 1 }]);
    } finally {
      await b?.close();
      await a.close();
    }
  });
});

// A second connection holding a lock while the service works needs PostgreSQL: the embedded
// database serves its clients' transactions one at a time.
(testDatabaseServerUrl() ? describe : describe.skip)('Windows counted in SQL go through one gate (issue #44)', () => {
  const REFUSED =
    'This window is counted in the database (a live period, or a group or country board), and this instance is ' +
    'counting as many of those as it may; retry later';
  const REFUSED_CALLER =
    'This window is counted in the database (a live period, or a group or country board), and this caller has one ' +
    'being counted and 16 waiting already; retry later';

  it('two at a time, one per caller: a flooding server holds one slot, another server takes the other; the rest 503; logins keep the pool', async () => {
    const app = await startTestApp();
    const locker = new Client({ connectionString: app.databaseUrl() });
    await locker.connect();
    try {
      await app.get(PeriodJobService).runOnce();
      await putCharts(app, [851]);
      const flooder = await onlineServer(app, { country: 'GT' });
      const other = await onlineServer(app, { country: 'GT' });
      const player = await onlinePlayer(app, flooder);
      await play(app, flooder, player, 851, { acc: 91 });
      const window = { period: 'day', around: player.uid, k: 1 };
      const before = await board(app, other, 'atp', window);
      expect(before.status).toBe(200);
      expect(before.body).toMatchObject({ board: 'atp', rank: 1, entries: [{ rank: 1, uid: player.uid }] });
      const totals = app.get(LeaderboardService).windowCountTotals();

      // A live period's window counts the rows ahead in period_rating: held here by the lock.
      const lockerPid = (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE period_rating IN ACCESS EXCLUSIVE MODE');
      const waitingOnLock = async () =>
        Number(
          (
            await app.sql<{ n: string }>(
              `SELECT count(*)::text AS n FROM pg_stat_activity
                WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> $1`,
              [lockerPid],
            )
          )[0].n,
        );
      const refusedBody = (message: string) => ({ error: 'UNAVAILABLE', message });
      const expectRefused = (answer: Awaited<ReturnType<typeof board>>, message: string) => {
        expect(answer.status).toBe(503);
        expect(answer.headers.get('retry-after')).toBe('5');
        expect(answer.body).toEqual(refusedBody(message));
      };

      // One server asks twenty at once: one is counted, sixteen wait their turn, three are refused at once.
      const flood = Array.from({ length: 20 }, () => board(app, flooder, 'atp', window));
      for (let i = 0; i < 100 && (await waitingOnLock()) < 1; i++) await sleep(50);
      await sleep(300);
      // The flooder holds one connection; the gate's second slot is still free
      // (without the per-caller rule it holds both, and the other server's window waits behind it).
      expect(await waitingOnLock()).toBe(1);
      const settled = await Promise.all(flood.map((answer) => Promise.race([answer, sleep(0).then(() => null)])));
      const refusedAtOnce = settled.filter((answer) => answer !== null);
      expect(refusedAtOnce).toHaveLength(3);
      for (const answer of refusedAtOnce) expectRefused(answer, REFUSED_CALLER);

      // Another server's window takes the free slot at once, past the flooder's sixteen in line.
      const otherWindow = board(app, other, 'atp', window);
      for (let i = 0; i < 100 && (await waitingOnLock()) < 2; i++) await sleep(50);
      expect(await waitingOnLock()).toBe(2);
      // Its country window waits behind its own (one at a time per caller), in the same gate.
      const otherScoped = board(app, other, 'atp', { country: 'GT', around: player.uid, k: 1 });
      // Eight of the pool's ten connections are free: a login is answered while the lock holds.
      const login = await onlinePlayer(app, other);
      expect(login.uid).toBeDefined();
      await sleep(5_500);
      expect(await waitingOnLock()).toBe(2);
      await locker.query('ROLLBACK');

      const flooded = await Promise.all(flood);
      expect(flooded.filter((answer) => answer.status === 200).map((answer) => answer.body as unknown)).toEqual([
        before.body,
      ]);
      const waitedOut = flooded.filter((answer) => answer.status !== 200 && !refusedAtOnce.includes(answer));
      expect(waitedOut).toHaveLength(16);
      for (const answer of waitedOut) expectRefused(answer, REFUSED);
      const otherAnswer = await otherWindow;
      expect(otherAnswer.status).toBe(200);
      expect(otherAnswer.body).toEqual(before.body);
      // The scoped window went through the same gate: it waited its 3 s behind the other server's own.
      expectRefused(await otherScoped, REFUSED);
      expect(app.get(LeaderboardService).windowCountTotals()).toEqual({
        counted: totals.counted + 2,
        refused: totals.refused + 3 + 16 + 1,
      });
      // Nothing was held back: the same windows answer now.
      expect((await board(app, flooder, 'atp', window)).body).toEqual(before.body);
      expect((await board(app, other, 'atp', { country: 'GT', around: player.uid, k: 1 })).status).toBe(200);
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
      await app.close();
    }
  }, 60_000);
});

describe('The period step against the all-time step (rhythmc_count_period_play, issue #44)', () => {
  it('over random plays (improving or not, tied, above 30 charts a player), every open period holds the all-time bests and ATP, also after a recompute', async () => {
    const app = await startTestApp();
    try {
      await app.get(PeriodJobService).runOnce();
      const server = await onlineServer(app);
      const levels = Array.from({ length: 36 }, (_, i) => 900 + i);
      const charts = await app.admin.put(
        '/admin/charts',
        levels.map((levelId, i) => ({
          levelId,
          name: `Chart ${levelId}`,
          difficultyConstant: 5 + (i % 7) * 1.5,
          version: '1.0',
          active: true,
        })),
      );
      expect(charts.status).toBe(200);
      const players = [await onlinePlayer(app, server), await onlinePlayer(app, server)];
      // A fixed sequence (a 32-bit linear congruential generator): the same plays on every run.
      let seed = 44;
      const next = (n: number) => {
        seed = (Math.imul(seed, 1_664_525) + 1_013_904_223) >>> 0;
        return Math.floor((seed / 2 ** 32) * n); // the high bits: the low ones of an LCG repeat
      };
      const accs = [94, 96.5, 98, 99, 99.5, 100];
      for (let i = 0; i < 200; i++)
        await play(app, server, players[i % 2], levels[next(levels.length)], { acc: accs[next(accs.length)] });

      const uids = players.map((player) => player.uid);
      const expectPeriodsHoldAllTime = async () => {
        const allTimeBests = await app.sql(
          `SELECT uid::text AS uid, level_id, acc, first_time_ms::text AS first, record_id::text AS record, rating
             FROM player_chart_best WHERE uid = ANY($1) ORDER BY uid, level_id`,
          [uids],
        );
        const allTimeAtp = await app.sql(
          'SELECT uid::text AS uid, atp::text AS atp FROM player_rating WHERE uid = ANY($1) ORDER BY uid',
          [uids],
        );
        const open = await app.sql<{ id: string; kind: string }>(
          'SELECT id::text AS id, kind FROM board_period WHERE closed_at IS NULL ORDER BY id',
        );
        expect(open.map((period) => period.kind)).toEqual(['day', 'week', 'month']);
        for (const period of open) {
          const bests = await app.sql(
            `SELECT uid::text AS uid, level_id, acc, first_time_ms::text AS first, record_id::text AS record, rating
               FROM period_chart_best WHERE period_id = $1 ORDER BY uid, level_id`,
            [period.id],
          );
          expect({ kind: period.kind, bests }).toEqual({ kind: period.kind, bests: allTimeBests });
          const atps = await app.sql(
            'SELECT uid::text AS uid, atp::text AS atp FROM period_rating WHERE period_id = $1 ORDER BY uid',
            [period.id],
          );
          expect({ kind: period.kind, atps }).toEqual({ kind: period.kind, atps: allTimeAtp });
        }
        return allTimeAtp;
      };
      const perPlayer = await app.sql<{ charts: number }>(
        'SELECT count(*)::int AS charts FROM player_chart_best WHERE uid = ANY($1) GROUP BY uid',
        [uids],
      );
      expect(perPlayer.map((row) => row.charts > 30)).toEqual([true, true]);
      const before = await expectPeriodsHoldAllTime();

      // A recompute moves the periods with the all-time boards: plays of a chart not yet defined
      // (stored on a placeholder, counted nowhere) join them once it is, and new constants re-rate.
      await play(app, server, players[0], 990, { acc: 100 });
      await play(app, server, players[1], 990, { acc: 99 });
      const defined = await app.admin.put(
        '/admin/charts',
        [...levels.slice(0, 10), 990].map((levelId) => ({
          levelId,
          name: `Chart ${levelId}`,
          difficultyConstant: 15.5,
          version: '1.1',
          active: true,
        })),
      );
      expect(defined.status).toBe(200);
      const recompute = await app.admin.post('/admin/ratings/recompute');
      expect(recompute.status).toBe(200);
      const after = await expectPeriodsHoldAllTime();
      expect(after).not.toEqual(before);
      const [counted] = await app.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM period_chart_best WHERE level_id = 990 AND uid = ANY($1)`,
        [uids],
      );
      expect(counted.n).toBe(6);
    } finally {
      await app.close();
    }
  }, 60_000);
});
