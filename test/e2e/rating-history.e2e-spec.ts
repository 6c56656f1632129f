import { onlineServer, TestServerSession } from '../factories/server.factory';
import { onlinePlayer, TestPlayerSession } from '../factories/player.factory';
import { gameplayPayload, uploadPlay } from '../factories/upload.factory';
import { multiInstanceAvailable, startTestApp, TestApp } from '../support/test-app';
import { Clock } from '../../src/common/clock';
import { formatDayNumber } from '../../src/common/time';
import { RatingHistoryService, SNAPSHOT_GRACE_MS } from '../../src/upload/history/rating-history.service';

let time = Date.now() - 3_600_000;

async function upload(
  app: TestApp,
  server: TestServerSession,
  player: TestPlayerSession,
  levelID: number,
  overrides: Record<string, unknown>,
): Promise<{ atp: number; siteRank: number | null }> {
  return (await uploadPlay(app, server, player, gameplayPayload(levelID, (time += 1_000), overrides))) as unknown as {
    atp: number;
    siteRank: number | null;
  };
}

const DAY_MS = 86_400_000;
/**
 * The day history rows say: the real date does not matter, every play is moved to the day it
 * stands for. Days are in PERIOD_TIME_ZONE, UTC unless a test sets it.
 */
const BASE = Math.floor(Date.now() / DAY_MS) - 20;
const at = (day: number, ms: number) => new Date(day * DAY_MS + ms);

