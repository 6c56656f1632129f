import { onlineServer, TestServerSession } from '../factories/server.factory';
import { onlinePlayer, TestPlayerSession } from '../factories/player.factory';
import { GameplayPayload, gameplayPayload } from '../factories/upload.factory';
import { multiInstanceAvailable, startTestApp, TestApp } from '../support/test-app';
import { badLines, badRequest } from '../support/bad-request';

/** Plays of the last hour, one second apart (the record key is player, level, time). */
let clock = Date.now() - 3_600_000;
const nextTime = () => (clock += 1_000);
const HOUR = 3_600_000;

function record(
  server: TestServerSession,
  player: Pick<TestPlayerSession, 'uid' | 'accessToken'>,
  payload: GameplayPayload,
) {
  return {
    player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: payload.time + 250 },
    server: { serverID: server.serverID, serverName: server.body.serverName as string, country: 'DE' },
    payload,
  };
}

async function putCharts(
  app: TestApp,
  charts: Array<{ levelId: number; constant: number; notes?: number }>,
): Promise<void> {
  const response = await app.admin.put(
    '/admin/charts',
    charts.map((c) => ({
      levelId: c.levelId,
      name: `Chart ${c.levelId}`,
      difficultyConstant: c.constant,
      version: '1.0',
      active: true,
      ...(c.notes ? { notes: c.notes } : {}),
    })),
  );
  if (response.status !== 200) throw new Error(`putCharts: ${response.status} ${response.text}`);
}

/** The factory's play has 377 judged notes (perfect 370, great 7, miss 0) and a 355 combo. */
const JUDGED = 377;

describe('Score integrity', () => {
  let app: TestApp;
  let server: TestServerSession;

  const upload = (player: TestPlayerSession, levelID: number, overrides: Record<string, unknown> = {}) =>
    app.http
      .post('/player/upload', record(server, player, gameplayPayload(levelID, nextTime(), overrides)), {
        token: server.accessToken,
      })
      .then((response) => {
        if (response.status !== 200) throw new Error(`upload: ${response.status} ${response.text}`);
        return response.body as Record<string, unknown>;
      });
  /** A play that changes nothing (pass: false): its answer shows the player's current standing. */
  const look = (player: TestPlayerSession, levelID: number) => upload(player, levelID, { pass: false, acc: 10 });
  const lastRecord = (player: TestPlayerSession) =>
    app
      .sql<{ id: string; flags: string[] }>(
        'SELECT id, flags FROM play_record WHERE uid = $1 ORDER BY id DESC LIMIT 1',
        [player.uid],
      )
      .then((rows) => rows[0]);

  beforeAll(async () => {
    app = await startTestApp();
    server = await onlineServer(app);
    await putCharts(app, [
      { levelId: 401, constant: 10 },
      { levelId: 402, constant: 10, notes: JUDGED },
      { levelId: 403, constant: 12 },
    ]);
  });
  afterAll(async () => {
    await app.close();
  });

  describe('each check flags a play instead of ranking it', () => {
    const NOTHING = { atp: 0, siteRank: null, trackRank: null, playRating: 0, personalBest: false };
    const COUNTED = {
      atp: 0.4,
      siteRank: expect.any(Number),
      trackRank: expect.any(Number),
      playRating: 12,
      personalBest: true,
    };

    it.each<[string, number, Record<string, unknown>, Record<string, unknown>]>([
      [
        'fullCombo',
        401,
        { fullCombo: true },
        { fullCombo: true, acc: 99, tapStats: { perfect: 310, great: 4, miss: 1 } },
      ],
      [
        'allPerfect',
        401,
        {
          allPerfect: true,
          fullCombo: true,
          tapStats: { perfect: 315, great: 0, miss: 0 },
          holdStats: { perfect: 42, great: 0, miss: 0 },
          lookStats: { perfect: 8, great: 0, miss: 0 },
        },
        { allPerfect: true },
      ],
      ['maxCombo', 401, { maxCombo: JUDGED }, { maxCombo: JUDGED + 1 }],
      ['noteCount', 402, {}, { tapStats: { perfect: 312, great: 4, miss: 0 } }],
      // One miss in 1,377 notes: inside the accuracy check's tolerance, so perfectAccuracy alone fails.
      ['perfectAccuracy', 401, { acc: 100 }, { acc: 100, tapStats: { perfect: 1310, great: 4, miss: 1 } }],
      // The play: 99.999 % with no note judged. acc 100 with 7 greats counts (a great may count fully).
      [
        'accuracy',
        401,
        {},
        {
          acc: 99.999,
          maxCombo: 0,
          tapStats: { perfect: 0, great: 0, miss: 0 },
          holdStats: { perfect: 0, great: 0, miss: 0 },
          dodgeStats: { perfect: 0, great: 0, miss: 0 },
          lookStats: { perfect: 0, great: 0, miss: 0 },
        },
      ],
      // 370 perfect of 377 notes allow 98.14 % at least (98.04 with the tolerance).
      [
        'accuracy',
        401,
        { tapStats: { perfect: 311, great: 4, miss: 0 } },
        { acc: 97.9, tapStats: { perfect: 311, great: 4, miss: 0 } },
      ],
      ['time', 401, { time: Date.now() - 23 * HOUR }, { time: Date.now() - 25 * HOUR }],
      ['time', 401, { time: Date.now() + 60_000 }, { time: Date.now() + 10 * 60_000 }],
    ])(
      '%s: a consistent play counts, an inconsistent one is stored flagged and changes nothing',
      async (check, level, passing, failing) => {
        const cheater = await onlinePlayer(app, server);
        expect(await upload(cheater, level, { acc: 100, ...failing })).toEqual(NOTHING);
        expect(await lastRecord(cheater)).toEqual({ id: expect.any(String), flags: [check] });
        expect(
          await app.sql(
            'SELECT 1 FROM player_chart_best WHERE uid = $1 UNION ALL SELECT 1 FROM player_rating WHERE uid = $1',
            [cheater.uid],
          ),
        ).toEqual([]);

        const honest = await onlinePlayer(app, server);
        expect(await upload(honest, level, { acc: 100, ...passing })).toEqual(COUNTED);
        expect(await lastRecord(honest)).toEqual({ id: expect.any(String), flags: [] });
      },
    );

    it('reports every failed check of one play, and answers a resent copy the same way', async () => {
      const player = await onlinePlayer(app, server);
      const body = record(
        server,
        player,
        gameplayPayload(402, 1, {
          acc: 100,
          fullCombo: true,
          allPerfect: true,
          maxCombo: 99_999,
          tapStats: { perfect: 40, great: 10, miss: 50 },
        }),
      );
      const first = await app.http.post('/player/upload', body, { token: server.accessToken });
      const again = await app.http.post('/player/upload', body, { token: server.accessToken });
      expect([first.status, again.status]).toEqual([200, 200]);
      expect(first.body).toEqual(NOTHING);
      expect(again.body).toEqual(NOTHING);
      expect(await app.sql('SELECT flags FROM play_record WHERE uid = $1', [player.uid])).toEqual([
        { flags: ['fullCombo', 'allPerfect', 'maxCombo', 'noteCount', 'perfectAccuracy', 'accuracy', 'time'] },
      ]);
    });

    it('runs only the checks SCORE_CHECKS_DISABLED leaves on', async () => {
      // accuracy would flag the second play too (acc 100 with a miss in 377 notes).
      const lenient = await startTestApp({ env: { SCORE_CHECKS_DISABLED: 'time,maxCombo,accuracy' } });
      try {
        const [s] = [await onlineServer(lenient)];
        await lenient.admin.put('/admin/charts', [
          { levelId: 401, name: 'Chart 401', difficultyConstant: 10, version: '1.0', active: true },
        ]);
        const player = await onlinePlayer(lenient, s);
        const send = (overrides: Record<string, unknown>) =>
          lenient.http.post(
            '/player/upload',
            record(s, player, gameplayPayload(401, nextTime(), { acc: 100, ...overrides })),
            { token: s.accessToken },
          );
        expect((await send({ time: 1, maxCombo: 99_999 })).body).toEqual({
          atp: 0.4,
          siteRank: 1,
          trackRank: 1,
          playRating: 12,
          personalBest: true,
        });
        expect((await send({ fullCombo: true, tapStats: { perfect: 310, great: 4, miss: 1 } })).body).toMatchObject({
          playRating: 0,
          personalBest: false,
        });
        expect(await lenient.sql('SELECT flags FROM play_record WHERE uid = $1 ORDER BY id', [player.uid])).toEqual([
          { flags: [] },
          { flags: ['fullCombo', 'perfectAccuracy'] },
        ]);
      } finally {
        await lenient.close();
      }
    });
  });

  describe('placeholder charts', () => {
    it('stores plays on an unknown level unranked; they count once the chart is defined and ratings are recomputed', async () => {
      const player = await onlinePlayer(app, server);
      expect(await upload(player, 480_001, { acc: 100 })).toEqual({
        atp: 0,
        siteRank: null,
        trackRank: null,
        playRating: 0,
        personalBest: false,
      });
      await putCharts(app, [{ levelId: 480_001, constant: 9 }]);
      expect(await app.sql('SELECT placeholder FROM chart WHERE level_id = 480001')).toEqual([{ placeholder: false }]);
      expect((await app.admin.post('/admin/ratings/recompute')).status).toBe(200);
      // 9 + 2 = 11; 11 / 30 = 0.3667
      expect(await look(player, 480_001)).toEqual({
        atp: 0.3667,
        siteRank: expect.any(Number),
        trackRank: 1,
        playRating: 0,
        personalBest: false,
      });
    });
  });

  describe('review: flag → approve, void → ranks move, restore', () => {
    let p: TestPlayerSession[];

    beforeAll(async () => {
      await putCharts(app, [{ levelId: 450, constant: 10 }]);
      p = [];
      for (let i = 0; i < 3; i++) p.push(await onlinePlayer(app, server));
    });

    it('lists a flagged play, approves it into the ranks as accepted then, and lists it as approved', async () => {
      // p0 reaches 100 % with a flagged play (maxCombo), then p1 reaches 100 % cleanly.
      expect(await upload(p[0], 450, { acc: 100, maxCombo: 5_000 })).toMatchObject({ playRating: 0, trackRank: null });
      const flagged = await lastRecord(p[0]);
      expect(await upload(p[1], 450, { acc: 100 })).toMatchObject({ trackRank: 1, personalBest: true });

      const queue = await app.admin.get(`/admin/plays?state=flagged&check=maxCombo&uid=${p[0].uid}`);
      expect(queue.status).toBe(200);
      expect(queue.body).toEqual({
        items: [
          {
            id: Number(flagged.id),
            uid: p[0].uid,
            username: expect.any(String),
            levelId: 450,
            acc: 100,
            pass: true,
            time: expect.any(Number),
            receivedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/),
            serverID: server.serverID,
            flags: ['maxCombo'],
            review: 'flagged',
            voidReason: null,
            counts: false,
          },
        ],
        nextCursor: null,
      });

      const approved = await app.admin.post(`/admin/plays/${flagged.id}/approve`);
      expect(approved.status).toBe(200);
      expect(approved.body).toMatchObject({
        id: Number(flagged.id),
        review: 'approved',
        counts: true,
        flags: ['maxCombo'],
      });
      // Accepted before p1's play: p0 now leads the chart, p1 moves to second.
      expect(await look(p[0], 450)).toMatchObject({ atp: 0.4, trackRank: 1 });
      expect(await look(p[1], 450)).toMatchObject({ atp: 0.4, trackRank: 2 });
      expect((await app.admin.get(`/admin/plays?state=flagged&uid=${p[0].uid}`)).body).toEqual({
        items: [],
        nextCursor: null,
      });
      expect((await app.admin.get(`/admin/plays?state=approved&uid=${p[0].uid}`)).body).toMatchObject({
        items: [{ id: Number(flagged.id) }],
      });
      // Approving again changes nothing; a play without a failed check cannot be approved.
      expect((await app.admin.post(`/admin/plays/${flagged.id}/approve`)).body).toMatchObject({ review: 'approved' });
      const clean = await lastRecord(p[1]);
      const refused = await app.admin.post(`/admin/plays/${clean.id}/approve`);
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual(badRequest(`Play ${clean.id} failed no check: there is nothing to approve`));
    });

    it("voids a play: its player's best and ATP go, the players behind move up; restore takes it back", async () => {
      expect(await upload(p[2], 450, { acc: 99 })).toMatchObject({ trackRank: 3 });
      const [best] = await app.sql<{ record_id: string }>(
        'SELECT record_id FROM player_chart_best WHERE uid = $1 AND level_id = 450',
        [p[0].uid],
      );

      const voided = await app.admin.post(`/admin/plays/${best.record_id}/void`, { reason: 'macro' });
      expect(voided.status).toBe(200);
      expect(voided.body).toMatchObject({ review: 'voided', voidReason: 'macro', counts: false });
      // p0 had one counted play: no best, no ATP, no ranks. p1 and p2 move up.
      expect(await look(p[0], 450)).toEqual({
        atp: 0,
        siteRank: null,
        trackRank: null,
        playRating: 0,
        personalBest: false,
      });
      expect(await app.sql('SELECT 1 FROM player_rating WHERE uid = $1', [p[0].uid])).toEqual([]);
      expect(await look(p[1], 450)).toMatchObject({ trackRank: 1 });
      expect(await look(p[2], 450)).toMatchObject({ trackRank: 2 });

      // Voiding again keeps the first reason; restore brings it back, first again (accepted first).
      expect((await app.admin.post(`/admin/plays/${best.record_id}/void`, { reason: 'other' })).body).toMatchObject({
        voidReason: 'macro',
      });
      const restored = await app.admin.post(`/admin/plays/${best.record_id}/restore`);
      expect(restored.body).toMatchObject({ review: 'approved', voidReason: null, counts: true });
      expect(await look(p[0], 450)).toMatchObject({ atp: 0.4, trackRank: 1 });
      expect(await look(p[1], 450)).toMatchObject({ trackRank: 2 });

      // A new counted play after losing every rank gets ranked again (versions keep growing).
      // No body at all: the same as {} (every field of the body is optional).
      expect((await app.admin.post(`/admin/plays/${best.record_id}/void`)).body).toMatchObject({
        review: 'voided',
        voidReason: null,
      });
      expect(await upload(p[0], 450, { acc: 98 })).toMatchObject({ trackRank: 3, personalBest: true });
      expect(await look(p[2], 450)).toMatchObject({ trackRank: 2 });

      // Every review action is in the audit log, with the admin credential and the request id.
      const audit = await app.sql<{
        action: string;
        summary: Record<string, unknown>;
        credential: string;
        request_id: string;
      }>('SELECT action, summary, credential, request_id FROM admin_audit WHERE target = $1 ORDER BY id', [
        `play:${best.record_id}`,
      ]);
      expect(audit.map((row) => row.action)).toEqual([
        'play.approve',
        'play.approve',
        'play.void',
        'play.void',
        'play.restore',
        'play.void',
      ]);
      expect(audit[2]).toEqual({
        action: 'play.void',
        summary: { uid: p[0].uid, levelId: 450, review: 'voided', reason: 'macro' },
        credential: 'admin',
        request_id: expect.any(String),
      });
    });

    it('shows one play with its judgement counts, combo, and when it was played and received', async () => {
      const time = nextTime();
      const payload = gameplayPayload(450, time, { acc: 100, maxCombo: 5_000, fullCombo: true });
      const response = await app.http.post('/player/upload', record(server, p[2], payload), {
        token: server.accessToken,
      });
      expect(response.status).toBe(200);
      const flagged = await lastRecord(p[2]);
      const shown = await app.admin.get(`/admin/plays/${flagged.id}`);
      const [stored] = await app.sql<{ received_at: Date }>('SELECT received_at FROM play_record WHERE id = $1', [
        flagged.id,
      ]);
      const local = (date: Date) =>
        `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}T${date.toTimeString().slice(0, 8)}`;
      expect(shown.body).toEqual({
        id: Number(flagged.id),
        uid: p[2].uid,
        username: expect.any(String),
        levelId: 450,
        acc: 100,
        pass: true,
        time,
        receivedAt: local(stored.received_at),
        serverID: server.serverID,
        flags: flagged.flags,
        review: 'flagged',
        voidReason: null,
        counts: false,
        judgements: {
          tap: payload.tapStats,
          hold: payload.holdStats,
          dodge: payload.dodgeStats,
          look: payload.lookStats,
        },
        maxCombo: 5_000,
        fullCombo: true,
        allPerfect: false,
        sentAt: local(new Date(time)),
        serverName: server.body.serverName,
      });
    });

    it('pages the listing by id, newest first', async () => {
      const all = await app.admin.get(`/admin/plays?state=all&uid=${p[0].uid}`);
      const ids = (all.body as { items: Array<{ id: number }> }).items.map((play) => play.id);
      expect(ids.length).toBeGreaterThan(3);
      expect([...ids].sort((a, b) => b - a)).toEqual(ids);
      const first = await app.admin.get<{ items: Array<{ id: number }>; nextCursor: string }>(
        `/admin/plays?state=all&uid=${p[0].uid}&limit=2`,
      );
      expect(first.body.items.map((play) => play.id)).toEqual(ids.slice(0, 2));
      const second = await app.admin.get<{ items: Array<{ id: number }> }>(
        `/admin/plays?state=all&uid=${p[0].uid}&limit=2&cursor=${first.body.nextCursor}`,
      );
      expect(second.body.items.map((play) => play.id)).toEqual(ids.slice(2, 4));
      expect((await app.admin.get(`/admin/plays/${ids[0]}`)).body).toMatchObject({ id: ids[0], uid: p[0].uid });
    });

    it.each([
      ['/admin/plays?state=pending', 'state must be one of flagged, approved, voided, all'],
      [
        '/admin/plays?check=combo',
        'check must be one of fullCombo, allPerfect, maxCombo, noteCount, perfectAccuracy, accuracy, time',
      ],
      ['/admin/plays?uid=abc', 'uid must be a positive integer'],
      ['/admin/plays?limit=201', 'limit must be an integer from 1 to 200'],
      ['/admin/plays?cursor=bm9wZTox', 'cursor must be the nextCursor of a previous page of this list'],
      ['/admin/plays?before=5', 'before: property before should not exist'],
      ['/admin/plays/0', 'id must be a positive integer'],
    ])('GET %s is 400', async (path, message) => {
      const response = await app.admin.get(path);
      expect(response.status).toBe(400);
      expect(response.body).toEqual(badLines(message));
    });

    it('answers 404 for an unknown play and 400 for a bad void reason, changing nothing', async () => {
      for (const action of ['approve', 'void', 'restore']) {
        const response = await app.admin.post(`/admin/plays/999999999/${action}`, {});
        expect(response.status).toBe(404);
        expect(response.body).toEqual({ error: 'NOT_FOUND', message: 'No play with id 999999999' });
      }
      const [play] = await app.sql<{ id: string }>(
        'SELECT id FROM play_record WHERE uid = $1 AND voided_at IS NULL LIMIT 1',
        [p[1].uid],
      );
      const bad = await app.admin.post(`/admin/plays/${play.id}/void`, { reason: 'x'.repeat(201) });
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual(badLines('reason must be shorter than or equal to 200 characters'));
      expect(await app.sql('SELECT voided_at FROM play_record WHERE id = $1', [play.id])).toEqual([
        { voided_at: null },
      ]);
    });

    it('needs the admin token', async () => {
      expect((await app.http.get('/admin/plays')).status).toBe(401);
      expect((await app.http.post('/admin/plays/1/void', {}, { token: server.accessToken })).status).toBe(401);
    });
  });
});