describe('Rating history', () => {
  let app: TestApp;
  let server: TestServerSession;
  let p: TestPlayerSession[];
  let now = at(BASE, 3_600_000);
  let readsKey: string;

  /** Moves every play not yet placed (received "today" by the database) to `day`, at noon. */
  const placePlays = (day: number) =>
    app.sql(`UPDATE play_record SET received_at = $1 WHERE received_at > now() - interval '1 hour'`, [
      at(day, 12 * 3_600_000),
    ]);
  const take = () => app.get(RatingHistoryService).takeDueDays();
  const runs = () => app.sql('SELECT day, players FROM rating_history_run ORDER BY day');
  const serverHistory = (uid: string | number) =>
    app.http.get(`/server/leaderboards/players/${uid}/history`, { token: server.accessToken });

  beforeAll(async () => {
    app = await startTestApp();
    // Before the service's first look (10 s after its start), so that it never sees the real date.
    jest.spyOn(app.get(Clock), 'now').mockImplementation(() => now);
    server = await onlineServer(app);
    const charts = [601, 602, 603].map((levelId) => ({
      levelId,
      name: `Chart ${levelId}`,
      difficultyConstant: 10,
      version: '1.0',
      active: true,
    }));
    expect((await app.admin.put('/admin/charts', charts)).status).toBe(200);
    p = [];
    for (let i = 0; i < 4; i++) p.push(await onlinePlayer(app, server));
    const key = await app.admin.post('/admin/api-keys', { name: 'history', scopes: ['read:players'] });
    readsKey = (key.body as { key: string }).key;
  });
  afterAll(() => app.close());

  it('takes each closed day once, with the ATP, site rank and counted plays of every player who played that day', async () => {
    // Day BASE: P0 100 % on 601; P1 99 % on 601 and a failed play (not counted); P3 only fails.
    await upload(app, server, p[0], 601, { acc: 100 });
    await upload(app, server, p[1], 601, { acc: 99 });
    await upload(app, server, p[1], 602, { acc: 10, pass: false });
    await upload(app, server, p[3], 601, { acc: 10, pass: false });
    await placePlays(BASE);

    // Within the grace after midnight nothing is due; the first snapshot ever takes only "yesterday".
    now = at(BASE + 1, SNAPSHOT_GRACE_MS - 1_000);
    // (The service's own timer may take a day first, at the same clock: the stored days are what is checked.)
    await take();
    expect(await runs()).toEqual([{ day: BASE - 1, players: 0 }]);
    now = at(BASE + 1, SNAPSHOT_GRACE_MS + 1_000);
    await take();
    await take();
    expect(await runs()).toEqual([
      { day: BASE - 1, players: 0 },
      { day: BASE, players: 2 },
    ]);

    // Day BASE + 1: P1 takes the lead (100 % on 602 and 601: ATP 0.8), P0 adds 100 % on 603 (0.8, lower uid first),
    // P2 plays twice and is then banned (no rank).
    await upload(app, server, p[1], 602, { acc: 100 });
    await upload(app, server, p[1], 601, { acc: 100 });
    await upload(app, server, p[0], 603, { acc: 100 });
    await upload(app, server, p[2], 601, { acc: 98 });
    await upload(app, server, p[2], 602, { acc: 98 });
    expect((await app.admin.post(`/admin/players/${p[2].uid}/ban`, { reason: 'test' })).status).toBe(200);
    await placePlays(BASE + 1);
    now = at(BASE + 2, 3_600_000);
    await take();
    expect((await runs()).at(-1)).toEqual({ day: BASE + 1, players: 3 });

    const rows = await app.sql(
      `SELECT bucket::text, day, slots, atp_e4, site_rank, plays FROM rating_history_day ORDER BY day, bucket`,
    );
    const entries = rows.flatMap((row) =>
      (row.slots as number[]).map((slot, i) => ({
        day: row.day,
        uid: Number(row.bucket) * 256 + slot,
        atpE4: (row.atp_e4 as number[])[i],
        rank: (row.site_rank as number[])[i],
        plays: (row.plays as number[])[i],
      })),
    );
    // ATP: the 30 best ratings / 30; 100 % on a constant-10 chart is 12, 99 % is 11.5, 98 % is 11.
    expect(entries).toEqual([
      { day: BASE, uid: p[0].uid, atpE4: 4_000, rank: 1, plays: 1 },
      { day: BASE, uid: p[1].uid, atpE4: 3_833, rank: 2, plays: 1 },
      { day: BASE + 1, uid: p[0].uid, atpE4: 8_000, rank: 1, plays: 1 },
      { day: BASE + 1, uid: p[1].uid, atpE4: 8_000, rank: 2, plays: 2 },
      { day: BASE + 1, uid: p[2].uid, atpE4: 7_333, rank: 0, plays: 2 },
    ]);
  });

  it('answers the last 90 closed days on the game server, admin and public routes, banned players as their boards do', async () => {
    const p0 = [
      { date: formatDayNumber(BASE), atp: 0.4, siteRank: 1, plays: 1 },
      { date: formatDayNumber(BASE + 1), atp: 0.8, siteRank: 1, plays: 1 },
    ];
    expect(await serverHistory(p[0].uid)).toMatchObject({ status: 200, body: { uid: Number(p[0].uid), days: p0 } });
    expect((await app.admin.get(`/admin/players/${p[0].uid}/history`)).body).toEqual({
      uid: Number(p[0].uid),
      days: p0,
    });
    const pub = await app.http.get(`/public/v1/players/${p[0].uid}/history`, { token: readsKey });
    expect(pub.status).toBe(200);
    expect(pub.body).toEqual({ uid: Number(p[0].uid), days: p0 });

    // P2 is banned: no days for game servers, 404 on the public API (as its profile), everything for staff.
    expect(await serverHistory(p[2].uid)).toMatchObject({ status: 200, body: { uid: Number(p[2].uid), days: [] } });
    expect((await app.http.get(`/public/v1/players/${p[2].uid}/history`, { token: readsKey })).status).toBe(404);
    expect((await app.admin.get(`/admin/players/${p[2].uid}/history`)).body).toEqual({
      uid: Number(p[2].uid),
      days: [{ date: formatDayNumber(BASE + 1), atp: 0.7333, siteRank: null, plays: 2 }],
    });

    // A player who never had a counted play has no days; the window is the last 90 closed days.
    expect((await serverHistory(p[3].uid)).body).toEqual({ uid: Number(p[3].uid), days: [] });
    now = at(BASE + 91, 3_600_000);
    expect((await serverHistory(p[0].uid)).body).toEqual({ uid: Number(p[0].uid), days: [p0[1]] });
    now = at(BASE + 92, 3_600_000);
    expect((await serverHistory(p[0].uid)).body).toEqual({ uid: Number(p[0].uid), days: [] });
    now = at(BASE + 2, 3_600_000);
  });

  it('refuses a uid that is not a positive integer (400) and answers 404 for an unknown player', async () => {
    for (const uid of ['abc', '0', '-1', '1.5', '1e3', '99999999999999999999', '%20']) {
      expect([uid, (await serverHistory(uid)).status]).toEqual([uid, 400]);
      expect([uid, (await app.admin.get(`/admin/players/${uid}/history`)).status]).toEqual([uid, 400]);
      const pub = await app.http.get(`/public/v1/players/${uid}/history`, { token: readsKey });
      expect([uid, pub.status]).toEqual([uid, 400]);
    }
    for (const response of [
      await serverHistory(987654321),
      await app.admin.get('/admin/players/987654321/history'),
      await app.http.get('/public/v1/players/987654321/history', { token: readsKey }),
    ])
      expect(response).toMatchObject({
        status: 404,
        body: { error: 'NOT_FOUND', message: 'No player with uid 987654321' },
      });
    expect((await app.http.get(`/server/leaderboards/players/${p[0].uid}/history`)).status).toBe(401);
    expect(
      (await app.http.get(`/public/v1/players/${p[0].uid}/history`, { query: { x: 1 }, token: readsKey })).status,
    ).toBe(400);
  });

  it('catches up on the days missed while no instance ran, each taken once', async () => {
    await upload(app, server, p[1], 603, { acc: 100 });
    await placePlays(BASE + 3);
    now = at(BASE + 6, 3_600_000);
    await take();
    await take();
    expect((await runs()).slice(-4)).toEqual([
      { day: BASE + 2, players: 0 },
      { day: BASE + 3, players: 1 },
      { day: BASE + 4, players: 0 },
      { day: BASE + 5, players: 0 },
    ]);
    expect((await serverHistory(p[1].uid)).body.days).toEqual([
      { date: formatDayNumber(BASE), atp: 0.3833, siteRank: 2, plays: 1 },
      { date: formatDayNumber(BASE + 1), atp: 0.8, siteRank: 2, plays: 2 },
      { date: formatDayNumber(BASE + 3), atp: 1.2, siteRank: 1, plays: 1 },
    ]);
  });

  (multiInstanceAvailable() ? it : it.skip)('two instances take each day once (the advisory lock)', async () => {
    const second = await startTestApp({ shareWith: app });
    try {
      jest.spyOn(second.get(Clock), 'now').mockImplementation(() => now);
      now = at(BASE + 12, 3_600_000);
      const [a, b] = await Promise.all([take(), second.get(RatingHistoryService).takeDueDays()]);
      expect(a.filter((day) => b.includes(day))).toEqual([]);
      expect((await runs()).map((row) => row.day)).toEqual(
        [-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11].map((d) => BASE + d),
      );
    } finally {
      await second.close();
    }
  });

  it("an erasure takes the player out of every day, the block's other players stay", async () => {
    const before = (await serverHistory(p[1].uid)).body;
    const exported = await app.admin.post(`/admin/players/${p[0].uid}/export`);
    expect(exported.body.tables.ratingHistory).toEqual([
      { day: BASE, atp_e4: 4_000, site_rank: 1, plays: 1 },
      { day: BASE + 1, atp_e4: 8_000, site_rank: 1, plays: 1 },
    ]);
    const response = await app.admin.post(`/admin/players/${p[0].uid}/erase`, { confirm: p[0].username });
    expect(response.status).toBe(200);
    expect((await app.admin.get(`/admin/players/${p[0].uid}/history`)).status).toBe(404);
    const left = await app.sql(
      `SELECT count(*)::int AS n FROM rating_history_day WHERE bucket = $1::bigint >> 8 AND ($1::bigint & 255)::smallint = ANY (slots)`,
      [p[0].uid],
    );
    expect(left).toEqual([{ n: 0 }]);
    expect((await serverHistory(p[1].uid)).body).toEqual(before);
  });
});