(multiInstanceAvailable() ? describe : describe.skip)('Score review on two instances', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    a = await startTestApp();
    b = await startTestApp({ shareWith: a });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('a void on one instance moves the ranks the other answers', async () => {
    await putCharts(a, [{ levelId: 460, constant: 10 }]);
    const serverA = await onlineServer(a);
    const serverB = await onlineServer(b);
    const first = await onlinePlayer(a, serverA);
    const second = await onlinePlayer(b, serverB);
    const send = (app: TestApp, s: TestServerSession, player: TestPlayerSession, overrides: Record<string, unknown>) =>
      app.http
        .post('/player/upload', record(s, player, gameplayPayload(460, nextTime(), overrides)), {
          token: s.accessToken,
        })
        .then((r) => r.body as Record<string, unknown>);
    expect(await send(a, serverA, first, { acc: 100 })).toMatchObject({ trackRank: 1 });
    expect(await send(b, serverB, second, { acc: 99 })).toMatchObject({ trackRank: 2 });
    const [best] = await a.sql<{ record_id: string }>('SELECT record_id FROM player_chart_best WHERE uid = $1', [
      first.uid,
    ]);
    expect((await a.admin.post(`/admin/plays/${best.record_id}/void`, {})).status).toBe(200);
    expect(await send(b, serverB, second, { acc: 10, pass: false })).toMatchObject({
      trackRank: 1,
      siteRank: expect.any(Number),
    });
    expect(await send(a, serverA, second.uid === first.uid ? first : first, { acc: 10, pass: false })).toMatchObject({
      trackRank: null,
      siteRank: null,
    });
  });
});