describe('Rating history in PERIOD_TIME_ZONE', () => {
  it('takes a day only once it has ended, where the clocks fall back at 01:00 and midnight comes twice', async () => {
    // America/Havana, 2026-11-01: 01:00 (UTC-4) goes back to 00:00 (UTC-5). From 04:00 UTC the date
    // is already Nov 1, but Oct 31 ends at the second midnight, 05:00 UTC (the boards' day periods' rule).
    const app = await startTestApp({ env: { PERIOD_TIME_ZONE: 'America/Havana' } });
    try {
      const oct31 = Date.UTC(2026, 9, 31) / DAY_MS;
      let now = new Date(Date.UTC(2026, 10, 1, 4, 33));
      jest.spyOn(app.get(Clock), 'now').mockImplementation(() => now);
      const server = await onlineServer(app);
      const chart = { levelId: 612, name: 'Chart 612', difficultyConstant: 10, version: '1.0', active: true };
      expect((await app.admin.put('/admin/charts', [chart])).status).toBe(200);
      const first = await onlinePlayer(app, server);
      await upload(app, server, first, 612, { acc: 100 });
      await app.sql('UPDATE play_record SET received_at = $1 WHERE uid = $2', [
        new Date(Date.UTC(2026, 10, 1, 4, 10)),
        first.uid,
      ]);
      // 04:33 UTC, the first 00:33: Oct 31 is not over.
      expect(await app.get(RatingHistoryService).takeDueDays()).toEqual([]);
      // A play at 04:50 UTC: the first 00:50 on the clock, still inside Oct 31 by the day's bounds.
      const second = await onlinePlayer(app, server);
      await upload(app, server, second, 612, { acc: 99 });
      await app.sql('UPDATE play_record SET received_at = $1 WHERE uid = $2', [
        new Date(Date.UTC(2026, 10, 1, 4, 50)),
        second.uid,
      ]);
      now = new Date(Date.UTC(2026, 10, 1, 5, 0) + SNAPSHOT_GRACE_MS + 60_000);
      expect(await app.get(RatingHistoryService).takeDueDays()).toEqual([oct31]);
      expect(await app.sql('SELECT day, players FROM rating_history_run ORDER BY day')).toEqual([
        { day: oct31, players: 2 },
      ]);
    } finally {
      await app.close();
    }
  });

  it("takes the zone's calendar day (the boards' day periods' zone), not the process time zone", async () => {
    // Pacific/Kiritimati is UTC+14 all year: UTC day D 11:00 is its day D+1 01:00; UTC D 09:00 is its D 23:00.
    const zone = 'Pacific/Kiritimati';
    const app = await startTestApp({ env: { PERIOD_TIME_ZONE: zone } });
    try {
      let now = at(BASE + 1, 10 * 3_600_000 + SNAPSHOT_GRACE_MS + 60_000); // Kiritimati: day BASE + 2, 00:03
      jest.spyOn(app.get(Clock), 'now').mockImplementation(() => now);
      const server = await onlineServer(app);
      const chart = { levelId: 611, name: 'Chart 611', difficultyConstant: 10, version: '1.0', active: true };
      expect((await app.admin.put('/admin/charts', [chart])).status).toBe(200);
      const late = await onlinePlayer(app, server);
      const early = await onlinePlayer(app, server);
      await upload(app, server, late, 611, { acc: 100 });
      await app.sql(`UPDATE play_record SET received_at = $1 WHERE uid = $2`, [at(BASE, 11 * 3_600_000), late.uid]);
      await upload(app, server, early, 611, { acc: 99 });
      await app.sql(`UPDATE play_record SET received_at = $1 WHERE uid = $2`, [at(BASE, 9 * 3_600_000), early.uid]);

      // The first snapshot takes only yesterday: Kiritimati's day BASE + 1, which holds only the late play.
      await app.get(RatingHistoryService).takeDueDays();
      expect(await app.sql('SELECT day, players FROM rating_history_run ORDER BY day')).toEqual([
        { day: BASE + 1, players: 1 },
      ]);
      // Read on Kiritimati's day BASE + 2: the last closed day is BASE + 1.
      const read = await app.admin.get(`/admin/players/${late.uid}/history`);
      expect(read.body).toEqual({
        uid: late.uid,
        days: [{ date: formatDayNumber(BASE + 1), atp: 0.4, siteRank: 1, plays: 1 }],
      });
      // One UTC hour before Kiritimati's midnight, "today" is still its day BASE + 1: day BASE + 1 is not closed.
      now = at(BASE + 1, 9 * 3_600_000);
      expect((await app.admin.get(`/admin/players/${late.uid}/history`)).body).toEqual({ uid: late.uid, days: [] });
    } finally {
      await app.close();
    }
  });
});
